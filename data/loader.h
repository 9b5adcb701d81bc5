#pragma once
// DataLoader: batches of a Dataset in the order a Sampler gives, collated, optionally built ahead by
// worker threads. The order is decided on the calling thread and batches are handed out in that order,
// so batch order and contents are the same for any number of workers (0 = build on the calling thread).
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "data/collate.h"
#include "data/dataset.h"
#include "data/sampler.h"

namespace tg::data {

/// DataLoader's options, PyTorch's names and defaults.
struct DataLoaderOptions {
  int64_t batch_size = 1;             ///< >= 1
  bool shuffle = false;               ///< a RandomSampler seeded with `seed` (when no sampler is given)
  uint64_t seed = 0;                  ///< the RandomSampler's seed
  bool drop_last = false;             ///< drop the last batch when it is smaller than batch_size
  int64_t num_workers = 0;            ///< threads building batches ahead; 0: on the calling thread, when asked for
  int64_t prefetch_factor = 2;        ///< batches built ahead per worker, >= 1
  Collate collate = default_collate;  ///< how a batch is made of examples: default_collate, pad_collate or the user's
  /// Overrides shuffle/seed (e.g. a DistributedSampler); its indices must be < the dataset's size.
  std::shared_ptr<Sampler> sampler = nullptr;
};

/// The loader's position, enough to continue an interrupted epoch with the same batches: the epoch, the
/// batches of it already handed out, and the sampler's state before it drew this epoch's order.
struct LoaderState {
  int64_t epoch = 0;        ///< the epoch under way
  int64_t batch = 0;        ///< its batches already handed out
  int64_t num_batches = 0;  ///< its batch count, checked on load
  std::string sampler;      ///< the sampler's state() before it drew this epoch's order
};

/// Usage: `for (const Batch& b : loader) { ... }` runs one epoch (or the rest of one, after load_state or
/// a break). Not thread-safe itself; iterate one loop at a time: a new begin() cancels the previous one.
class DataLoader {
 public:
  /// ValueError for a null dataset, batch_size < 1, num_workers < 0, prefetch_factor < 1 or a null collate.
  DataLoader(std::shared_ptr<const Dataset> dataset, DataLoaderOptions options);
  ~DataLoader();
  DataLoader(const DataLoader&) = delete;
  DataLoader& operator=(const DataLoader&) = delete;

  /// Batches per epoch: ceil(n / batch_size), or floor with drop_last, n the sampler's size.
  int64_t size() const;
  /// The current epoch (0-based): the one the next batch belongs to.
  int64_t epoch() const { return epoch_; }

  class Iterator;
  struct Sentinel {};
  /// Continues the current epoch after the last batch handed out (starts it when none was); the epoch ends
  /// after its last batch is handed out, and epoch() moves on. Rethrows a worker's exception (from get()
  /// or collate) at the batch that raised it, as with 0 workers.
  Iterator begin();
  Sentinel end() const { return {}; }  ///< the end of the epoch

  /// The position: after the k-th batch of epoch e was handed out, {e, k}; after an epoch's last batch,
  /// {e + 1, 0}. Save it with the model after training on a batch; loading it continues with the next.
  LoaderState state() const;
  /// Restores a state(); the next begin() continues from it. Cancels a running loop. ValueError for a
  /// state of a loader with another number of batches, a batch past the end, or a bad sampler state.
  void load_state(const LoaderState& state);

 private:
  class Prefetcher;
  const Batch* next();  // the next batch of the running loop, or null at its end
  void start();          // (re)starts the loop at the current position

  std::shared_ptr<const Dataset> dataset_;
  DataLoaderOptions options_;
  std::shared_ptr<Sampler> sampler_;
  int64_t epoch_ = 0, batch_ = 0;
  std::string epoch_sampler_state_;          // the sampler's state before it drew epoch_'s order
  std::vector<std::vector<int64_t>> order_;  // epoch_'s batches as dataset indices
  std::unique_ptr<Prefetcher> prefetcher_;
  Batch current_;
};

/// Walks the batches of one epoch (range-for); a batch stays valid until the next ++.
class DataLoader::Iterator {
 public:
  const Batch& operator*() const { return *batch_; }  ///< the current batch
  const Batch* operator->() const { return batch_; }  ///< the current batch's members
  /// Moves to the next batch; rethrows a worker's exception at the batch that raised it.
  Iterator& operator++() {
    batch_ = loader_->next();
    return *this;
  }
  bool operator==(Sentinel) const { return batch_ == nullptr; }  ///< whether the epoch is over

 private:
  friend class DataLoader;
  Iterator(DataLoader* loader) : loader_(loader), batch_(loader->next()) {}
  DataLoader* loader_;
  const Batch* batch_;
};

}  // namespace tg::data
