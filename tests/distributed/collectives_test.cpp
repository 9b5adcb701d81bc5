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

TEST_CASE("allreduce_rows reduces the selected rows of several tensors at once, as allreduce does the whole") {
  const double n = world_size();
  for (ReduceOp op : {ReduceOp::sum, ReduceOp::mean}) {
    CAPTURE(int(op));
    // An embedding-like gradient (5, 2) whose rows 1 and 3 hold each rank's values, the rest 0 everywhere;
    // a dense (3,) beside it; a (2, 2) of which no row is selected (left as it is).
    const Tensor table = zeros({5, 2});
    table.select(0, 1).copy_(tensor({double(rank()), 1.0}));
    table.select(0, 3).copy_(tensor({2.0 * rank() + 1, -0.5}));
    const Tensor dense = tensor({1.0, double(rank()), 3.0}), untouched = full({2, 2}, double(rank()));
    const Tensor whole = table.clone(), whole_dense = dense.clone();
    allreduce(whole, op), allreduce(whole_dense, op);
    allreduce_rows({{table, std::vector<int64_t>{1, 3}}, {dense, std::nullopt}, {untouched, std::vector<int64_t>{}}},
                   op);
    CHECK(table.to_vector<double>() == whole.to_vector<double>());
    CHECK(dense.to_vector<double>() == whole_dense.to_vector<double>());
    CHECK(untouched.to_vector<double>() == std::vector<double>(4, double(rank())));
    const double k = op == ReduceOp::sum ? 1 : 1 / n;  // Σ r = n(n-1)/2, Σ (2r+1) = n²
    CHECK(table.to_vector<double>() == std::vector<double>{0, 0, k * n * (n - 1) / 2, k * n, 0, 0, k * n * n,
                                                           -0.5 * k * n, 0, 0});
  }
}

TEST_CASE("allreduce_rows refuses rows out of range or order, mixed dtypes, and another selection on a rank") {
  const Tensor t = zeros({4, 2});
  CHECK_THROWS_WITH_AS(allreduce_rows({{t, std::vector<int64_t>{0, 4}}}),
                       "allreduce_rows: row 4 of tensor 0 (shape (4, 2)) is outside [0, 4)", ValueError);
  CHECK_THROWS_WITH_AS(allreduce_rows({{t, std::vector<int64_t>{2, 2}}}),
                       "allreduce_rows: the rows of tensor 0 are not strictly ascending: 2 after 2", ValueError);
  CHECK_THROWS_WITH_AS(allreduce_rows({{t, std::nullopt}, {zeros({2}, DType::f64), std::nullopt}}),
                       "allreduce_rows: tensor 1 is f64 but tensor 0 is f32; one buffer takes one dtype", DTypeError);
  if (world_size() < 2) return;
  const std::vector<int64_t> rows = rank() == 1 ? std::vector<int64_t>{0, 3} : std::vector<int64_t>{0, 2};
  CHECK_THROWS_WITH_AS(allreduce_rows({{t, rows}}), doctest::Contains("on rank 1 but"), ValueError);
  const std::vector<int64_t> fewer = rank() == 1 ? std::vector<int64_t>{0} : std::vector<int64_t>{0, 1};
  CHECK_THROWS_WITH_AS(allreduce_rows({{t, fewer}}),
                       doctest::Contains("has shape (2,) on rank 1 but (4,) on rank 0"), ShapeError);
}
