// Tests for the sentiment classifier's forward pass: output shapes, attention shapes, input checks,
// that padding a sentence (to batch it with a longer one) does not change its logits, and sub-words.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "batch.h"
#include "model.h"

using namespace sentiment;

namespace {

ModelConfig tiny(Pooling pooling = Pooling::mean, bool norm_first = false) {
  return {.vocab_size = 20, .max_len = 8, .d_model = 8, .num_heads = 2, .num_layers = 2, .dim_feedforward = 16,
          .dropout = 0.1, .activation = Activation::relu, .norm_first = norm_first, .pooling = pooling, .num_classes = 2};
}

double max_abs_diff(const tg::Tensor& a, const tg::Tensor& b) {
  std::vector<double> x = a.to_vector<double>(), y = b.to_vector<double>();
  REQUIRE(x.size() == y.size());
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) worst = std::max(worst, std::abs(x[i] - y[i]));
  return worst;
}

}  // namespace

TEST_CASE("Classifier maps (B, S) tokens to (B, num_classes) logits, and gives (B, H, S, S) attention per layer") {
  tg::manual_seed(0);
  ModelConfig c = tiny();
  c.num_classes = 3;
  Classifier model(c);
  model.eval();
  tg::NoGradGuard no_grad;
  Batch b = make_batch({{{2, 3, 4, 5}, 0}, {{6, 7}, 1}, {{8}, 2}}, {0, 1, 2});
  tg::Variable logits = model.forward(b.tokens, b.pad_mask);
  CHECK(logits.shape() == tg::Shape{3, 3});
  CHECK(logits.dtype() == tg::f32);
  CHECK(tg::all_finite(logits.value()));
  std::vector<tg::Variable> attn = model.attention(b.tokens, b.pad_mask);
  REQUIRE(attn.size() == 2);
  for (const tg::Variable& a : attn) CHECK(a.shape() == tg::Shape{3, 2, 4, 4});
}

TEST_CASE("Classifier parameters carry PyTorch-style dotted names") {
  Classifier model(tiny(Pooling::mean, true));
  std::vector<std::string> names;
  for (const auto& [name, p] : model.named_parameters()) names.push_back(name);
  auto has = [&](const std::string& n) { return std::find(names.begin(), names.end(), n) != names.end(); };
  CHECK(has("token_embedding.weight"));
  CHECK(has("position_embedding.weight"));
  CHECK(has("encoder.layers.1.self_attn.in_proj_weight"));
  CHECK(has("encoder.layers.0.linear2.bias"));
  CHECK(has("encoder.norm.weight"));  // the final norm of a pre-norm stack
  CHECK(has("classifier.weight"));
}

TEST_CASE("Classifier rejects tokens and masks of different shapes, and sentences longer than max_len") {
  Classifier model(tiny());
  tg::NoGradGuard no_grad;
  Batch b = make_batch({{{2, 3}, 0}}, {0});
  CHECK_THROWS_WITH_AS(model.forward(b.tokens, tg::zeros({1, 3}, tg::boolean)), doctest::Contains("(1, 2)"),
                       tg::ShapeError);
  Batch long_one = make_batch({{std::vector<int64_t>(9, 2), 0}}, {0});
  CHECK_THROWS_WITH_AS(model.forward(long_one.tokens, long_one.pad_mask),
                       doctest::Contains("9 tokens exceed max_len 8"), tg::ValueError);
}

TEST_CASE("padding does not change a sentence's logits in eval mode (each pooling, post- and pre-norm)") {
  const std::vector<Encoded> data = {{{4, 9, 3}, 1}, {{2, 5, 7, 11, 13, 6, 8}, 0}, {{17}, 0}};
  for (Pooling pooling : {Pooling::mean, Pooling::max, Pooling::mean_max}) {
    for (bool norm_first : {false, true}) {
      CAPTURE(pooling);
      CAPTURE(norm_first);
      tg::manual_seed(1);
      Classifier model(tiny(pooling, norm_first));
      model.eval();
      tg::NoGradGuard no_grad;
      Batch alone = make_batch(data, {0}), padded = make_batch(data, {1, 0, 2});
      REQUIRE(padded.tokens.shape() == tg::Shape{3, 7});
      tg::Tensor a = model.forward(alone.tokens, alone.pad_mask).value();    // (1, 2)
      tg::Tensor p = model.forward(padded.tokens, padded.pad_mask).value();  // (3, 2), row 1 is sentence 0
      CHECK(max_abs_diff(a, p.slice(0, 1, 2)) <= 1e-5);
      tg::Tensor short_alone = model.forward(make_batch(data, {2}).tokens, make_batch(data, {2}).pad_mask).value();
      CHECK(max_abs_diff(short_alone, p.slice(0, 2, 3)) <= 1e-5);
    }
  }
}

TEST_CASE("eval mode is deterministic; train mode applies dropout") {
  tg::manual_seed(2);
  Classifier model(tiny());
  tg::NoGradGuard no_grad;
  Batch b = make_batch({{{2, 3, 4, 5, 6}, 0}, {{7, 8}, 1}}, {0, 1});
  model.eval();
  tg::Tensor e1 = model.forward(b.tokens, b.pad_mask).value(), e2 = model.forward(b.tokens, b.pad_mask).value();
  CHECK(e1.to_vector<float>() == e2.to_vector<float>());
  model.train();
  CHECK(max_abs_diff(model.forward(b.tokens, b.pad_mask).value(), e1) > 0);
}

TEST_CASE("embedding_std scales the initial token and position embeddings (N(0, 1) by default, as PyTorch)") {
  auto weights = [](const ModelConfig& c, const std::string& name) {
    tg::manual_seed(3);
    Classifier model(c);
    for (const auto& [n, p] : model.named_parameters())
      if (n == name) return p.value().to_vector<double>();
    FAIL("no parameter " << name);
    return std::vector<double>{};
  };
  for (const char* name : {"token_embedding.weight", "position_embedding.weight"}) {
    CAPTURE(name);
    ModelConfig c = tiny();
    std::vector<double> unit = weights(c, name);
    c.embedding_std = 0.25;
    std::vector<double> small = weights(c, name);
    REQUIRE(small.size() == unit.size());
    for (size_t i = 0; i < unit.size(); ++i) CHECK(small[i] == doctest::Approx(0.25 * unit[i]).epsilon(1e-6));
  }
  ModelConfig c = tiny();
  c.embedding_std = 0;
  CHECK_THROWS_WITH_AS(Classifier{c}, doctest::Contains("model: embedding_std must be finite and > 0, got 0"),
                       tg::ValueError);
}

TEST_CASE("embedding_norm: a LayerNorm over each token's input, so the embeddings' scale leaves the logits") {
  const tg::Tensor tokens = tg::index_tensor({1, 5, 7, 2, 3, 0}, {2, 3});
  const tg::Tensor pad = tg::eq(tokens, 0.0);  // (B, S), true at padding
  auto logits = [&](bool norm, double embedding_scale) {
    tg::manual_seed(9);
    ModelConfig c = tiny();
    c.embedding_norm = norm;
    Classifier model(c);
    model.eval();
    for (const auto& [n, p] : model.named_parameters())
      if (n.find("embedding.weight") != std::string::npos) {
        tg::Tensor w = p.value();  // shares the parameter's storage
        w.mul_(embedding_scale);
      }
    tg::NoGradGuard no_grad;
    return model.forward(tokens, pad).value();
  };
  tg::manual_seed(9);
  ModelConfig c = tiny();
  c.embedding_norm = true;
  Classifier model(c);
  std::vector<std::string> names;
  for (const auto& [n, p] : model.named_parameters()) names.push_back(n);
  CHECK(std::count(names.begin(), names.end(), "embedding_norm.weight") == 1);
  CHECK(std::count(names.begin(), names.end(), "embedding_norm.bias") == 1);
  CHECK(max_abs_diff(logits(true, 1), logits(true, 7)) < 1e-4);   // LayerNorm takes the scale out
  CHECK(max_abs_diff(logits(false, 1), logits(false, 7)) > 1e-2);  // without it, the encoder sees it
}

TEST_CASE("qk_init_scale scales every layer's initial query and key weights, not the values, nor the draws") {
  auto in_proj = [](const ModelConfig& c, int layer) {
    tg::manual_seed(5);
    Classifier model(c);
    const std::string name = fmt::format("encoder.layers.{}.self_attn.in_proj_weight", layer);
    for (const auto& [n, p] : model.named_parameters())
      if (n == name) return p.value().to_vector<double>();  // (3D, D): rows q, k, v
    FAIL("no parameter " << name);
    return std::vector<double>{};
  };
  ModelConfig c = tiny();
  for (int layer : {0, 1}) {
    CAPTURE(layer);
    c.qk_init_scale = 1;
    std::vector<double> plain = in_proj(c, layer);
    c.qk_init_scale = 2.5;
    std::vector<double> scaled = in_proj(c, layer);
    REQUIRE(scaled.size() == plain.size());
    const size_t qk = size_t(2 * c.d_model * c.d_model);  // the first 2D rows of D
    for (size_t i = 0; i < plain.size(); ++i) CHECK(scaled[i] == doctest::Approx((i < qk ? 2.5 : 1.0) * plain[i]));
  }
  c.qk_init_scale = -1;
  CHECK_THROWS_WITH_AS(Classifier{c}, doctest::Contains("model: qk_init_scale must be finite and > 0, got -1"),
                       tg::ValueError);
}

TEST_CASE("an ensemble names its members' parameters members.K and averages their class probabilities") {
  tg::manual_seed(3);
  ModelConfig c = tiny();
  c.ensemble = 2;
  Classifier model(c);
  model.eval();
  tg::NoGradGuard no_grad;
  std::vector<std::string> names;
  for (const auto& [name, p] : model.named_parameters()) names.push_back(name);
  CHECK(std::count(names.begin(), names.end(), "members.0.token_embedding.weight") == 1);
  CHECK(std::count(names.begin(), names.end(), "members.1.classifier.bias") == 1);
  CHECK(std::count(names.begin(), names.end(), "token_embedding.weight") == 0);
  Batch b = make_batch({{{2, 3, 4, 5}, 0}, {{6, 7}, 1}}, {0, 1});
  std::vector<tg::Variable> members = model.member_logits(b.tokens, b.pad_mask);
  REQUIRE(members.size() == 2);
  CHECK(max_abs_diff(members[0].value(), members[1].value()) > 1e-3);  // initialised independently
  // softmax(ensemble logits) = (softmax(l0) + softmax(l1)) / 2, computed here by hand in f64.
  std::vector<double> l0 = members[0].value().to_vector<double>(), l1 = members[1].value().to_vector<double>();
  std::vector<double> p = tg::softmax(model.forward(b.tokens, b.pad_mask).value(), 1).to_vector<double>();
  for (size_t r = 0; r < 2; ++r) {
    const double z0 = std::exp(l0[2 * r]) + std::exp(l0[2 * r + 1]), z1 = std::exp(l1[2 * r]) + std::exp(l1[2 * r + 1]);
    for (size_t k = 0; k < 2; ++k)
      CHECK(p[2 * r + k] == doctest::Approx((std::exp(l0[2 * r + k]) / z0 + std::exp(l1[2 * r + k]) / z1) / 2).epsilon(1e-6));
  }
  CHECK(model.attention(b.tokens, b.pad_mask).size() == 4);  // 2 layers of each member
}

TEST_CASE("Classifier refuses an ensemble of fewer than one network") {
  ModelConfig c = tiny();
  c.ensemble = 0;
  CHECK_THROWS_WITH_AS(Classifier{c}, doctest::Contains("ensemble must be in [1, 1024], got 0"), tg::ValueError);
}

TEST_CASE("word dropout follows train() and eval() in a one-network Classifier") {
  ModelConfig c = tiny();
  c.token_dropout = 0.5, c.dropout = 0;  // only word dropout is random
  Classifier model(c);
  Batch b = make_batch({{{2, 3, 4, 5, 6, 7, 8, 9}, 0}}, {0});
  tg::NoGradGuard no_grad;
  model.eval();
  std::vector<float> a = model.forward(b.tokens, b.pad_mask).value().to_vector<float>();
  CHECK(model.forward(b.tokens, b.pad_mask).value().to_vector<float>() == a);
  model.train();
  bool changed = false;  // 8 tokens at p = 0.5: all kept in 5 draws has probability 2^-40
  for (int i = 0; i < 5; ++i) changed |= model.forward(b.tokens, b.pad_mask).value().to_vector<float>() != a;
  CHECK(changed);
}

// ---------------------------------------------------------------------------------------------- sub-words

namespace {

ModelConfig with_subwords(int64_t buckets = 32) {
  ModelConfig c = tiny();
  c.subword_buckets = buckets;
  return c;
}

// By value: named_parameters() is a temporary vector, so a reference into it would dangle.
tg::Tensor param(Classifier& model, const std::string& name) {
  for (const auto& [n, p] : model.named_parameters())
    if (n == name) return p.value();
  FAIL("no parameter " << name);
  return {};
}

}  // namespace

TEST_CASE("sub-words add subword_embedding.weight (buckets + 1, d_model), padding row zero, drawn after the rest") {
  tg::manual_seed(4);
  Classifier plain(tiny());
  tg::manual_seed(4);
  ModelConfig c = with_subwords(32);
  c.embedding_std = 0.5;
  Classifier sub(c);
  const tg::Tensor w = param(sub, "subword_embedding.weight");
  CHECK(w.shape() == tg::Shape{33, 8});
  CHECK(w.select(0, 0).to_vector<float>() == std::vector<float>(8, 0.0f));
  double sq = 0;  // N(0, 0.5²) over 32 · 8 values: the sample std is 0.5 within about 10%
  for (float v : w.slice(0, 1, 33).to_vector<float>()) sq += double(v) * v;
  CHECK(std::sqrt(sq / 256) == doctest::Approx(0.5).epsilon(0.15));
  // Made after every other layer: with the same seed, the encoder's weights are those of a model without them.
  CHECK(param(sub, "encoder.layers.1.linear2.weight").to_vector<float>() ==
        param(plain, "encoder.layers.1.linear2.weight").to_vector<float>());
  CHECK(plain.named_parameters().size() + 1 == sub.named_parameters().size());
}

TEST_CASE("with sub-words, two unknown words get logits by their spelling; without, the same logits") {
  const Vocab vocab = Vocab::build({{"the", "film"}});
  for (int64_t buckets : {0, 64}) {
    CAPTURE(buckets);
    ModelConfig c = with_subwords(buckets);
    c.vocab_size = vocab.size();
    tg::manual_seed(5);
    Classifier model(c);
    model.eval();
    tg::NoGradGuard no_grad;
    Batch b = make_batch(encode_all({{"the film was dreadful", 0, ""}, {"the film was wonderful", 1, ""}}, vocab,
                                    c.max_len, buckets),
                         {0, 1});
    CHECK(b.subwords.defined() == (buckets > 0));
    tg::Tensor logits = model.forward(b.tokens, b.pad_mask, b.subwords).value();  // (2, 2)
    const double diff = max_abs_diff(logits.slice(0, 0, 1), logits.slice(0, 1, 2));
    if (buckets == 0) CHECK(diff == 0);  // "was", "dreadful", "wonderful" are all <unk>
    else CHECK(diff > 1e-4);
  }
}

TEST_CASE("padding does not change a sentence's logits with sub-words (fewer tokens, fewer n-grams)") {
  const Vocab vocab = Vocab::build({{"good", "a", "movie"}});
  ModelConfig c = with_subwords(64);
  c.vocab_size = vocab.size();
  tg::manual_seed(6);
  Classifier model(c);
  model.eval();
  tg::NoGradGuard no_grad;
  const std::vector<Encoded> data =
      encode_all({{"a good movie", 1, ""}, {"an extraordinarily overlong movie", 0, ""}}, vocab, c.max_len, 64);
  Batch alone = make_batch(data, {0}), both = make_batch(data, {1, 0});
  REQUIRE(alone.subwords.shape() == tg::Shape{1, 3, 12});  // "movie" has 5 + 4 + 3 n-grams
  REQUIRE(both.subwords.shape() == tg::Shape{2, 4, 42});   // "extraordinarily", 15 + 14 + 13
  tg::Tensor a = model.forward(alone.tokens, alone.pad_mask, alone.subwords).value();
  tg::Tensor p = model.forward(both.tokens, both.pad_mask, both.subwords).value();
  CHECK(max_abs_diff(a, p.slice(0, 1, 2)) <= 1e-5);
}

TEST_CASE("a model with sub-words refuses a batch without them; subword_buckets must be in [0, 2^24]") {
  tg::manual_seed(7);
  Classifier model(with_subwords());
  Batch b = make_batch({{{2, 3}, 0}}, {0});
  CHECK_THROWS_WITH_AS(model.forward(b.tokens, b.pad_mask), doctest::Contains("needs subwords (B, S, N) for tokens "
                       "(1, 2), got none"), tg::ValueError);
  CHECK_THROWS_WITH_AS(model.forward(b.tokens, b.pad_mask, tg::zeros({1, 3, 4}, tg::i64)),
                       doctest::Contains("got (1, 3, 4)"), tg::ValueError);
  for (int64_t bad : {int64_t(-1), (int64_t(1) << 24) + 1}) {
    CAPTURE(bad);
    CHECK_THROWS_WITH_AS(Classifier{with_subwords(bad)}, doctest::Contains("subword_buckets must be in [0, 2^24]"),
                         tg::ValueError);
  }
}

TEST_CASE("word dropout drops a word's n-grams with it") {
  const Vocab vocab = Vocab::build({{"the"}});
  ModelConfig c = with_subwords(64);
  c.vocab_size = vocab.size(), c.token_dropout = 0.99, c.dropout = 0;  // only word dropout is random
  tg::manual_seed(8);
  Classifier model(c);
  model.train();
  tg::NoGradGuard no_grad;
  auto logits = [&](const char* text) {
    Batch b = make_batch(encode_all({{text, 0, ""}}, vocab, c.max_len, 64), {0});
    tg::manual_seed(9);  // the same draws for both sentences: this seed drops the one word
    return model.forward(b.tokens, b.pad_mask, b.subwords).value();
  };
  // Both are one unknown word: dropped with its n-grams, they are the same <unk>; kept, they would differ.
  CHECK(max_abs_diff(logits("dreadful"), logits("wonderful")) == 0);
  model.eval();
  CHECK(max_abs_diff(logits("dreadful"), logits("wonderful")) > 1e-4);
}

TEST_CASE("mean+max pooling: the classifier reads (mean, max) side by side, each half as that pooling alone") {
  const std::vector<Encoded> data = {{{4, 9, 3}, 1}, {{2, 5, 7, 11, 13, 6, 8}, 0}};
  tg::NoGradGuard no_grad;
  Batch b = make_batch(data, {0, 1});
  tg::manual_seed(3);
  Classifier both(tiny(Pooling::mean_max));
  both.eval();
  tg::Tensor w = param(both, "classifier.weight"), bias = param(both, "classifier.bias");  // share the storage
  REQUIRE(w.shape() == tg::Shape{2, 16});
  for (Pooling alone : {Pooling::mean, Pooling::max}) {
    CAPTURE(alone);
    tg::manual_seed(3);  // the classifier is drawn last: the same embeddings and encoder
    Classifier one(tiny(alone));
    one.eval();
    // Both's classifier made to read only this pooling's half, with one's weights.
    const bool mean = alone == Pooling::mean;
    w.fill_(0.0);
    w.slice(1, mean ? 0 : 8, mean ? 8 : 16).copy_(param(one, "classifier.weight"));
    bias.copy_(param(one, "classifier.bias"));
    CHECK(max_abs_diff(both.forward(b.tokens, b.pad_mask).value(), one.forward(b.tokens, b.pad_mask).value()) <= 1e-6);
  }
}

TEST_CASE("subword_combine sum adds the n-gram vectors to the word's: zero n-gram vectors leave a plain model") {
  const Vocab vocab = Vocab::build({{"good", "a", "movie"}});
  const std::vector<Encoded> data = encode_all({{"a good movie", 1, ""}, {"an awful film", 0, ""}}, vocab, 8, 64);
  tg::NoGradGuard no_grad;
  ModelConfig plain_config = tiny();
  plain_config.vocab_size = vocab.size();
  tg::manual_seed(10);
  Classifier plain(plain_config);
  plain.eval();
  Batch b = make_batch(data, {0, 1});
  const tg::Tensor expected = plain.forward(b.tokens, b.pad_mask).value();
  for (SubwordCombine combine : {SubwordCombine::sum, SubwordCombine::mean}) {
    CAPTURE(combine);
    ModelConfig c = with_subwords(64);
    c.vocab_size = vocab.size(), c.subword_combine = combine;
    tg::manual_seed(10);  // sub-word rows are drawn last: the rest is the plain model's
    Classifier model(c);
    model.eval();
    param(model, "subword_embedding.weight").fill_(0.0);
    const double diff = max_abs_diff(model.forward(b.tokens, b.pad_mask, b.subwords).value(), expected);
    if (combine == SubwordCombine::sum) CHECK(diff == 0);
    else CHECK(diff > 1e-4);  // the mean divides the word vector by 1 + its n-grams
  }
}

TEST_CASE("an lstm or gru network: PyTorch's names under rnn., the classifier reads directions x hidden_size") {
  for (Architecture a : {Architecture::lstm, Architecture::gru}) {
    CAPTURE(name_of(a));
    ModelConfig c = tiny(Pooling::mean_max);
    c.architecture = a, c.hidden_size = 5, c.bidirectional = true;
    Classifier model(c);
    std::map<std::string, tg::Shape> shapes;
    for (const auto& [name, p] : model.named_parameters()) shapes[name] = p.shape();
    const int64_t G = a == Architecture::lstm ? 4 : 3;
    CHECK(shapes.at("rnn.weight_ih_l0") == tg::Shape{G * 5, 8});             // (G·H, d_model)
    CHECK(shapes.at("rnn.weight_ih_l1_reverse") == tg::Shape{G * 5, 2 * 5});  // (G·H, 2H): both directions
    CHECK(shapes.at("rnn.weight_hh_l1") == tg::Shape{G * 5, 5});
    CHECK(shapes.at("rnn.bias_hh_l0_reverse") == tg::Shape{G * 5});
    CHECK(shapes.at("classifier.weight") == tg::Shape{2, 2 * 2 * 5});  // (mean, max) of 2 directions of H
    CHECK(std::none_of(shapes.begin(), shapes.end(), [](const auto& s) { return s.first.rfind("encoder.", 0) == 0; }));
    CHECK(shapes.size() == 2 * 2 * 4 + 4);  // 2 layers x 2 directions x 4 tensors; 2 embeddings; classifier w, b
  }
}

TEST_CASE("padding does not change an lstm's or gru's logits: padded steps never enter the state") {
  const std::vector<Encoded> data = {{{4, 9, 3}, 1}, {{2, 5, 7, 11, 13, 6, 8}, 0}, {{17}, 0}};
  for (Architecture a : {Architecture::lstm, Architecture::gru}) {
    for (Pooling pooling : {Pooling::mean, Pooling::max, Pooling::mean_max}) {
      CAPTURE(name_of(a));
      CAPTURE(pooling);
      tg::manual_seed(3);
      ModelConfig c = tiny(pooling);
      c.architecture = a, c.hidden_size = 6, c.bidirectional = true;
      Classifier model(c);
      model.eval();
      tg::NoGradGuard no_grad;
      Batch padded = make_batch(data, {1, 0, 2});
      tg::Tensor p = model.forward(padded.tokens, padded.pad_mask).value();  // (3, 2), row 1 is sentence 0
      for (int64_t row : {1, 2}) {
        const Batch alone = make_batch(data, {row == 1 ? 0 : 2});
        CHECK(max_abs_diff(model.forward(alone.tokens, alone.pad_mask).value(), p.slice(0, row, row + 1)) <= 1e-6);
      }
    }
  }
}

TEST_CASE("an lstm network has no attention weights to show") {
  ModelConfig c = tiny();
  c.architecture = Architecture::lstm;
  Classifier model(c);
  Batch b = make_batch({{{2, 3}, 0}}, {0});
  CHECK_THROWS_WITH_AS(model.attention(b.tokens, b.pad_mask),
                       "model: a network of architecture lstm has no attention weights (only a transformer has)",
                       tg::ValueError);
}

TEST_CASE("embedding_rows: the only embedding rows a training backward gives a gradient, ascending") {
  const Vocab vocab = Vocab::build({{"the", "film", "was", "good", "bad", "plot", "dull"}});
  ModelConfig c = with_subwords(64);
  c.vocab_size = vocab.size(), c.token_dropout = 0.5;  // <unk> and row 0 of the n-grams from word dropout
  tg::manual_seed(10);
  Network net(c);
  net.train();
  const Batch b = make_batch(encode_all({{"the film was good", 1, ""}, {"dull plot", 0, ""}}, vocab, c.max_len, 64),
                             {0, 1});
  const std::map<std::string, std::vector<int64_t>> rows = net.embedding_rows(b.tokens, b.subwords);
  REQUIRE(rows.size() == 2);
  std::vector<int64_t> tokens = b.tokens.to_vector<int64_t>(), buckets = b.subwords.to_vector<int64_t>();
  tokens.insert(tokens.end(), {Vocab::kPad, Vocab::kUnk}), buckets.push_back(0);
  for (std::vector<int64_t>* v : {&tokens, &buckets}) {
    std::sort(v->begin(), v->end());
    v->erase(std::unique(v->begin(), v->end()), v->end());
  }
  CHECK(rows.at("token_embedding.weight") == tokens);
  CHECK(rows.at("subword_embedding.weight") == buckets);
  CHECK(tokens.size() < size_t(vocab.size()));  // "bad" is left out
  tg::cross_entropy(net.forward(b.tokens, b.pad_mask, b.subwords), b.labels).backward();
  for (const auto& named : net.named_parameters()) {  // every other row's gradient is 0
    if (rows.count(named.first) == 0) continue;
    CAPTURE(named.first);
    const std::vector<int64_t>& listed = rows.at(named.first);
    const tg::Tensor g = named.second.grad();
    REQUIRE(g.defined());
    for (int64_t r = 0; r < g.size(0); ++r)
      if (!std::binary_search(listed.begin(), listed.end(), r))
        CHECK(g.select(0, r).to_vector<float>() == std::vector<float>(size_t(c.d_model), 0.0f));
  }
}
