// broadcast, allreduce and allgather on MPI_COMM_WORLD, each behind the check that every rank agrees on the
// tensor's dtype and shape (mpi_util.h).
#include "distributed/collectives.h"

#include <cstring>

#include "core/error.h"
#include "core/ops.h"
#include "distributed/environment.h"
#include "distributed/mpi_util.h"

namespace tg::distributed {

void broadcast(const Tensor& t, int root) { detail::broadcast(t, root, MPI_COMM_WORLD, "broadcast", "the tensor"); }

void allreduce(const Tensor& t, ReduceOp op) {
  detail::check_same_everywhere(t, {"reduction", int64_t(op)}, true, MPI_COMM_WORLD, "allreduce", "the tensor");
  check<DTypeError>(op == ReduceOp::sum || is_floating(t.dtype()), "allreduce: mean of an {} tensor; mean takes "
                    "f32 or f64", t.dtype());
  detail::check_mpi(MPI_Allreduce(MPI_IN_PLACE, detail::data_of(t), detail::mpi_count(t, "allreduce"),
                                  detail::mpi_type(t.dtype(), "allreduce"), MPI_SUM, MPI_COMM_WORLD),
                    "allreduce", "MPI_Allreduce");
  ++t.storage()->version;
  if (op == ReduceOp::mean) Tensor(t).copy_(t / double(world_size()));
}

namespace {

// The elements per row of part.tensor and its rows to move, after checking the part (see allreduce_rows).
int64_t row_size(const RowSelection& part, size_t i, DType dtype) {
  const Tensor& t = part.tensor;
  check<ValueError>(t.defined() && t.dim() >= 1, "allreduce_rows: tensor {} is {}; expected a tensor of at least 1 "
                    "dimension", i, t.defined() ? "a scalar" : "undefined");
  check<DTypeError>(t.dtype() == dtype, "allreduce_rows: tensor {} is {} but tensor 0 is {}; one buffer takes one "
                    "dtype", i, t.dtype(), dtype);
  check<ValueError>(t.is_contiguous(), "allreduce_rows: tensor {} (shape {}) is not contiguous; the result is written "
                    "in place", i, t.shape());
  if (part.rows)
    for (size_t j = 0; j < part.rows->size(); ++j) {
      const int64_t row = (*part.rows)[j];
      check<ValueError>(row >= 0 && row < t.size(0), "allreduce_rows: row {} of tensor {} (shape {}) is outside "
                        "[0, {})", row, i, t.shape(), t.size(0));
      check<ValueError>(j == 0 || row > (*part.rows)[j - 1], "allreduce_rows: the rows of tensor {} are not strictly "
                        "ascending: {} after {}", i, row, (*part.rows)[j - 1]);
    }
  return t.size(0) == 0 ? 0 : t.numel() / t.size(0);
}

template <class T>
void divide(T* x, int64_t n, T by) {
  for (int64_t i = 0; i < n; ++i) x[i] = x[i] / by;
}

// FNV-1a over every part's shape and selected rows: what the ranks must agree on besides the buffer's size.
int64_t selection_hash(const std::vector<RowSelection>& parts) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&h](int64_t v) { h = (h ^ uint64_t(v)) * 1099511628211ull; };
  for (const RowSelection& part : parts) {
    mix(part.tensor.dim());
    for (int64_t d = 0; d < part.tensor.dim(); ++d) mix(part.tensor.size(d));
    mix(part.rows ? int64_t(part.rows->size()) : -1);
    if (part.rows)
      for (int64_t row : *part.rows) mix(row);
  }
  return int64_t(h >> 1);
}

}  // namespace

void allreduce_rows(const std::vector<RowSelection>& parts, ReduceOp op) {
  check<ValueError>(!parts.empty(), "allreduce_rows: no tensors");
  const DType dtype = parts[0].tensor.defined() ? parts[0].tensor.dtype() : DType::f32;
  std::vector<int64_t> row_sizes;
  int64_t total = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    row_sizes.push_back(row_size(parts[i], i, dtype));
    total += parts[i].rows ? int64_t(parts[i].rows->size()) * row_sizes.back() : parts[i].tensor.numel();
  }
  check<DTypeError>(op == ReduceOp::sum || is_floating(dtype), "allreduce_rows: mean of {} tensors; mean takes f32 "
                    "or f64", dtype);
  // Kept between calls (MPI runs on one thread): a new buffer of a few MB each step costs its page faults.
  thread_local Tensor kept;
  if (!kept.defined() || kept.dtype() != dtype || kept.numel() < total) kept = empty({total}, dtype);
  const Tensor buffer = kept.narrow(0, 0, total);
  const size_t width = dtype_size(dtype);
  // Moves each part's selected rows between its tensor and the buffer, in order.
  auto move = [&](bool gather) {
    char* at = static_cast<char*>(detail::data_of(buffer));
    for (size_t i = 0; i < parts.size(); ++i) {
      char* base = static_cast<char*>(detail::data_of(parts[i].tensor));
      const size_t row_bytes = size_t(row_sizes[i]) * width;
      auto one = [&](char* from_tensor, size_t bytes) {
        if (bytes == 0) return;
        gather ? std::memcpy(at, from_tensor, bytes) : std::memcpy(from_tensor, at, bytes);
        at += bytes;
      };
      if (!parts[i].rows) one(base, size_t(parts[i].tensor.numel()) * width);
      else
        for (int64_t row : *parts[i].rows) one(base + size_t(row) * row_bytes, row_bytes);
    }
  };
  move(true);
  detail::check_same_everywhere(buffer, {"selection (hash of the shapes and rows)", selection_hash(parts)}, true,
                                MPI_COMM_WORLD, "allreduce_rows", "the buffer of the selected rows");
  detail::check_mpi(MPI_Allreduce(MPI_IN_PLACE, detail::data_of(buffer), detail::mpi_count(buffer, "allreduce_rows"),
                                  detail::mpi_type(dtype, "allreduce_rows"), MPI_SUM, MPI_COMM_WORLD),
                    "allreduce_rows", "MPI_Allreduce");
  if (op == ReduceOp::mean) {  // x / n, rounded as allreduce's mean (a tensor divided by a scalar of its dtype)
    if (dtype == DType::f32) divide(buffer.data<float>(), total, float(world_size()));
    else divide(buffer.data<double>(), total, double(world_size()));
  }
  move(false);
  for (const RowSelection& part : parts) ++part.tensor.storage()->version;
}

Tensor allgather(const Tensor& t) {
  detail::check_same_everywhere(t, {"argument", 0}, false, MPI_COMM_WORLD, "allgather", "the tensor");
  const Tensor mine = t.contiguous();
  Shape shape = t.shape();
  shape.insert(shape.begin(), world_size());
  Tensor all = empty(shape, t.dtype());
  const int count = detail::mpi_count(mine, "allgather");
  const MPI_Datatype type = detail::mpi_type(t.dtype(), "allgather");
  detail::check_mpi(MPI_Allgather(detail::data_of(mine), count, type, detail::data_of(all), count, type, MPI_COMM_WORLD),
                    "allgather", "MPI_Allgather");
  return all;
}

}  // namespace tg::distributed
