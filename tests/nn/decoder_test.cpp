// DecoderLayer, Decoder and Transformer against PyTorch 1.13 (tests/fixtures/nn/decoder_layer.*, decoder.*,
// decoder_only.*, transformer.*, made by gen_decoder.py): outputs and the gradients of (output·R).sum() w.r.t.
// the inputs and every parameter, in f64 (1e-10) and f32 (1e-5); then the KV cache (incremental decoding
// equals the full run), finite differences, names and errors.
#include <doctest/doctest.h>

#include "autograd/gradcheck.h"
#include "nn/decoder.h"
#include "nn/embedding.h"
#include "nn/positional.h"
#include "nn/pytorch_case.h"
#include "nn/transformer.h"

using namespace tg;
using namespace tg::nn;
using tg::test::check_close;
using tg::test::fixture_mask;
using tg::test::fixture_tensor;

namespace {

DecoderLayerOptions fixture_layer_options(const nlohmann::json& c, DType dtype) {
  return {.d_model = 8, .num_heads = 2, .dim_feedforward = 16, .dropout = 0.0,
          .activation = c.value("activation", "relu") == "gelu" ? Activation::gelu : Activation::relu,
          .norm_first = c.value("norm_first", false), .batch_first = c.value("batch_first", true), .dtype = dtype};
}

// The case's target-side and memory-side masks as a DecoderCall.
DecoderCall fixture_call(const nlohmann::json& c, DType dtype) {
  return {.tgt_mask = fixture_mask(c, "tgt_mask", dtype),
          .tgt_key_padding_mask = fixture_mask(c, "tgt_key_padding_mask", dtype),
          .memory_mask = fixture_mask(c, "memory_mask", dtype),
          .memory_key_padding_mask = fixture_mask(c, "memory_key_padding_mask", dtype)};
}

// Runs a fixture case with inputs tgt and memory through `layer` and checks output and all gradients.
template <class L>
void check_decoder_case(L& layer, const nlohmann::json& file, const nlohmann::json& c) {
  const DType dtype = test::fixture_dtype(file);
  layer.load_state_dict(test::fixture_weights(file));
  Variable tgt(fixture_tensor(c["inputs"]["tgt"], dtype), true);
  Variable memory(fixture_tensor(c["inputs"]["memory"], dtype), true);
  Variable y = layer.forward(tgt, memory, fixture_call(c, dtype));
  test::check_fixture_case(layer, c, y, {{"tgt", tgt}, {"memory", memory}}, test::fixture_tolerance(dtype));
}

// PyTorch's GPT body (decoder_only.*): TransformerEncoder of pre-norm gelu layers and a final norm.
DecoderOptions gpt_options(DType dtype, int64_t d_model = 8, int64_t num_layers = 2) {
  return {.layer = {.d_model = d_model, .num_heads = 2, .dim_feedforward = 2 * d_model, .dropout = 0.0,
                    .activation = Activation::gelu, .norm_first = true, .cross_attention = false, .dtype = dtype},
          .num_layers = num_layers, .final_norm = true};
}

}  // namespace

TEST_CASE("DecoderLayer matches PyTorch: post/pre-norm x relu/gelu, causal and padding masks, seq-first") {
  for (const char* dt : {"f64", "f32"}) {
    const nlohmann::json file = test::load_fixture(std::string("nn/decoder_layer.") + dt + ".json");
    CHECK(file["cases"].size() == 7);
    for (const nlohmann::json& c : file["cases"]) {
      CAPTURE(dt);
      CAPTURE(c["name"].get<std::string>());
      DecoderLayer layer(fixture_layer_options(c, test::fixture_dtype(file)));
      check_decoder_case(layer, file, c);
    }
  }
}

TEST_CASE("DecoderLayer's tgt_is_causal is PyTorch's causal tgt_mask") {
  const nlohmann::json file = test::load_fixture("nn/decoder_layer.f64.json");
  const nlohmann::json c = test::find_case(file, "pre_norm_gelu");
  DecoderLayer layer(fixture_layer_options(c, f64));
  layer.load_state_dict(test::fixture_weights(file));
  DecoderCall call = fixture_call(c, f64);
  call.tgt_mask = Tensor();
  call.tgt_is_causal = true;
  Variable y = layer.forward(Variable(fixture_tensor(c["inputs"]["tgt"], f64)),
                             Variable(fixture_tensor(c["inputs"]["memory"], f64)), call);
  check_close(y.value(), fixture_tensor(c["outputs"]["output"], f64), 1e-12, "output");
}

TEST_CASE("Decoder of two post-norm layers and a final norm matches PyTorch's TransformerDecoder") {
  for (const char* dt : {"f64", "f32"}) {
    CAPTURE(dt);
    const nlohmann::json file = test::load_fixture(std::string("nn/decoder.") + dt + ".json");
    const nlohmann::json& c = file["cases"][0];
    Decoder decoder({.layer = fixture_layer_options(c, test::fixture_dtype(file)), .num_layers = 2,
                     .final_norm = true});
    check_decoder_case(decoder, file, c);
  }
}

TEST_CASE("A decoder-only Decoder loads PyTorch's causal TransformerEncoder (the GPT body) and matches it") {
  for (const char* dt : {"f64", "f32"}) {
    const nlohmann::json file = test::load_fixture(std::string("nn/decoder_only.") + dt + ".json");
    const DType dtype = test::fixture_dtype(file);
    for (const nlohmann::json& c : file["cases"]) {
      CAPTURE(dt);
      CAPTURE(c["name"].get<std::string>());
      Decoder decoder(gpt_options(dtype));
      decoder.load_state_dict(test::fixture_weights(file));  // strict: the same names
      Variable x(fixture_tensor(c["inputs"]["x"], dtype), true);
      Variable y = decoder.forward(x, {}, {.tgt_key_padding_mask = fixture_mask(c, "src_key_padding_mask", dtype),
                                           .tgt_is_causal = true});
      test::check_fixture_case(decoder, c, y, {{"x", x}}, test::fixture_tolerance(dtype));
    }
  }
}

TEST_CASE("Transformer matches PyTorch's nn.Transformer, one encoder and two decoder layers") {
  for (const char* dt : {"f64", "f32"}) {
    CAPTURE(dt);
    const nlohmann::json file = test::load_fixture(std::string("nn/transformer.") + dt + ".json");
    const DType dtype = test::fixture_dtype(file);
    const nlohmann::json& c = file["cases"][0];
    Transformer model({.d_model = 8, .num_heads = 2, .num_encoder_layers = 1, .num_decoder_layers = 2,
                       .dim_feedforward = 16, .dropout = 0.0, .dtype = dtype});
    model.load_state_dict(test::fixture_weights(file));
    Variable src(fixture_tensor(c["inputs"]["src"], dtype), true), tgt(fixture_tensor(c["inputs"]["tgt"], dtype), true);
    const TransformerCall call{.tgt_mask = fixture_mask(c, "tgt_mask", dtype),
                               .src_key_padding_mask = fixture_mask(c, "src_key_padding_mask", dtype),
                               .memory_key_padding_mask = fixture_mask(c, "memory_key_padding_mask", dtype)};
    Variable y = model.forward(src, tgt, call);
    test::check_fixture_case(model, c, y, {{"src", src}, {"tgt", tgt}}, test::fixture_tolerance(dtype));
  }
}

TEST_CASE("DecoderLayer names its parameters as PyTorch; without cross-attention as TransformerEncoderLayer") {
  DecoderLayer full({.d_model = 8, .num_heads = 2, .dim_feedforward = 16});
  std::vector<std::string> names;
  for (const auto& [name, p] : full.named_parameters()) names.push_back(name);
  CHECK(names == std::vector<std::string>{
                     "self_attn.in_proj_weight", "self_attn.in_proj_bias", "self_attn.out_proj.weight",
                     "self_attn.out_proj.bias", "multihead_attn.in_proj_weight", "multihead_attn.in_proj_bias",
                     "multihead_attn.out_proj.weight", "multihead_attn.out_proj.bias", "linear1.weight",
                     "linear1.bias", "linear2.weight", "linear2.bias", "norm1.weight", "norm1.bias", "norm2.weight",
                     "norm2.bias", "norm3.weight", "norm3.bias"});
  DecoderLayer gpt_block({.d_model = 8, .num_heads = 2, .dim_feedforward = 16, .cross_attention = false});
  EncoderLayer encoder_layer({.d_model = 8, .num_heads = 2, .dim_feedforward = 16});
  std::vector<std::string> gpt_names, encoder_names;
  for (const auto& [name, p] : gpt_block.named_parameters()) gpt_names.push_back(name);
  for (const auto& [name, p] : encoder_layer.named_parameters()) encoder_names.push_back(name);
  CHECK(gpt_names == encoder_names);
}

TEST_CASE("DecoderLayer's sub-layer accessors are its named parameters; the cross-attention ones throw without it") {
  DecoderLayer full({.d_model = 8, .num_heads = 2, .dim_feedforward = 16});
  const TensorMap sd = full.state_dict();
  CHECK(full.multihead_attn().in_proj_weight().value().storage() == sd.at("multihead_attn.in_proj_weight").storage());
  CHECK(full.linear2().weight().value().storage() == sd.at("linear2.weight").storage());
  CHECK(full.norm3().bias().value().storage() == sd.at("norm3.bias").storage());
  DecoderLayer gpt_block({.d_model = 8, .num_heads = 2, .dim_feedforward = 16, .cross_attention = false});
  CHECK_THROWS_WITH_AS(gpt_block.multihead_attn(), "DecoderLayer: multihead_attn: the layer has no cross-attention",
                       ValueError);
  CHECK_THROWS_WITH_AS(gpt_block.norm3(), "DecoderLayer: norm3: the layer has no cross-attention", ValueError);
}

TEST_CASE("Decoding one token at a time with the KV cache gives the full run's logits (tied GPT, f64 and f32)") {
  for (DType dtype : {f64, f32}) {
    CAPTURE(dtype);
    manual_seed(7);
    const int64_t V = 11, D = 8, N = 9;
    Embedding wte({.num_embeddings = V, .embedding_dim = D, .dtype = dtype});
    LearnedPositionalEncoding wpe({.d_model = D, .max_len = 16, .std = 0.02, .dtype = dtype});
    Decoder body(gpt_options(dtype, D, 3));
    body.eval();
    auto logits = [&](const Tensor& tokens, int64_t start, std::span<KVCache> cache) {  // (B, t) -> (B, t, V)
      return wte.attend(body.forward(wpe.forward(wte(tokens), start), {}, {.tgt_is_causal = true, .cache = cache}));
    };
    const Tensor tokens = randint(0, V, {2, N});
    std::vector<KVCache> cache(3);
    NoGradGuard no_grad;
    Variable prefix = logits(tokens.slice(1, 0, 3), 0, cache);  // a 3-token prompt, then one token per call
    for (int64_t t = 3; t <= N; ++t) {
      CAPTURE(t);
      const Variable full = logits(tokens.slice(1, 0, t), 0, {});  // (B, t, V), recomputed from scratch
      const Tensor last = t == 3 ? prefix.value().select(1, 2) : prefix.value().select(1, 0);
      check_close(last, full.value().select(1, t - 1), dtype == f64 ? 1e-12 : 1e-5, "last-position logits");
      CHECK(cache[2].length() == t);
      if (t < N) prefix = logits(tokens.slice(1, t, t + 1), t, cache);
    }
    CHECK(cache[0].keys.shape() == Shape{2, 2, N, 4});
  }
}

TEST_CASE("Without gradients the KV cache grows in place, doubling its buffers, and keeps earlier views") {
  manual_seed(9);
  MultiHeadAttention mha({.d_model = 8, .num_heads = 2, .dropout = 0.0, .dtype = f64});
  const int64_t N = 40;  // past the buffers' first two capacities, 16 and 32
  const Tensor x = randn({2, N, 8}, f64);
  const Variable full = mha.forward(Variable(x), Variable(x), Variable(x), {.is_causal = true, .need_weights = false})
                            .output;
  KVCache cache;
  NoGradGuard no_grad;
  Tensor keys_at_10, first_keys_at_10;
  int64_t capacity = 0, grown = 0;
  for (int64_t t = 0; t < N; ++t) {
    CAPTURE(t);
    const Variable xt(x.slice(1, t, t + 1));
    const Variable step = mha.forward(xt, xt, xt, {.is_causal = true, .need_weights = false, .cache = &cache}).output;
    check_close(step.value(), full.value().slice(1, t, t + 1), 1e-12, "position t");
    REQUIRE(cache.length() == t + 1);
    CHECK(cache.keys.value().storage() == cache.key_buffer.storage());
    CHECK(cache.values.value().storage() == cache.value_buffer.storage());
    grown += cache.key_buffer.size(2) != capacity;
    capacity = cache.key_buffer.size(2);
    CHECK(capacity == (t < 16 ? 16 : t < 32 ? 32 : 64));
    if (t == 9) keys_at_10 = cache.keys.value(), first_keys_at_10 = cache.keys.value().clone();
  }
  CHECK(grown == 3);
  check_close(keys_at_10, first_keys_at_10, 0.0, "a view handed out at T = 10, after 30 more appends");
  cache.clear();
  CHECK((!cache.keys && !cache.values && !cache.key_buffer.defined() && !cache.value_buffer.defined()));
}

TEST_CASE("A KV cache filled without gradients, then extended with them, joins by cat and gives gradients") {
  manual_seed(10);
  MultiHeadAttention mha({.d_model = 8, .num_heads = 2, .dropout = 0.0, .dtype = f64});
  const Tensor x = randn({1, 5, 8}, f64);
  KVCache cache;
  {
    NoGradGuard no_grad;
    const Variable prompt(x.slice(1, 0, 4));
    mha.forward(prompt, prompt, prompt, {.is_causal = true, .need_weights = false, .cache = &cache});
  }
  REQUIRE(cache.key_buffer.defined());
  const Variable last(x.slice(1, 4, 5), true);
  const Variable out = mha.forward(last, last, last, {.is_causal = true, .need_weights = false, .cache = &cache}).output;
  CHECK(!cache.key_buffer.defined());
  CHECK(cache.keys.requires_grad());
  const Variable full = mha.forward(Variable(x), Variable(x), Variable(x), {.is_causal = true, .need_weights = false})
                            .output;
  check_close(out.value(), full.value().slice(1, 4, 5), 1e-12, "the last position");
  sum(out).backward();
  REQUIRE(last.grad().defined());
  CHECK(mha.in_proj_weight().grad().defined());
}

TEST_CASE("The KV cache of a decoder with cross-attention and padding gives the full run's output") {
  manual_seed(8);
  Decoder decoder({.layer = {.d_model = 8, .num_heads = 2, .dim_feedforward = 16, .dropout = 0.0,
                             .norm_first = false, .dtype = f64},
                   .num_layers = 2});
  const Tensor x = randn({2, 6, 8}, f64), memory = randn({2, 5, 8}, f64);
  const Tensor memory_kpm = tensor({0, 0, 0, 1, 1, 0, 0, 0, 0, 0}, {2, 5}, boolean);
  const Tensor tgt_kpm = tensor({0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, {2, 6}, boolean);  // batch 0 pads position 1
  const Variable full = decoder.forward(Variable(x), Variable(memory), {.tgt_key_padding_mask = tgt_kpm,
                                        .tgt_is_causal = true, .memory_key_padding_mask = memory_kpm});
  std::vector<KVCache> cache(2);
  for (int64_t t = 0; t < 6; ++t) {
    CAPTURE(t);
    const Variable step = decoder.forward(Variable(x.slice(1, t, t + 1)), Variable(memory),
                                          {.tgt_key_padding_mask = tgt_kpm.slice(1, 0, t + 1), .tgt_is_causal = true,
                                           .memory_key_padding_mask = memory_kpm, .cache = cache});
    check_close(step.value(), full.value().slice(1, t, t + 1), 1e-12, "position t");
  }
}

TEST_CASE("DecoderLayer passes f64 finite differences with cross-attention and causal masks, tiny sizes") {
  const Tensor tgt_kpm = tensor({0, 0, 1, 0, 0, 0}, {2, 3}, boolean), mem_kpm = tensor({0, 1, 0, 0}, {2, 2}, boolean);
  for (bool norm_first : {false, true}) {
    CAPTURE(norm_first);
    manual_seed(4);
    DecoderLayer layer({.d_model = 4, .num_heads = 2, .dim_feedforward = 6, .dropout = 0.0,
                        .activation = norm_first ? Activation::relu : Activation::gelu, .norm_first = norm_first,
                        .dtype = f64});
    std::vector<Variable> inputs{Variable(randn({2, 3, 4}, f64), true), Variable(randn({2, 2, 4}, f64), true)};
    for (const Variable& p : layer.parameters()) inputs.push_back(p);
    CHECK(gradcheck(
        [&](const std::vector<Variable>& x) {
          return layer.forward(x[0], x[1], {.tgt_key_padding_mask = tgt_kpm, .tgt_is_causal = true,
                                            .memory_key_padding_mask = mem_kpm});
        },
        inputs));
  }
}

TEST_CASE("DecoderLayer and Decoder refuse memory they cannot use, missing memory and a wrong cache") {
  DecoderLayer full({.d_model = 8, .num_heads = 2, .dim_feedforward = 16});
  DecoderLayer gpt_block({.d_model = 8, .num_heads = 2, .dim_feedforward = 16, .cross_attention = false});
  const Variable x(randn({2, 3, 8}));
  CHECK_THROWS_WITH_AS(full.forward(x), doctest::Contains("cross-attention needs the encoder's memory"), ValueError);
  CHECK_THROWS_WITH_AS(gpt_block.forward(x, x), doctest::Contains("takes no memory"), ValueError);
  CHECK_THROWS_WITH_AS(gpt_block.forward(x, {}, {.memory_key_padding_mask = zeros({2, 3}, boolean)}),
                       doctest::Contains("takes no memory"), ValueError);
  std::vector<KVCache> two(2);
  CHECK_THROWS_WITH_AS(gpt_block.forward(x, {}, {.cache = two}), doctest::Contains("must be one KVCache, got 2"),
                       ValueError);
  Decoder decoder({.layer = {.d_model = 8, .num_heads = 2, .dim_feedforward = 16, .cross_attention = false},
                   .num_layers = 3});
  CHECK_THROWS_WITH_AS(decoder.forward(x, {}, {.cache = two}),
                       doctest::Contains("one KVCache per layer (3), got 2"), ValueError);
  CHECK_THROWS_WITH_AS(Decoder({.layer = {.d_model = 8, .num_heads = 2}, .num_layers = 0}),
                       doctest::Contains("num_layers must be positive, got 0"), ValueError);
  CHECK_THROWS_WITH_AS(DecoderLayer({.d_model = 8, .num_heads = 2, .layer_norm_eps = 0}),
                       doctest::Contains("layer_norm_eps must be positive, got 0"), ValueError);
}

TEST_CASE("MultiHeadAttention refuses a KV cache of another shape, naming both") {
  MultiHeadAttention mha({.d_model = 8, .num_heads = 2});
  const Variable x(randn({2, 1, 8}));
  KVCache cache{.keys = Variable(randn({2, 2, 3, 4})), .values = Variable(randn({2, 2, 3, 3}))};
  CHECK_THROWS_WITH_AS(mha.forward(x, x, x, {.cache = &cache}),
                       doctest::Contains("keys (2, 2, 3, 4) and values (2, 2, 3, 3) must both be (B, H, T, d_k) = "
                                         "(2, 2, 3, 4)"),
                       ShapeError);
  KVCache good{.keys = Variable(randn({2, 2, 3, 4})), .values = Variable(randn({2, 2, 3, 4}))};
  CHECK_THROWS_WITH_AS(mha.forward(x, x, x, {.key_padding_mask = zeros({2, 1}, boolean), .cache = &good}),
                       doctest::Contains("key_padding_mask (2, 1) for key (2, 1, 8): expected (2, 4)"), ShapeError);
}

TEST_CASE("A tied output projection shares the embedding's one parameter and sums both gradients") {
  manual_seed(3);
  Embedding wte({.num_embeddings = 5, .embedding_dim = 4, .dtype = f64});
  CHECK(wte.named_parameters().size() == 1);
  const Tensor ids = index_tensor({1, 3, 3}, {3});
  Variable logits = wte.attend(wte(ids));  // (3, 5): e_i · e_v
  check_close(logits.value(), matmul(index_select(wte.weight().value(), 0, ids), wte.weight().value().mT()), 1e-15,
              "logits");
  sum(logits).backward();
  // d/dW of Σ_iv e_{id_i}·e_v: Σ_i e_{id_i} for every row v, plus Σ_v e_v for each looked-up row.
  const Tensor W = wte.weight().value();
  Tensor want = sum(index_select(W, 0, ids), {0}, true).expand({5, 4}).contiguous();
  want = add(want, mul(index_tensor({0, 1, 0, 2, 0}, {5, 1}).to(f64), sum(W, {0}, true)));
  check_close(wte.weight().grad(), want, 1e-12, "grad of the tied weight");
  CHECK_THROWS_WITH_AS(wte.attend(Variable(randn({2, 3}, f64))), doctest::Contains("x must be (..., 4), got (2, 3)"),
                       ShapeError);
}
