// EncoderLayer and Encoder against PyTorch 1.13's TransformerEncoderLayer / TransformerEncoder
// (tests/fixtures/nn/encoder_layer.*, encoder.*): outputs and the gradients of (output·R).sum() w.r.t. the
// input and every parameter, post/pre-norm × relu/gelu, in f64 (1e-10) and f32 (1e-5); then attention
// weights, finite differences, train/eval and errors.
#include <doctest/doctest.h>

#include "autograd/gradcheck.h"
#include "nn/encoder.h"
#include "nn/pytorch_case.h"

using namespace tg;
using namespace tg::nn;
using tg::test::check_close;
using tg::test::fixture_tensor;

namespace {

EncoderLayerOptions fixture_layer_options(const nlohmann::json& c, DType dtype) {
  return {.d_model = 8, .num_heads = 2, .dim_feedforward = 16, .dropout = 0.0,
          .activation = c.value("activation", "relu") == "gelu" ? Activation::gelu : Activation::relu,
          .norm_first = c.value("norm_first", false), .dtype = dtype};
}

// Runs a fixture case through `layer` (forward(x, call) with the case's padding mask) and checks the output,
// the input gradient and every parameter gradient.
template <class L>
void check_case(L& layer, const nlohmann::json& file, const nlohmann::json& c) {
  const DType dtype = test::fixture_dtype(file);
  layer.load_state_dict(test::fixture_weights(file));
  Variable x(fixture_tensor(c["inputs"]["x"], dtype), true);
  Variable y = layer.forward(x, {.key_padding_mask = test::fixture_mask(c, "src_key_padding_mask", dtype)});
  test::check_fixture_case(layer, c, y, {{"x", x}}, test::fixture_tolerance(dtype));
}

}  // namespace

TEST_CASE("EncoderLayer matches PyTorch, post/pre-norm x relu/gelu, with and without a padding mask") {
  for (const char* dt : {"f64", "f32"}) {
    const nlohmann::json file = test::load_fixture(std::string("nn/encoder_layer.") + dt + ".json");
    for (const nlohmann::json& c : file["cases"]) {
      CAPTURE(dt);
      CAPTURE(c["name"].get<std::string>());
      EncoderLayer layer(fixture_layer_options(c, test::fixture_dtype(file)));
      check_case(layer, file, c);
    }
  }
}

TEST_CASE("Encoder of two post-norm layers and a final norm matches PyTorch") {
  for (const char* dt : {"f64", "f32"}) {
    CAPTURE(dt);
    const nlohmann::json file = test::load_fixture(std::string("nn/encoder.") + dt + ".json");
    const nlohmann::json& c = file["cases"][0];
    Encoder encoder({.layer = fixture_layer_options(c, test::fixture_dtype(file)), .num_layers = 2,
                     .final_norm = true});
    check_case(encoder, file, c);
  }
}

TEST_CASE("EncoderLayer's sub-layer accessors are its named parameters") {
  EncoderLayer layer({.d_model = 8, .num_heads = 2, .dim_feedforward = 16});
  const TensorMap sd = layer.state_dict();
  CHECK(layer.self_attn().in_proj_bias().value().storage() == sd.at("self_attn.in_proj_bias").storage());
  CHECK(layer.linear1().weight().value().storage() == sd.at("linear1.weight").storage());
  CHECK(layer.linear2().bias().value().storage() == sd.at("linear2.bias").storage());
  CHECK(layer.norm1().weight().value().storage() == sd.at("norm1.weight").storage());
  CHECK(layer.norm2().bias().value().storage() == sd.at("norm2.bias").storage());
}

TEST_CASE("Encoder names its parameters as PyTorch's TransformerEncoder") {
  Encoder encoder({.layer = {.d_model = 8, .num_heads = 2, .dim_feedforward = 16}, .num_layers = 2,
                   .final_norm = true});
  const auto params = encoder.named_parameters();
  CHECK(params.size() == 26);
  CHECK(params.front().first == "layers.0.self_attn.in_proj_weight");
  CHECK(params[12].first == "layers.1.self_attn.in_proj_weight");
  CHECK(params.back().first == "norm.bias");
  EncoderLayer layer({.d_model = 8, .num_heads = 2, .dim_feedforward = 16});
  std::vector<std::string> names;
  for (const auto& [name, p] : layer.named_parameters()) names.push_back(name);
  CHECK(names == std::vector<std::string>{"self_attn.in_proj_weight", "self_attn.in_proj_bias",
                                          "self_attn.out_proj.weight", "self_attn.out_proj.bias", "linear1.weight",
                                          "linear1.bias", "linear2.weight", "linear2.bias", "norm1.weight",
                                          "norm1.bias", "norm2.weight", "norm2.bias"});
}

TEST_CASE("Encoder forward_with_attention gives the same output and every layer's per-head weights") {
  const nlohmann::json file = test::load_fixture("nn/encoder.f64.json");
  const nlohmann::json& c = file["cases"][0];
  Encoder encoder({.layer = fixture_layer_options(c, f64), .num_layers = 2, .final_norm = true});
  encoder.load_state_dict(test::fixture_weights(file));
  const Tensor kpm = test::fixture_mask(c, "src_key_padding_mask", f64);  // batch 0 pads keys 3 and 4
  EncoderOutput out = encoder.forward_with_attention(Variable(fixture_tensor(c["inputs"]["x"], f64)),
                                                     {.key_padding_mask = kpm});
  check_close(out.output.value(), fixture_tensor(c["outputs"]["output"], f64), 1e-10, "output");
  REQUIRE(out.attention.size() == 2);
  for (const Variable& w : out.attention) {
    CHECK(w.shape() == Shape{2, 2, 5, 5});
    CHECK(test::max_abs_diff(sum(w.value(), {-1}), ones({2, 2, 5}, f64)) < 1e-12);
    CHECK(amax(abs(w.value().select(0, 0).slice(-1, 3, 5))).item() == 0);  // padded keys get nothing
  }
}

TEST_CASE("EncoderLayer with is_causal attends to no later position") {
  EncoderLayer layer({.d_model = 8, .num_heads = 2, .dim_feedforward = 16, .norm_first = true});
  AttentionOutput out = layer.forward_with_attention(Variable(randn({2, 4, 8})), {.is_causal = true});
  const Tensor later = gt(arange(0, 4).unsqueeze(0), arange(0, 4).unsqueeze(1));  // key j > query i
  CHECK(amax(abs(masked_fill(out.weights.value(), logical_not(later), 0.0))).item() == 0);
}

TEST_CASE("EncoderLayer passes f64 finite differences with a key padding mask, tiny sizes") {
  const Tensor kpm = tensor({0, 0, 1, 0, 0, 0}, {2, 3}, boolean);
  for (bool norm_first : {false, true}) {
    CAPTURE(norm_first);
    manual_seed(4);
    EncoderLayer layer({.d_model = 4, .num_heads = 2, .dim_feedforward = 6, .dropout = 0.0,
                        .activation = norm_first ? Activation::relu : Activation::gelu, .norm_first = norm_first,
                        .dtype = f64});
    std::vector<Variable> inputs{Variable(randn({2, 3, 4}, f64), true)};
    for (const Variable& p : layer.parameters()) inputs.push_back(p);
    CHECK(gradcheck([&](const std::vector<Variable>& x) { return layer.forward(x[0], {.key_padding_mask = kpm}); },
                    inputs));
  }
}

TEST_CASE("EncoderLayer dropout follows train() and eval()") {
  EncoderLayer layer({.d_model = 8, .num_heads = 2, .dim_feedforward = 16, .dropout = 0.5});
  Variable x(randn({2, 5, 8}));
  layer.eval();
  const Tensor a = layer(x).value();
  CHECK(test::max_abs_diff(a, layer(x).value()) == 0);
  layer.train();
  CHECK(test::max_abs_diff(a, layer(x).value()) > 1e-3);
}

TEST_CASE("EncoderLayer and Encoder refuse bad options, naming the value") {
  CHECK_THROWS_WITH_AS(EncoderLayer({.d_model = 10, .num_heads = 4}),
                       doctest::Contains("d_model 10 is not divisible by num_heads 4"), ValueError);
  CHECK_THROWS_WITH_AS(EncoderLayer({.d_model = 8, .num_heads = 2, .dim_feedforward = 0}),
                       doctest::Contains("dim_feedforward must be positive, got 0"), ValueError);
  CHECK_THROWS_WITH_AS(Encoder({.layer = {.d_model = 8, .num_heads = 2}, .num_layers = 0}),
                       doctest::Contains("num_layers must be positive, got 0"), ValueError);
  EncoderLayer layer({.d_model = 8, .num_heads = 2, .dim_feedforward = 16});
  CHECK_THROWS_WITH_AS(layer.forward(Variable(randn({2, 5, 8})), {.key_padding_mask = zeros({2, 4}, boolean)}),
                       doctest::Contains("key_padding_mask (2, 4) for key (2, 5, 8)"), ShapeError);
}
