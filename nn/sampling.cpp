// Sampling: the distribution of the next token is built in double on one row of logits (V is a vocabulary,
// small next to the model's work), sorted once by probability; top-k and top-p cut that order.
#include "nn/sampling.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "autograd/variable.h"
#include "core/error.h"

namespace tg::nn {
namespace {

void check_options(const SamplingOptions& o, int64_t V) {
  check<ValueError>(o.temperature >= 0, "sample: temperature must be >= 0 (0 = greedy), got {}", o.temperature);
  check<ValueError>(o.top_k >= 0 && o.top_k <= V, "sample: top_k must be in [0, {}] (0 = all), got {}", V, o.top_k);
  check<ValueError>(o.top_p > 0 && o.top_p <= 1, "sample: top_p must be in (0, 1], got {}", o.top_p);
}

std::vector<double> checked_logits(const Tensor& logits) {
  check<ShapeError>(logits.dim() == 1 && logits.numel() > 0, "sample: logits must be (V) with V > 0, got {}",
                    logits.shape());
  check<DTypeError>(is_floating(logits.dtype()), "sample: logits must be f32 or f64, got {}", logits.dtype());
  std::vector<double> z = logits.contiguous().to_vector<double>();
  check<ValueError>(std::none_of(z.begin(), z.end(), [](double x) { return std::isnan(x); }),
                    "sample: the logits hold NaN");
  check<ValueError>(*std::max_element(z.begin(), z.end()) > -INFINITY, "sample: no token has a finite logit");
  return z;
}

// The kept tokens, most likely first, with their renormalised probabilities.
struct Nucleus {
  std::vector<int64_t> ids;
  std::vector<double> probs;
};

Nucleus nucleus(const Tensor& logits, const SamplingOptions& o) {
  std::vector<double> z = checked_logits(logits);
  const int64_t V = int64_t(z.size());
  check_options(o, V);
  std::vector<int64_t> order(z.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&z](int64_t a, int64_t b) { return z[a] > z[b]; });
  if (o.temperature == 0) return {{order[0]}, {1.0}};
  order.resize(size_t(o.top_k > 0 ? o.top_k : V));
  // softmax(z / T) over the top k, from the largest: p_i = exp((z_i - z_max) / T) / Σ
  std::vector<double> p;
  for (int64_t id : order) p.push_back(std::exp((z[id] - z[order[0]]) / o.temperature));
  const double total = std::accumulate(p.begin(), p.end(), 0.0);
  double mass = 0;
  size_t kept = 0;
  while (kept < p.size() && (kept == 0 || mass < o.top_p)) mass += p[kept++] / total;  // the smallest nucleus
  order.resize(kept), p.resize(kept);
  for (double& x : p) x /= mass * total;
  return {order, p};
}

}  // namespace

Tensor sampling_distribution(const Tensor& logits, const SamplingOptions& options) {
  const Nucleus n = nucleus(logits, options);
  std::vector<double> dist(size_t(logits.numel()), 0.0);
  for (size_t i = 0; i < n.ids.size(); ++i) dist[size_t(n.ids[i])] = n.probs[i];
  return tensor(dist, {logits.numel()}, f64);
}

int64_t sample_token(const Tensor& logits, const SamplingOptions& options, Generator& gen) {
  const Nucleus n = nucleus(logits, options);
  if (options.temperature == 0) return n.ids[0];
  const double u = gen.uniform();
  double cumulative = 0;
  for (size_t i = 0; i < n.ids.size(); ++i) {
    cumulative += n.probs[i];
    if (u < cumulative) return n.ids[i];
  }
  return n.ids.back();  // u within rounding of 1
}

std::vector<int64_t> generate(const NextLogits& next_logits, const std::vector<int64_t>& prompt,
                              const GenerateOptions& options, Generator& gen,
                              const std::function<void(int64_t)>& on_token) {
  check<ValueError>(!prompt.empty(), "generate: the prompt must hold at least one token");
  check<ValueError>(options.max_new_tokens > 0, "generate: max_new_tokens must be positive, got {}",
                    options.max_new_tokens);
  check<ValueError>(options.stop_token >= -1, "generate: stop_token must be a token id or -1, got {}",
                    options.stop_token);
  NoGradGuard no_grad;
  std::vector<int64_t> tokens = prompt, out;
  int64_t cached = 0;
  while (int64_t(out.size()) < options.max_new_tokens) {
    const Tensor logits = next_logits(tokens, cached);
    cached = int64_t(tokens.size());
    const int64_t id = sample_token(logits, options.sampling, gen);
    tokens.push_back(id), out.push_back(id);
    if (on_token) on_token(id);
    if (id == options.stop_token) break;
  }
  return out;
}

}  // namespace tg::nn
