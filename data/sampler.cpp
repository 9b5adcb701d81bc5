// Index orders per epoch. The random ones draw only from their own generator, in a fixed order, so that an
// epoch's indices are a function of the seed and the epochs drawn before it.
#include "data/sampler.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.h"

namespace tg::data {

void Sampler::load_state(const std::string& state) {
  check<ValueError>(state.empty(), "Sampler: this sampler has no random state, but got '{}'", state);
}

SequentialSampler::SequentialSampler(int64_t n) : n_(n) {
  check<ValueError>(n >= 0, "SequentialSampler: size must be >= 0, got {}", n);
}

std::vector<int64_t> SequentialSampler::indices() {
  std::vector<int64_t> out(static_cast<size_t>(n_));
  std::iota(out.begin(), out.end(), int64_t(0));
  return out;
}

RandomSampler::RandomSampler(int64_t n, uint64_t seed) : n_(n), gen_(seed) {
  check<ValueError>(n >= 0, "RandomSampler: size must be >= 0, got {}", n);
}

std::vector<int64_t> RandomSampler::indices() { return randperm(n_, &gen_).to_vector<int64_t>(); }

WeightedRandomSampler::WeightedRandomSampler(std::vector<double> weights, const WeightedRandomSamplerOptions& options)
    : weights_(std::move(weights)), options_(options), gen_(options.seed) {
  check<ValueError>(!weights_.empty(), "WeightedRandomSampler: no weights given");
  int64_t nonzero = 0;
  double sum = 0;
  for (size_t i = 0; i < weights_.size(); ++i) {
    check<ValueError>(std::isfinite(weights_[i]) && weights_[i] >= 0, "WeightedRandomSampler: weight {} is {}; weights "
                      "must be finite and >= 0", i, weights_[i]);
    nonzero += weights_[i] > 0;
    cdf_.push_back(sum += weights_[i]);
  }
  check<ValueError>(sum > 0, "WeightedRandomSampler: all {} weights are 0", weights_.size());
  check<ValueError>(options.num_samples >= 1, "WeightedRandomSampler: num_samples must be >= 1, got {}",
                    options.num_samples);
  check<ValueError>(options.replacement || options.num_samples <= nonzero, "WeightedRandomSampler: {} samples without "
                    "replacement from {} nonzero weights", options.num_samples, nonzero);
}

std::vector<int64_t> WeightedRandomSampler::indices() {
  const size_t k = size_t(options_.num_samples);
  std::vector<int64_t> out;
  out.reserve(k);
  if (options_.replacement) {
    // The first i with cdf[i] > u·total; a zero weight has cdf[i] == cdf[i-1] and is never the first.
    for (size_t s = 0; s < k; ++s) {
      const double u = gen_.uniform() * cdf_.back();
      const size_t i = size_t(std::upper_bound(cdf_.begin(), cdf_.end(), u) - cdf_.begin());
      out.push_back(int64_t(std::min(i, cdf_.size() - 1)));
    }
    return out;
  }
  // One key per index, drawn in index order; zero weights get +inf and are never among the k smallest.
  std::vector<std::pair<double, int64_t>> keys;
  for (size_t i = 0; i < weights_.size(); ++i) {
    const double e = -std::log1p(-gen_.uniform());  // Exp(1), finite since uniform() < 1
    keys.emplace_back(weights_[i] > 0 ? e / weights_[i] : INFINITY, int64_t(i));
  }
  std::partial_sort(keys.begin(), keys.begin() + std::ptrdiff_t(k), keys.end());
  for (size_t s = 0; s < k; ++s) out.push_back(keys[s].second);
  return out;
}

DistributedSampler::DistributedSampler(int64_t n, const DistributedSamplerOptions& options) : n_(n), options_(options) {
  check<ValueError>(n >= 0, "DistributedSampler: dataset size must be >= 0, got {}", n);
  check<ValueError>(options.world_size >= 1, "DistributedSampler: world_size must be >= 1, got {}", options.world_size);
  check<ValueError>(options.rank >= 0 && options.rank < options.world_size, "DistributedSampler: rank {} outside "
                    "[0, world_size = {})", options.rank, options.world_size);
  const int64_t w = options.world_size;
  num_samples_ = options.drop_last ? n / w : (n + w - 1) / w;
}

std::vector<int64_t> DistributedSampler::indices() {
  std::vector<int64_t> all(static_cast<size_t>(n_));
  std::iota(all.begin(), all.end(), int64_t(0));
  if (options_.shuffle) {
    Generator gen(options_.seed + uint64_t(epoch_));
    all = randperm(n_, &gen).to_vector<int64_t>();
  }
  const int64_t total = num_samples_ * options_.world_size;
  for (int64_t i = n_; i < total; ++i) all.push_back(all[size_t(i - n_) % size_t(n_)]);  // pad by repeating
  all.resize(size_t(total));                                                             // or drop the tail
  std::vector<int64_t> out;
  for (int64_t i = options_.rank; i < total; i += options_.world_size) out.push_back(all[size_t(i)]);
  return out;
}

}  // namespace tg::data
