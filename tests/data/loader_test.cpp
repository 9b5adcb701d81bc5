// The DataLoader: the same batches in the same order for 0, 1 and 4 workers, shuffling by seed,
// drop_last, resuming from a saved position, a worker's exception at its batch, and bad options.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "core/error.h"
#include "core/ops.h"
#include "data/loader.h"

using namespace tg;
using namespace tg::data;

namespace {

// Example i: a sequence of i % 5 + 1 tokens (i, i, ...) and the label i % 2. Slow, at random, on the
// first calls, so that workers finish out of order.
class Sequences : public Dataset {
 public:
  explicit Sequences(int64_t n, int64_t throw_at = -1) : n_(n), throw_at_(throw_at) {}
  int64_t size() const override { return n_; }
  Example get(int64_t i) const override {
    check<IndexError>(i != throw_at_, "Sequences: example {} is broken", i);
    if (calls_++ < 8) std::this_thread::sleep_for(std::chrono::milliseconds((i * 7) % 5));
    return {full({i % 5 + 1}, double(i), i64), scalar_tensor(double(i % 2), i64)};
  }

 private:
  int64_t n_, throw_at_;
  mutable std::atomic<int64_t> calls_ = 0;
};

// Each batch of one epoch as (indices, tokens, mask, labels) flattened, for comparing runs.
std::vector<std::vector<int64_t>> epoch(DataLoader& loader) {
  std::vector<std::vector<int64_t>> out;
  for (const Batch& b : loader) {
    std::vector<int64_t> row = b.indices;
    for (const Tensor& t : {b[0], b.masks[0].to(i64), b[1]})
      for (int64_t v : t.to_vector<int64_t>()) row.push_back(v);
    out.push_back(row);
  }
  return out;
}

DataLoaderOptions options(int64_t workers) {
  return {.batch_size = 4, .shuffle = true, .seed = 11, .num_workers = workers, .collate = pad_collate()};
}

}  // namespace

TEST_CASE("the DataLoader gives the same batches in the same order with 0, 1 and 4 workers") {
  auto data = std::make_shared<Sequences>(23);
  DataLoader serial(data, options(0));
  const auto e0 = epoch(serial), e1 = epoch(serial);
  REQUIRE(e0.size() == 6);   // ceil(23 / 4)
  CHECK(e0 != e1);           // a new order each epoch
  for (int64_t workers : {1, 4}) {
    CAPTURE(workers);
    DataLoader loader(std::make_shared<Sequences>(23), options(workers));
    CHECK(epoch(loader) == e0);
    CHECK(epoch(loader) == e1);
    CHECK(loader.epoch() == 2);
  }
}

TEST_CASE("the DataLoader batches every example once per epoch; drop_last drops the short batch") {
  auto data = std::make_shared<Sequences>(10);
  DataLoader loader(data, {.batch_size = 4, .collate = pad_collate()});
  std::vector<int64_t> seen;
  for (const Batch& b : loader) seen.insert(seen.end(), b.indices.begin(), b.indices.end());
  CHECK(seen == std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  DataLoader dropping(data, {.batch_size = 4, .drop_last = true, .num_workers = 2, .collate = pad_collate()});
  CHECK(dropping.size() == 2);
  CHECK(epoch(dropping).size() == 2);
}

TEST_CASE("a TensorDataset loads with the default collate") {
  auto data = std::make_shared<TensorDataset>(std::vector<Tensor>{arange(0, 6).reshape({3, 2}), arange(0, 3, 1, i64)});
  DataLoader loader(data, {.batch_size = 2});
  auto it = loader.begin();
  CHECK((*it)[0].to_vector<float>() == std::vector<float>{0, 1, 2, 3});
  CHECK((*it)[1].to_vector<int64_t>() == std::vector<int64_t>{0, 1});
  CHECK_THROWS_WITH_AS(TensorDataset({zeros({3}), zeros({4, 1})}),
                       "TensorDataset: tensors 0 and 1 differ in their first dimension: (3,) vs (4, 1)", ValueError);
}

TEST_CASE("a saved loader position resumes with the same batches, mid-epoch and across epochs") {
  for (int64_t workers : {0, 4}) {
    CAPTURE(workers);
    DataLoader straight(std::make_shared<Sequences>(23), options(workers));
    std::vector<std::vector<int64_t>> all = epoch(straight), second = epoch(straight);
    all.insert(all.end(), second.begin(), second.end());

    DataLoader first(std::make_shared<Sequences>(23), options(workers));
    std::vector<std::vector<int64_t>> got;
    for (const Batch& b : first) {
      got.push_back({});
      if (got.size() == 3) break;  // stop inside epoch 0, after 3 batches
    }
    const LoaderState saved = first.state();
    CHECK(saved.epoch == 0);
    CHECK(saved.batch == 3);
    DataLoader resumed(std::make_shared<Sequences>(23), options(workers));
    resumed.load_state(saved);
    std::vector<std::vector<int64_t>> rest = epoch(resumed), next = epoch(resumed);
    CHECK(rest == std::vector<std::vector<int64_t>>(all.begin() + 3, all.begin() + 6));
    CHECK(next == second);
  }
}

TEST_CASE("a worker's exception reaches the loop at the batch that raised it") {
  for (int64_t workers : {0, 3}) {
    CAPTURE(workers);
    DataLoader loader(std::make_shared<Sequences>(12, 9), {.batch_size = 2, .num_workers = workers,
                                                           .collate = pad_collate()});
    int64_t batches = 0;
    CHECK_THROWS_WITH_AS(
        for (const Batch& b : loader) { batches += b.size() > 0; }, "Sequences: example 9 is broken", IndexError);
    CHECK(batches == 4);  // batches 0..3 arrived; batch 4 holds example 9
  }
}

TEST_CASE("the DataLoader refuses bad options and foreign positions") {
  auto data = std::make_shared<Sequences>(5);
  CHECK_THROWS_WITH_AS(DataLoader(data, {.batch_size = 0}), "DataLoader: batch_size must be >= 1, got 0", ValueError);
  CHECK_THROWS_WITH_AS(DataLoader(data, {.num_workers = -1}), "DataLoader: num_workers must be >= 0, got -1", ValueError);
  CHECK_THROWS_AS(DataLoader(nullptr, {}), ValueError);
  DataLoader loader(data, {.batch_size = 2, .shuffle = true});
  CHECK_THROWS_WITH_AS(loader.load_state({.epoch = 0, .batch = 0, .num_batches = 4}),
                       "DataLoader: the state is of a loader with 4 batches per epoch, this one has 3", ValueError);
  CHECK_THROWS_AS(loader.load_state({.epoch = 0, .batch = 0, .num_batches = 3, .sampler = "junk"}), ValueError);
  DataLoader big_sampler(data, {.sampler = std::make_shared<SequentialSampler>(6)});
  CHECK_THROWS_WITH_AS(big_sampler.begin(), "DataLoader: the sampler gave index 5 (position 5) for a dataset of 5 "
                       "examples", ValueError);
}
