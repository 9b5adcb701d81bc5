// Samplers: sequential and seeded random orders, weighted draws with and without replacement, and the
// distributed shards (their union covers the dataset, all of one size), with the errors for bad options.
#include <doctest/doctest.h>

#include <algorithm>
#include <set>

#include "core/error.h"
#include "data/sampler.h"

using namespace tg;
using namespace tg::data;

namespace {
std::vector<int64_t> sorted(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  return v;
}
}  // namespace

TEST_CASE("SequentialSampler gives 0..n-1 and RandomSampler a seeded permutation per epoch") {
  CHECK(SequentialSampler(4).indices() == std::vector<int64_t>{0, 1, 2, 3});
  RandomSampler a(10, 7), b(10, 7), c(10, 8);
  const std::vector<int64_t> first = a.indices();
  CHECK(sorted(first) == SequentialSampler(10).indices());
  CHECK(b.indices() == first);                 // same seed, same order
  CHECK(c.indices() != first);                 // another seed, another order
  const std::string state = a.state();
  const std::vector<int64_t> second = a.indices();
  CHECK(second != first);                      // a new order each epoch
  b.load_state(state);
  CHECK(b.indices() == second);                // the state draws the same epoch again
  CHECK_THROWS_AS(b.load_state("not a state"), ValueError);
  CHECK_THROWS_WITH_AS(RandomSampler(-1), "RandomSampler: size must be >= 0, got -1", ValueError);
}

TEST_CASE("WeightedRandomSampler with replacement follows the weights") {
  WeightedRandomSampler s({1, 0, 3}, {.num_samples = 40000, .replacement = true, .seed = 1});
  std::vector<int64_t> count(3, 0);
  for (int64_t i : s.indices()) ++count[size_t(i)];
  CHECK(count[1] == 0);                                      // weight 0: never drawn
  CHECK(double(count[2]) / 40000 == doctest::Approx(0.75).epsilon(0.02));
}

TEST_CASE("WeightedRandomSampler without replacement draws each index at most once, heavy ones first") {
  WeightedRandomSampler s({1, 0, 1000, 1, 1}, {.num_samples = 4, .replacement = false, .seed = 3});
  int64_t heavy_first = 0;
  for (int epoch = 0; epoch < 200; ++epoch) {
    const std::vector<int64_t> v = s.indices();
    CHECK(sorted(v) == std::vector<int64_t>{0, 2, 3, 4});  // all four nonzero weights, none repeated
    heavy_first += v[0] == 2;
  }
  CHECK(heavy_first >= 195);  // P(index 2 first) = 1000/1003
}

TEST_CASE("WeightedRandomSampler refuses bad weights and counts") {
  CHECK_THROWS_WITH_AS(WeightedRandomSampler({1, -0.5}, {.num_samples = 1}),
                       "WeightedRandomSampler: weight 1 is -0.5; weights must be finite and >= 0", ValueError);
  CHECK_THROWS_WITH_AS(WeightedRandomSampler({0, 0}, {.num_samples = 1}), "WeightedRandomSampler: all 2 weights are 0",
                       ValueError);
  CHECK_THROWS_WITH_AS(WeightedRandomSampler({1}, {.num_samples = 0}),
                       "WeightedRandomSampler: num_samples must be >= 1, got 0", ValueError);
  CHECK_THROWS_WITH_AS(WeightedRandomSampler({1, 0, 1}, {.num_samples = 3, .replacement = false}),
                       "WeightedRandomSampler: 3 samples without replacement from 2 nonzero weights", ValueError);
  CHECK_THROWS_AS(WeightedRandomSampler({}, {.num_samples = 1}), ValueError);
}

TEST_CASE("DistributedSampler shards cover the dataset with equal sizes, padding by repetition") {
  for (bool shuffle : {false, true}) {
    CAPTURE(shuffle);
    std::multiset<int64_t> seen;
    for (int64_t rank = 0; rank < 4; ++rank) {
      DistributedSampler s(10, {.world_size = 4, .rank = rank, .shuffle = shuffle, .seed = 5});
      s.set_epoch(2);
      const std::vector<int64_t> shard = s.indices();
      CHECK(int64_t(shard.size()) == s.size());
      CHECK(shard.size() == 3);  // ceil(10 / 4)
      seen.insert(shard.begin(), shard.end());
    }
    CHECK(seen.size() == 12);
    CHECK(std::set<int64_t>(seen.begin(), seen.end()).size() == 10);  // every index, two of them twice
  }
  // Unshuffled, as PyTorch: [0..9, 0, 1] dealt round-robin.
  CHECK(DistributedSampler(10, {.world_size = 4, .rank = 1, .shuffle = false}).indices() == std::vector<int64_t>{1, 5, 9});
  CHECK(DistributedSampler(10, {.world_size = 4, .rank = 2, .shuffle = false}).indices() == std::vector<int64_t>{2, 6, 0});
  // Fewer examples than ranks: the list cycles.
  CHECK(DistributedSampler(2, {.world_size = 5, .rank = 4, .shuffle = false}).indices() == std::vector<int64_t>{0});
}

TEST_CASE("DistributedSampler with drop_last drops the tail; the order changes with the epoch, not the rank") {
  std::set<int64_t> seen;
  for (int64_t rank = 0; rank < 4; ++rank) {
    DistributedSampler s(10, {.world_size = 4, .rank = rank, .seed = 1, .drop_last = true});
    CHECK(s.indices().size() == 2);
    for (int64_t i : s.indices()) CHECK(seen.insert(i).second);  // disjoint shards
  }
  CHECK(seen.size() == 8);
  DistributedSampler s(10, {.world_size = 2, .rank = 0, .seed = 1});
  const std::vector<int64_t> e0 = s.indices();
  CHECK(s.indices() == e0);  // no set_epoch: the same order (PyTorch's behaviour; the DataLoader sets it)
  s.set_epoch(1);
  CHECK(s.indices() != e0);
}

TEST_CASE("DistributedSampler refuses a bad world size or rank") {
  CHECK_THROWS_WITH_AS(DistributedSampler(10, {.world_size = 0}), "DistributedSampler: world_size must be >= 1, got 0",
                       ValueError);
  CHECK_THROWS_WITH_AS(DistributedSampler(10, {.world_size = 2, .rank = 2}),
                       "DistributedSampler: rank 2 outside [0, world_size = 2)", ValueError);
  CHECK_THROWS_WITH_AS(DistributedSampler(10, {.world_size = 2, .rank = -1}),
                       "DistributedSampler: rank -1 outside [0, world_size = 2)", ValueError);
}
