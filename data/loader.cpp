// The DataLoader. The calling thread fixes the epoch's order (batches of dataset indices) before any
// worker starts; workers build batches by their position in that order, at most num_workers ·
// prefetch_factor ahead of the consumer, and the consumer takes them by position. So which thread built a
// batch, and when, changes nothing the loop sees.
#include "data/loader.h"

#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>

#include "core/error.h"

namespace tg::data {

// Builds batches[first], batches[first + 1], ... on worker threads (or on take(), with none).
class DataLoader::Prefetcher {
 public:
  Prefetcher(const Dataset& dataset, const Collate& collate, const std::vector<std::vector<int64_t>>& batches,
             size_t first, int64_t workers, int64_t window)
      : dataset_(dataset), collate_(collate), batches_(batches), next_(first), window_(size_t(window)) {
    for (int64_t w = 0; w < workers; ++w) threads_.emplace_back([this] { work(); });
  }
  ~Prefetcher() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    space_.notify_all();
    for (std::thread& t : threads_) t.join();
  }

  // Batch i (each i once, in increasing order); rethrows the exception its building raised.
  Batch take(size_t i) {
    if (threads_.empty()) return build(i);
    std::unique_lock lock(mutex_);
    ready_cv_.wait(lock, [&] { return ready_.count(i) > 0; });
    Result r = std::move(ready_.at(i));
    ready_.erase(i);
    taken_ = i + 1;
    lock.unlock();
    space_.notify_all();
    if (r.error) std::rethrow_exception(r.error);
    return std::move(r.batch);
  }

 private:
  struct Result {
    Batch batch;
    std::exception_ptr error;
  };

  Batch build(size_t i) const {
    std::vector<Example> examples;
    examples.reserve(batches_[i].size());
    for (int64_t index : batches_[i]) examples.push_back(dataset_.get(index));
    Batch b = collate_(examples);
    b.indices = batches_[i];
    return b;
  }

  void work() {
    std::unique_lock lock(mutex_);
    for (;;) {
      space_.wait(lock, [&] { return stop_ || (next_ < batches_.size() && next_ < taken_ + window_); });
      if (stop_) return;
      const size_t i = next_++;
      lock.unlock();
      Result r;
      try {
        r.batch = build(i);
      } catch (...) {
        r.error = std::current_exception();
      }
      lock.lock();
      ready_.emplace(i, std::move(r));
      ready_cv_.notify_all();
    }
  }

  const Dataset& dataset_;
  const Collate& collate_;
  const std::vector<std::vector<int64_t>>& batches_;
  size_t next_, taken_ = 0;  // the next batch to build; the batches handed out (all below it)
  size_t window_;
  bool stop_ = false;
  std::map<size_t, Result> ready_;
  std::mutex mutex_;
  std::condition_variable ready_cv_, space_;
  std::vector<std::thread> threads_;
};

DataLoader::DataLoader(std::shared_ptr<const Dataset> dataset, DataLoaderOptions options)
    : dataset_(std::move(dataset)), options_(std::move(options)) {
  check<ValueError>(dataset_ != nullptr, "DataLoader: no dataset given");
  check<ValueError>(options_.batch_size >= 1, "DataLoader: batch_size must be >= 1, got {}", options_.batch_size);
  check<ValueError>(options_.num_workers >= 0, "DataLoader: num_workers must be >= 0, got {}", options_.num_workers);
  check<ValueError>(options_.prefetch_factor >= 1, "DataLoader: prefetch_factor must be >= 1, got {}",
                    options_.prefetch_factor);
  check<ValueError>(bool(options_.collate), "DataLoader: no collate function given");
  sampler_ = options_.sampler ? options_.sampler
             : options_.shuffle ? std::shared_ptr<Sampler>(std::make_shared<RandomSampler>(dataset_->size(), options_.seed))
                                : std::make_shared<SequentialSampler>(dataset_->size());
  epoch_sampler_state_ = sampler_->state();
}

DataLoader::~DataLoader() = default;

int64_t DataLoader::size() const {
  const int64_t n = sampler_->size(), b = options_.batch_size;
  return options_.drop_last ? n / b : (n + b - 1) / b;
}

DataLoader::Iterator DataLoader::begin() {
  start();
  return Iterator(this);
}

void DataLoader::start() {
  prefetcher_.reset();
  sampler_->load_state(epoch_sampler_state_);
  sampler_->set_epoch(epoch_);
  const std::vector<int64_t> indices = sampler_->indices();
  const int64_t n = dataset_->size();
  for (size_t i = 0; i < indices.size(); ++i)
    check<ValueError>(indices[i] >= 0 && indices[i] < n, "DataLoader: the sampler gave index {} (position {}) for a "
                      "dataset of {} examples", indices[i], i, n);
  order_.assign(size_t(size()), {});
  for (size_t b = 0; b < order_.size(); ++b) {
    const size_t from = b * size_t(options_.batch_size);
    order_[b].assign(indices.begin() + std::ptrdiff_t(from),
                     indices.begin() + std::ptrdiff_t(std::min(indices.size(), from + size_t(options_.batch_size))));
  }
  if (order_.empty()) {  // an epoch without batches is over at once
    ++epoch_, epoch_sampler_state_ = sampler_->state();
    return;
  }
  prefetcher_ = std::make_unique<Prefetcher>(*dataset_, options_.collate, order_, size_t(batch_),
                                             options_.num_workers, options_.num_workers * options_.prefetch_factor);
}

const Batch* DataLoader::next() {
  if (!prefetcher_) return nullptr;
  current_ = prefetcher_->take(size_t(batch_));
  if (size_t(++batch_) == order_.size()) {  // the epoch's last batch: the position moves to the next epoch
    prefetcher_.reset();
    ++epoch_, batch_ = 0, epoch_sampler_state_ = sampler_->state();
  }
  return &current_;
}

LoaderState DataLoader::state() const { return {epoch_, batch_, size(), epoch_sampler_state_}; }

void DataLoader::load_state(const LoaderState& s) {
  check<ValueError>(s.num_batches == size(), "DataLoader: the state is of a loader with {} batches per epoch, this one "
                    "has {}", s.num_batches, size());
  check<ValueError>(s.epoch >= 0 && s.batch >= 0 && s.batch < std::max<int64_t>(size(), 1), "DataLoader: bad position "
                    "epoch {} batch {} ({} batches per epoch)", s.epoch, s.batch, size());
  const std::string before = sampler_->state();
  sampler_->load_state(s.sampler);  // throws before anything changed
  sampler_->load_state(before);
  prefetcher_.reset();
  epoch_ = s.epoch, batch_ = s.batch, epoch_sampler_state_ = s.sampler;
}

}  // namespace tg::data
