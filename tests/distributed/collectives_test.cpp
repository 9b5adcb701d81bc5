// broadcast, allreduce and allgather: values against what each rank contributed, and the agreement checks
// (shape, dtype, root, contiguity) that fail on every rank at once. Meant for any world size; the mismatch
// cases need two ranks or more.
#include <doctest/doctest.h>

#include <vector>

#include "core/ops.h"
#include "distributed/distributed.h"

using namespace tg;
using namespace tg::distributed;

TEST_CASE("allgather of the ranks gives 0 .. world_size - 1 in rank order") {
  const Tensor all = allgather(scalar_tensor(rank(), DType::i64));
  CHECK(all.shape() == Shape{world_size()});
  for (int r = 0; r < world_size(); ++r) CHECK(all.to_vector<int64_t>()[size_t(r)] == r);
}

TEST_CASE("broadcast gives every rank the root's values, f32 and f64, from each root") {
  for (DType dtype : {DType::f32, DType::f64})
    for (int root = 0; root < world_size(); ++root) {
      CAPTURE(dtype);
      CAPTURE(root);
      const Tensor t = tensor({double(rank()), 0.5, -1.25 * rank()}, dtype);
      broadcast(t, root);
      CHECK(t.to_vector<double>() == std::vector<double>{double(root), 0.5, -1.25 * root});
    }
}

TEST_CASE("allreduce sums or averages over the ranks, f32 and f64") {
  const double n = world_size();
  for (DType dtype : {DType::f32, DType::f64}) {
    CAPTURE(dtype);
    const Tensor sum = tensor({double(rank()), 2.0 * rank() + 1, 1}, {3, 1}, dtype);
    allreduce(sum);  // Σ r = n(n-1)/2, Σ (2r+1) = n²
    CHECK(sum.to_vector<double>() == std::vector<double>{n * (n - 1) / 2, n * n, n});
    const Tensor mean = tensor({2.0 * rank() + 1, 3}, dtype);
    allreduce(mean, ReduceOp::mean);
    CHECK(mean.to_vector<double>() == std::vector<double>{n, 3});
  }
}

TEST_CASE("allgather stacks every rank's tensor, read through a transposed view") {
  const Tensor x = (arange(0, 6, 1, DType::f64) + 10.0 * rank()).reshape({2, 3}).mT();  // (3, 2), not contiguous
  const Tensor all = allgather(x);
  CHECK(all.shape() == Shape{world_size(), 3, 2});
  for (int r = 0; r < world_size(); ++r)
    CHECK(all.select(0, r).to_vector<double>() == (x - 10.0 * (rank() - r)).to_vector<double>());
}

TEST_CASE("collectives refuse a non-contiguous tensor to write into, and mean of integers, on every rank") {
  const int last = world_size() - 1;
  const Tensor t = rank() == last ? zeros({3, 2}).mT() : zeros({2, 3});
  CHECK_THROWS_WITH_AS(allreduce(t), doctest::Contains(fmt::format("is not contiguous on rank {}", last).c_str()),
                       ValueError);
  CHECK_THROWS_WITH_AS(allreduce(zeros({2}, DType::i64), ReduceOp::mean),
                       "allreduce: mean of an i64 tensor; mean takes f32 or f64", DTypeError);
  CHECK_THROWS_WITH_AS(broadcast(zeros({2}, DType::boolean)), "broadcast: collectives take f32, f64 or i64 tensors, "
                       "got bool", DTypeError);
}

TEST_CASE("a shape, dtype or root that differs between ranks is the same error on every rank, then all go on") {
  if (world_size() < 2) return;
  CHECK_THROWS_WITH_AS(allreduce(zeros({2, rank() == 1 ? 4 : 3})),
                       "allreduce: the tensor has shape (2, 4) on rank 1 but (2, 3) on rank 0", ShapeError);
  CHECK_THROWS_WITH_AS(broadcast(zeros({2}, rank() == 1 ? DType::f64 : DType::f32)),
                       "broadcast: the tensor is f64 on rank 1 but f32 on rank 0", DTypeError);
  CHECK_THROWS_WITH_AS(broadcast(zeros({2}), rank() == 1 ? 1 : 0), "broadcast: root 1 on rank 1 but 0 on rank 0",
                       ValueError);
  CHECK_THROWS_WITH_AS(allgather(zeros({rank() == 1 ? 1 : 2})),
                       "allgather: the tensor has shape (1,) on rank 1 but (2,) on rank 0", ShapeError);
  const Tensor ones_sum = ones({2});
  allreduce(ones_sum);
  CHECK(ones_sum.to_vector<double>() == std::vector<double>{double(world_size()), double(world_size())});
}
