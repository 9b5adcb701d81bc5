// Sampling the next token (greedy, temperature, top-k, top-p) and the generate loop: pinned draws for fixed
// seeds, the distributions they come from, draw counts, errors, and a tiny GPT generating the same text with
// and without its KV cache.
#include <doctest/doctest.h>

#include <cmath>
#include <map>

#include "nn/decoder.h"
#include "nn/embedding.h"
#include "nn/positional.h"
#include "nn/sampling.h"

using namespace tg;
using namespace tg::nn;

namespace {

// Logits whose softmax is `probs`.
Tensor logits_of(const std::vector<double>& probs, DType dtype = f64) {
  std::vector<double> z;
  for (double p : probs) z.push_back(std::log(p));
  return tensor(z, {int64_t(z.size())}, dtype);
}

std::map<int64_t, int> counts(const Tensor& logits, const SamplingOptions& o, int draws, uint64_t seed) {
  Generator gen(seed);
  std::map<int64_t, int> n;
  for (int i = 0; i < draws; ++i) ++n[sample_token(logits, o, gen)];
  return n;
}

double entropy(const Tensor& p) {
  double h = 0;
  for (double x : p.to_vector<double>()) h -= x > 0 ? x * std::log(x) : 0;
  return h;
}

void check_distribution(const Tensor& got, const std::vector<double>& want) {
  const std::vector<double> g = got.to_vector<double>();
  REQUIRE(g.size() == want.size());
  for (size_t i = 0; i < g.size(); ++i) {
    CAPTURE(i);
    CHECK(g[i] == doctest::Approx(want[i]).epsilon(1e-12));
  }
}

}  // namespace

TEST_CASE("greedy (temperature 0) takes the argmax, the lowest id on ties, and draws nothing") {
  Generator gen(5);
  const std::string before = gen.get_state();
  CHECK(sample_token(tensor({0.1, 2.0, -1.0, 2.0}, f32), {.temperature = 0}, gen) == 1);
  CHECK(sample_token(tensor({0.1, 2.0, -1.0, 3.0}, f32), {.temperature = 0, .top_k = 2, .top_p = 0.3}, gen) == 3);
  CHECK(gen.get_state() == before);
}

// Probabilities 0.030, 0.083, 0.225, 0.611, 0.050; one uniform per draw walks them from the most likely.
TEST_CASE("sampling with a fixed seed gives the same token ids") {
  const Tensor logits = tensor({0.0, 1.0, 2.0, 3.0, 0.5}, f32);
  for (const auto& [options, want] : std::vector<std::pair<SamplingOptions, std::vector<int64_t>>>{
           {{}, {3, 3, 2, 4, 0, 2, 2, 1, 2, 3}},
           {{.temperature = 2.0}, {3, 3, 1, 0, 0, 1, 1, 4, 1, 2}},  // the same uniforms, a flatter distribution
           {{.top_k = 2}, {3, 3, 3, 2, 2, 2, 3, 2, 2, 3}},
           {{.top_p = 0.5}, {3, 3, 3, 3, 3, 3, 3, 3, 3, 3}}}) {  // token 3 alone holds 0.61
    Generator gen(42);
    std::vector<int64_t> got;
    for (int i = 0; i < 10; ++i) got.push_back(sample_token(logits, options, gen));
    const SamplingOptions& used = options;  // CAPTURE cannot see a structured binding (clang 14)
    CAPTURE(used.temperature);
    CAPTURE(used.top_k);
    CHECK(got == want);
  }
}

TEST_CASE("top-p keeps the smallest set of most likely tokens whose probability reaches p, at least one") {
  const Tensor logits = logits_of({0.15, 0.5, 0.05, 0.3});
  check_distribution(sampling_distribution(logits, {.top_p = 0.75}), {0, 0.625, 0, 0.375});  // 0.5 < 0.75 <= 0.8
  check_distribution(sampling_distribution(logits, {.top_p = 0.9}), {0.15 / 0.95, 0.5 / 0.95, 0, 0.3 / 0.95});
  check_distribution(sampling_distribution(logits, {.top_p = 0.01}), {0, 1, 0, 0});          // the top one always
  check_distribution(sampling_distribution(logits, {.top_p = 1.0}), {0.15, 0.5, 0.05, 0.3});
  // after top-k (3 tokens, renormalised: 0.158, 0.526, 0.316), p = 0.8 keeps two of them
  check_distribution(sampling_distribution(logits, {.top_k = 3, .top_p = 0.8}), {0, 0.5 / 0.8, 0, 0.3 / 0.8});
  const std::map<int64_t, int> n = counts(logits, {.top_p = 0.75}, 1000, 7);
  CHECK(n.size() == 2);
  CHECK(n.count(1) == 1);
  CHECK(n.count(3) == 1);
}

TEST_CASE("top-k never emits a token outside the k most likely over 1000 draws, and emits each of them") {
  const Tensor logits = tensor({0.3, -1.0, 2.0, 0.1, 1.5, -0.2, 1.0}, f32);  // top 3: ids 2, 4, 6
  const std::map<int64_t, int> n = counts(logits, {.temperature = 1.5, .top_k = 3}, 1000, 11);
  CHECK(n.size() == 3);
  for (int64_t id : {2, 4, 6}) CHECK(n.count(id) == 1);
}

TEST_CASE("draws follow the distribution, and a lower temperature is sharper") {
  const Tensor logits = logits_of({0.1, 0.2, 0.3, 0.4});
  const std::map<int64_t, int> n = counts(logits, {}, 4000, 3);
  for (int64_t id = 0; id < 4; ++id) {
    CAPTURE(id);
    CHECK(std::abs(n.at(id) / 4000.0 - 0.1 * double(id + 1)) < 0.025);  // about 3.5 standard deviations
  }
  const double cold = entropy(sampling_distribution(logits, {.temperature = 0.5}));
  const double warm = entropy(sampling_distribution(logits, {.temperature = 1.0}));
  const double hot = entropy(sampling_distribution(logits, {.temperature = 4.0}));
  CHECK(cold < warm);
  CHECK(warm < hot);
  CHECK(hot < std::log(4.0));
  CHECK(counts(logits, {.temperature = 0.25}, 1000, 4).at(3) > counts(logits, {.temperature = 4.0}, 1000, 4).at(3));
}

TEST_CASE("sampling refuses bad options and logits, naming the value") {
  Generator gen(1);
  const Tensor logits = tensor({0.0, 1.0, 2.0}, f32);
  auto sample = [&](const Tensor& z, const SamplingOptions& o) { return sample_token(z, o, gen); };
  CHECK_THROWS_WITH_AS(sample(logits, {.temperature = -0.5}), doctest::Contains("temperature must be >= 0"),
                       ValueError);
  CHECK_THROWS_WITH_AS(sample(logits, {.temperature = NAN}), doctest::Contains("temperature must be >= 0"), ValueError);
  CHECK_THROWS_WITH_AS(sample(logits, {.top_k = -1}), doctest::Contains("top_k must be in [0, 3] (0 = all), got -1"),
                       ValueError);
  CHECK_THROWS_WITH_AS(sample(logits, {.top_k = 4}), doctest::Contains("got 4"), ValueError);
  CHECK_THROWS_WITH_AS(sample(logits, {.top_p = 0}), doctest::Contains("top_p must be in (0, 1], got 0"), ValueError);
  CHECK_THROWS_WITH_AS(sample(logits, {.top_p = 1.5}), doctest::Contains("got 1.5"), ValueError);
  CHECK_THROWS_WITH_AS(sample(zeros({0}), {}), doctest::Contains("logits must be (V) with V > 0, got (0,)"),
                       ShapeError);
  CHECK_THROWS_WITH_AS(sample(zeros({2, 3}), {}), doctest::Contains("got (2, 3)"), ShapeError);
  CHECK_THROWS_WITH_AS(sample(tensor({0.0, NAN}, f32), {}), doctest::Contains("hold NaN"), ValueError);
  CHECK_THROWS_WITH_AS(sample(tensor({-INFINITY, -INFINITY}, f32), {}), doctest::Contains("no token has a finite"),
                       ValueError);
  CHECK(sample(tensor({-INFINITY, 0.0, -INFINITY}, f32), {}) == 1);  // -inf is never drawn
}

TEST_CASE("generate stops at the stop token or the length, streams, and tells the model what it has seen") {
  std::vector<std::pair<size_t, int64_t>> calls;  // (tokens so far, cached)
  NextLogits count_up = [&](std::span<const int64_t> tokens, int64_t cached) {  // the next id is last + 1 (mod 6)
    calls.emplace_back(tokens.size(), cached);
    Tensor z = zeros({6}, f32);
    z.select(0, (tokens.back() + 1) % 6).fill_(5.0);
    return z;
  };
  Generator gen(0);
  std::vector<int64_t> streamed;
  const std::vector<int64_t> out = generate(count_up, {0, 1}, {.max_new_tokens = 10, .stop_token = 4,
                                            .sampling = {.temperature = 0}}, gen,
                                            [&](int64_t id) { streamed.push_back(id); });
  CHECK(out == std::vector<int64_t>{2, 3, 4});
  CHECK(streamed == out);
  CHECK(calls == std::vector<std::pair<size_t, int64_t>>{{2, 0}, {3, 2}, {4, 3}});
  CHECK(generate(count_up, {5}, {.max_new_tokens = 3, .sampling = {.temperature = 0}}, gen) ==
        std::vector<int64_t>{0, 1, 2});
  CHECK_THROWS_WITH_AS(generate(count_up, {}, {.max_new_tokens = 3}, gen), doctest::Contains("at least one token"),
                       ValueError);
  CHECK_THROWS_WITH_AS(generate(count_up, {1}, {.max_new_tokens = 0}, gen),
                       doctest::Contains("max_new_tokens must be positive, got 0"), ValueError);
}

TEST_CASE("a tiny GPT samples the same tokens with its KV cache as when it runs the whole sequence") {
  manual_seed(12);
  const int64_t V = 13, D = 8;
  Embedding wte({.num_embeddings = V, .embedding_dim = D, .dtype = f64});
  SinusoidalPositionalEncoding wpe({.d_model = D, .max_len = 32, .dtype = f64});
  Decoder body({.layer = {.d_model = D, .num_heads = 2, .dim_feedforward = 16, .dropout = 0.0,
                          .activation = Activation::gelu, .norm_first = true, .cross_attention = false, .dtype = f64},
                .num_layers = 2, .final_norm = true});
  std::vector<KVCache> cache(2);
  auto next = [&](std::span<const int64_t> tokens, int64_t cached, bool use_cache) {
    const int64_t start = use_cache ? cached : 0;
    std::vector<int64_t> ids(tokens.begin() + start, tokens.end());
    const Tensor x = index_tensor(ids, {1, int64_t(ids.size())});
    const std::span<KVCache> layers = use_cache ? std::span<KVCache>(cache) : std::span<KVCache>();
    const Variable h = body.forward(wpe.forward(wte(x), start), {}, {.tgt_is_causal = true, .cache = layers});
    return wte.attend(h).value().select(0, 0).select(0, int64_t(ids.size()) - 1);  // (V) at the last position
  };
  const GenerateOptions options{.max_new_tokens = 20, .sampling = {.temperature = 0.8, .top_k = 8, .top_p = 0.95}};
  Generator a(2024), b(2024);
  auto with_cache = [&](std::span<const int64_t> t, int64_t c) { return next(t, c, true); };
  auto without = [&](std::span<const int64_t> t, int64_t c) { return next(t, c, false); };
  const std::vector<int64_t> cached = generate(with_cache, {1, 2, 3}, options, a);
  const std::vector<int64_t> full = generate(without, {1, 2, 3}, options, b);
  CHECK(cached == full);
  CHECK(cached.size() == 20);
  CHECK(cache[0].length() == 3 + 19);  // the last token is sampled, not run
}
