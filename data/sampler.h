#pragma once
// Samplers: which dataset indices an epoch visits, in what order (torch.utils.data's samplers). A sampler
// that draws owns its generator, seeded from its options, so a seed fixes every epoch's order and the
// generator's state (state()) is all a checkpoint needs to draw the same orders again.
#include <cstdint>
#include <string>
#include <vector>

#include "core/random.h"

namespace tg::data {

/// Which dataset indices an epoch visits, in what order; the DataLoader draws one list per epoch.
class Sampler {
 public:
  virtual ~Sampler() = default;
  /// How many indices each epoch yields.
  virtual int64_t size() const = 0;
  /// The next epoch's indices, in order; a random sampler advances its generator.
  virtual std::vector<int64_t> indices() = 0;
  /// The epoch about to be drawn: DistributedSampler derives its order from seed + epoch; the others ignore
  /// it. The DataLoader calls it before each epoch, so a loop over a loader need not.
  virtual void set_epoch(int64_t /*epoch*/) {}
  /// What decides the next indices() beyond the options: the generator's state ("" for none), and its
  /// restoration (ValueError for text that is not a state of this sampler).
  virtual std::string state() const { return ""; }
  /// Restores state(); ValueError for text that is not a state of this sampler.
  virtual void load_state(const std::string& state);
};

/// 0, 1, ..., n-1 every epoch.
class SequentialSampler : public Sampler {
 public:
  /// ValueError for n < 0.
  explicit SequentialSampler(int64_t n);
  int64_t size() const override { return n_; }
  std::vector<int64_t> indices() override;

 private:
  int64_t n_;
};

/// A new random permutation of 0..n-1 every epoch (Fisher-Yates, tg::randperm) from a generator seeded
/// with `seed`.
class RandomSampler : public Sampler {
 public:
  /// ValueError for n < 0.
  explicit RandomSampler(int64_t n, uint64_t seed = 0);
  int64_t size() const override { return n_; }
  std::vector<int64_t> indices() override;
  std::string state() const override { return gen_.get_state(); }
  /// Restores state(); ValueError for text that is not a generator state.
  void load_state(const std::string& state) override { gen_.set_state(state); }

 private:
  int64_t n_;
  Generator gen_;
};

/// WeightedRandomSampler's options.
struct WeightedRandomSamplerOptions {
  int64_t num_samples = 0;  ///< indices per epoch, > 0
  bool replacement = true;  ///< false: each index at most once per epoch (num_samples <= nonzero weights)
  uint64_t seed = 0;        ///< of its generator
};
/// Index i with probability weights[i] / sum(weights), as torch.utils.data.WeightedRandomSampler. Weights
/// need not sum to 1. With replacement, num_samples independent draws (inverse CDF); without, a weighted
/// draw without replacement (Efraimidis & Spirakis 2006: the smallest keys -log(u)/w), which has the
/// distribution of drawing one at a time and removing each. ValueError for no weights, a negative or
/// non-finite weight (naming its index), all zero, num_samples < 1, or more samples without replacement
/// than nonzero weights.
class WeightedRandomSampler : public Sampler {
 public:
  /// ValueError as above.
  WeightedRandomSampler(std::vector<double> weights, const WeightedRandomSamplerOptions& options);
  int64_t size() const override { return options_.num_samples; }
  std::vector<int64_t> indices() override;
  std::string state() const override { return gen_.get_state(); }
  /// Restores state(); ValueError for text that is not a generator state.
  void load_state(const std::string& state) override { gen_.set_state(state); }

 private:
  std::vector<double> weights_, cdf_;  // cdf_: running sums of weights_
  WeightedRandomSamplerOptions options_;
  Generator gen_;
};

/// DistributedSampler's options, PyTorch's names.
struct DistributedSamplerOptions {
  int64_t world_size = 1;  ///< processes (PyTorch's num_replicas), >= 1
  int64_t rank = 0;        ///< this process, in [0, world_size)
  bool shuffle = true;     ///< a new order each epoch (set_epoch), the same on every rank
  uint64_t seed = 0;       ///< must be the same on every rank
  bool drop_last = false;  ///< floor(n / world_size) per rank instead of padding to ceil
};
/// This rank's shard of 0..n-1 for data-parallel training, as torch.utils.data.DistributedSampler: each
/// epoch the indices are permuted by a generator seeded with seed + epoch (the same on every rank, no
/// communication), then rank r takes every world_size-th from r. Uneven shards: without drop_last the
/// list is padded by repeating its start (cycling when n < the padding) up to a multiple of world_size, so
/// every rank gets ceil(n / world_size) indices and a few examples are seen twice per epoch; with drop_last
/// the tail past the largest multiple of world_size is dropped, floor(n / world_size) each. Either way all
/// ranks take the same number of steps, which collective operations require.
class DistributedSampler : public Sampler {
 public:
  /// ValueError for n < 0, world_size < 1 or a rank outside [0, world_size), naming the values.
  DistributedSampler(int64_t n, const DistributedSamplerOptions& options);
  int64_t size() const override { return num_samples_; }
  std::vector<int64_t> indices() override;
  void set_epoch(int64_t epoch) override { epoch_ = epoch; }
  int64_t epoch() const { return epoch_; }  ///< the epoch set_epoch gave

 private:
  int64_t n_;
  DistributedSamplerOptions options_;
  int64_t num_samples_, epoch_ = 0;
};

}  // namespace tg::data
