// DistributedDataParallel on however many ranks mpirun started, each case against one process's training on
// the same samples, which every rank computes for itself (the shards of every rank are known without
// communication: DistributedSampler's order depends on the seed and epoch alone).
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/ops.h"
#include "core/random.h"
#include "data/data.h"
#include "distributed/distributed.h"
#include "nn/nn.h"
#include "optim/optim.h"

using namespace tg;
using namespace tg::distributed;

namespace {

// fc1 (4 → 8), tanh, fc2 (8 → 3); `extra` (2 → 2), when registered, is left out of forward.
class Mlp : public nn::Layer {
 public:
  explicit Mlp(bool with_extra = true) {
    register_layer("fc1", fc1);
    register_layer("fc2", fc2);
    if (with_extra) register_layer("extra", extra);
  }
  Variable forward(const Variable& x) override { return fc2(tanh(fc1(x))); }
  nn::Dense fc1{{.in_features = 4, .out_features = 8}}, fc2{{.in_features = 8, .out_features = 3}};
  nn::Dense extra{{.in_features = 2, .out_features = 2}};
};

// n examples: 4 features, a class in [0, 3); the same on every rank.
std::shared_ptr<data::TensorDataset> make_data(int64_t n) {
  Generator gen(7);
  return std::make_shared<data::TensorDataset>(std::vector<Tensor>{randn({n, 4}, DType::f32, &gen), randint(0, 3, {n}, &gen)});
}

data::Batch batch_of(const data::Dataset& d, const std::vector<int64_t>& indices) {
  std::vector<data::Example> examples;
  for (int64_t i : indices) examples.push_back(d.get(i));
  return data::default_collate(examples);
}

Variable loss_on(nn::Layer& model, const data::Batch& b) { return cross_entropy(model(Variable(b[0])), b[1]); }

// Step k of an epoch trains rank r on batch k of its shard; the world trains on those batches concatenated in
// rank order, which is one process's batch of world_size × batch_size.
std::vector<std::vector<int64_t>> world_batches(int64_t n, int64_t epoch, int64_t batch_size, uint64_t seed) {
  std::vector<std::vector<int64_t>> shards;
  for (int r = 0; r < world_size(); ++r) {
    data::DistributedSampler s(n, {.world_size = world_size(), .rank = r, .seed = seed});
    s.set_epoch(epoch);
    shards.push_back(s.indices());
  }
  std::vector<std::vector<int64_t>> batches;
  for (size_t start = 0; start < shards[0].size(); start += size_t(batch_size)) {
    batches.emplace_back();
    for (const auto& shard : shards)
      batches.back().insert(batches.back().end(), shard.begin() + long(start),
                            shard.begin() + long(std::min(start + size_t(batch_size), shard.size())));
  }
  return batches;
}

// The largest |a - b| over two models' parameters.
double max_difference(const nn::Layer& a, const nn::Layer& b) {
  double worst = 0;
  const auto pa = a.named_parameters(), pb = b.named_parameters();
  for (size_t i = 0; i < pa.size(); ++i)
    worst = std::max(worst, amax(abs(pa[i].second.value() - pb[i].second.value())).item());
  return worst;
}

Variable parameter(const nn::Layer& model, const std::string& name) {
  for (const auto& [n, v] : model.named_parameters())
    if (n == name) return v;
  FAIL("no parameter " << name);
  return {};
}

}  // namespace

TEST_CASE("DDP with per-rank batches of b equals one process on batches of world × b, after 20 Adam steps") {
  // 10 examples: shards of ceil(10 / world) (DistributedSampler pads the list by repeating its start), so on
  // 3 ranks each has 4 and its batches of 3 end with a batch of 1; every rank's last batch has the same size,
  // so the mean of the ranks' mean losses is the mean over the world's batch, as one process computes it.
  constexpr int64_t kN = 10, kBatch = 3, kSteps = 20;
  manual_seed(100 + uint64_t(rank()));  // different on each rank: the construction broadcasts rank 0's
  Mlp model(false);
  DistributedDataParallel ddp(model, {.bucket_cap_bytes = 110});
  Mlp reference(false), start(false);
  reference.load_state_dict(model.state_dict());
  start.load_state_dict(model.state_dict());
  optim::Adam opt(model.parameters(), {.lr = 0.01}), reference_opt(reference.parameters(), {.lr = 0.01});
  const auto dataset = make_data(kN);
  data::DataLoader loader(dataset, {.batch_size = kBatch, .sampler = std::make_shared<data::DistributedSampler>(
                                        kN, data::DistributedSamplerOptions{.world_size = world_size(),
                                                                            .rank = rank(), .seed = 3})});
  int64_t steps = 0;
  for (int64_t epoch = 0; steps < kSteps; ++epoch) {
    const auto world = world_batches(kN, epoch, kBatch, 3);
    size_t k = 0;
    for (const data::Batch& b : loader) {
      if (steps++ == kSteps) break;
      const std::vector<int64_t>& mine = world.at(k);  // this rank's part of the world's batch k
      const int64_t part = int64_t(mine.size()) / world_size();
      CHECK(b.indices == std::vector<int64_t>(mine.begin() + rank() * part, mine.begin() + (rank() + 1) * part));
      opt.zero_grad();
      loss_on(model, b).backward();
      ddp.finish();
      opt.step();
      reference_opt.zero_grad();
      loss_on(reference, batch_of(*dataset, world[k++])).backward();
      reference_opt.step();
    }
  }
  CHECK(max_difference(model, reference) <= 1e-6);
  CHECK(max_difference(model, start) > 1e-2);  // and both did train
  // Adam's step does not change when the gradients are scaled: the last gradients are compared as well.
  // Named pairs, not structured bindings: clang 14 cannot capture those in doctest's CAPTURE.
  for (const auto& named : model.named_parameters()) {
    const std::string& name = named.first;
    CAPTURE(name);
    CHECK(amax(abs(named.second.grad() - parameter(reference, name).grad())).item() <= 1e-6);
  }
  for (const auto& named : model.named_parameters()) {
    const std::string& name = named.first;
    CAPTURE(name);
    const Tensor all = allgather(named.second.value());  // every rank took the same steps
    for (int r = 1; r < world_size(); ++r) CHECK(amax(abs(all.select(0, r) - all.select(0, 0))).item() == 0);
  }
}

TEST_CASE("DDP's construction gives every rank rank 0's parameters and buffers") {
  struct WithBuffer : nn::Layer {
    WithBuffer() {
      w = register_parameter("w", full({2, 2}, rank() + 1.0));
      b = register_buffer("b", full({3}, 10.0 * rank(), DType::f64));
    }
    Variable w;
    Tensor b;
  } layer;
  DistributedDataParallel ddp(layer);
  CHECK(layer.w.value().to_vector<double>() == std::vector<double>(4, 1.0));
  CHECK(layer.b.to_vector<double>() == std::vector<double>(3, 0.0));
}

TEST_CASE("DDP starts a bucket's allreduce during backward, as soon as its gradients and earlier buckets are in") {
  using Names = std::vector<std::vector<std::string>>;
  const auto dataset = make_data(4);
  for (bool with_extra : {false, true}) {
    CAPTURE(with_extra);
    Mlp model(with_extra);
    const DistributedDataParallel* watched = nullptr;
    int64_t started_at_fc1 = -1;
    // Registered before DDP's own hooks, so it runs before fc1's gradients go to their buckets.
    parameter(model, "fc1.weight").register_post_accumulate_grad_hook([&](const Tensor&) {
      started_at_fc1 = watched->started_buckets();
    });
    DistributedDataParallel ddp(model, {.bucket_cap_bytes = 110, .find_unused_parameters = true});
    watched = &ddp;
    // Reverse order, up to 110 bytes: fc2's bias (12) and weight (96) fill one bucket, or with extra's bias (8)
    // and weight (16) in front, the first holds all three but fc2's weight; fc1's bias (32) and weight (128)
    // take one each.
    const Names buckets = with_extra ? Names{{"extra.bias", "extra.weight", "fc2.bias"}, {"fc2.weight"}, {"fc1.bias"},
                                             {"fc1.weight"}}
                                     : Names{{"fc2.bias", "fc2.weight"}, {"fc1.bias"}, {"fc1.weight"}};
    CHECK(ddp.bucket_names() == buckets);
    loss_on(model, batch_of(*dataset, {0, 1, 2, 3})).backward();
    // fc2's bucket is on its way while fc1's backward runs; with extra (which no backward reaches) in the first
    // bucket, nothing starts before finish(), since the buckets start in one order on every rank.
    CHECK(started_at_fc1 == (with_extra ? 0 : 1));
    CHECK(ddp.started_buckets() == (with_extra ? 0 : 3));
    ddp.finish();
    CHECK(ddp.started_buckets() == 0);
  }
  Mlp model;
  DistributedDataParallel one_bucket(model);  // 25 MB: everything in one bucket
  CHECK(one_bucket.bucket_names() ==
        Names{{"extra.bias", "extra.weight", "fc2.bias", "fc2.weight", "fc1.bias", "fc1.weight"}});
}

TEST_CASE("gradients accumulated under no_sync, then averaged once, equal one batch over all of them") {
  // Rank r's micro-batches j = 0, 1 are examples [(j·world + r)·2, +2); the loss of each is halved, so their
  // sum is the mean over the rank's 4, and the world's average the mean over all 4 · world.
  Mlp model(false);
  DistributedDataParallel ddp(model, {.bucket_cap_bytes = 110});
  Mlp reference(false);
  reference.load_state_dict(model.state_dict());
  const int64_t w = world_size();
  const auto dataset = make_data(4 * w);
  auto micro = [&](int64_t j) { return batch_of(*dataset, {(j * w + rank()) * 2, (j * w + rank()) * 2 + 1}); };
  {
    auto guard = ddp.no_sync();
    (loss_on(model, micro(0)) * 0.5).backward();
    ddp.finish();  // nothing to do under no_sync
    CHECK(ddp.started_buckets() == 0);
  }
  (loss_on(model, micro(1)) * 0.5).backward();
  ddp.finish();
  std::vector<int64_t> all(size_t(4 * w));
  for (int64_t i = 0; i < 4 * w; ++i) all[size_t(i)] = i;
  loss_on(reference, batch_of(*dataset, all)).backward();
  for (const char* name : {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"}) {
    CAPTURE(name);
    CHECK(amax(abs(parameter(model, name).grad() - parameter(reference, name).grad())).item() <= 1e-6);
  }
}

TEST_CASE("last_wait_seconds is how long finish() waited for the allreduces: here for rank 0, 300 ms late") {
  Mlp model(false);
  DistributedDataParallel ddp(model);
  CHECK(ddp.last_wait_seconds() == 0);
  const data::Batch b = batch_of(*make_data(4), {0, 1, 2, 3});
  if (rank() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(300));
  loss_on(model, b).backward();
  ddp.finish();
  const double waited = ddp.last_wait_seconds();
  CHECK(waited > 0);
  // The others' allreduce cannot complete before rank 0's has started, 300 ms after theirs, less the skew of
  // leaving the construction's broadcasts and any time they were descheduled (a margin of 150 ms for loaded
  // machines, 3 ranks on 2 cores).
  if (rank() != 0) CHECK(waited >= 0.15);
  auto guard = ddp.no_sync();
  loss_on(model, b).backward();
  ddp.finish();  // nothing to wait for: the last synchronised finish()'s value stays
  CHECK(ddp.last_wait_seconds() == waited);
}

TEST_CASE("a parameter no backward reaches is an error naming it, unless find_unused_parameters") {
  Mlp model;
  const auto dataset = make_data(4);
  const data::Batch b = batch_of(*dataset, {0, 1, 2, 3});
  {
    DistributedDataParallel ddp(model);
    for (int step = 0; step < 2; ++step) {  // the error leaves the DDP ready for the next step
      model.zero_grad();
      loss_on(model, b).backward();
      const std::string n = std::to_string(world_size());
      CHECK_THROWS_WITH_AS(ddp.finish(), ("DistributedDataParallel: no gradient reached 'extra.weight' (on " + n +
                                          " of " + n + " ranks), 'extra.bias' (on " + n + " of " + n +
                                          " ranks) in this backward; use every parameter in the loss, or pass "
                                          "find_unused_parameters = true").c_str(),
                           ValueError);
      CHECK(parameter(model, "fc1.weight").grad().defined());  // the used ones were averaged all the same
    }
  }
  // Used on rank 0 alone: its gradient (3 rows of ones: 3 everywhere) is averaged with zeros from the others.
  DistributedDataParallel ddp(model, {.find_unused_parameters = true});
  model.zero_grad();
  Variable loss = loss_on(model, b);
  if (rank() == 0) loss = loss + sum(model.extra(Variable(ones({3, 2}))));
  loss.backward();
  ddp.finish();
  const std::vector<double> expected(2, 3.0 / world_size());
  CHECK(parameter(model, "extra.bias").grad().to_vector<double>() == expected);
  model.zero_grad();
  loss_on(model, b).backward();  // now on no rank: no gradient anywhere, none is made up
  ddp.finish();
  CHECK_FALSE(parameter(model, "extra.bias").grad().defined());
}

TEST_CASE("a second backward before finish() is an error; models that differ between ranks are too") {
  Mlp model;
  DistributedDataParallel ddp(model, {.find_unused_parameters = true});
  const auto dataset = make_data(4);
  loss_on(model, batch_of(*dataset, {0, 1})).backward();
  CHECK_THROWS_WITH_AS(loss_on(model, batch_of(*dataset, {2, 3})).backward(),
                       doctest::Contains("came in twice before finish(); call finish() after each backward"),
                       ValueError);
  ddp.finish();
  if (world_size() < 2) return;
  nn::Dense wider({.in_features = rank() == 1 ? 5 : 4, .out_features = 2});
  CHECK_THROWS_WITH_AS(DistributedDataParallel{wider},
                       "DistributedDataParallel: parameter 'weight' has shape (2, 5) on rank 1 but (2, 4) on rank 0",
                       ShapeError);
  nn::Dense no_bias({.in_features = 4, .out_features = 2, .bias = rank() != 1});
  CHECK_THROWS_WITH_AS(DistributedDataParallel{no_bias},
                       "DistributedDataParallel: parameter count 1 on rank 1 but 2 on rank 0", ValueError);
}
