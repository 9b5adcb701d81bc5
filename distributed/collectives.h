#pragma once
// Collectives on tensors over every rank of the job (MPI_COMM_WORLD), as torch.distributed's: each rank
// calls the same collective in the same order with a tensor of the same shape and dtype (f32, f64, i64).
// Each call first checks that agreement on every rank (one small MPI_Allgather), so a mismatch is the same
// clear exception everywhere instead of wrong bytes or a hang. Blocking; Error when MPI is not running.
#include <optional>
#include <vector>

#include "core/tensor.h"

namespace tg::distributed {

enum class ReduceOp { sum, mean };

/// Every rank's t takes the values of rank `root`'s, in place (MPI_Bcast). ShapeError / DTypeError naming the
/// rank whose t differs from rank 0's, ValueError for a non-contiguous t (on any rank), ranks that pass
/// different roots or a root outside [0, world_size()).
void broadcast(const Tensor& t, int root = 0);
/// t becomes the elementwise sum over ranks (MPI_Allreduce), or that sum divided by world_size() (mean,
/// f32 and f64 only), in place, the same on every rank. Errors as broadcast's.
void allreduce(const Tensor& t, ReduceOp op = ReduceOp::sum);
/// One tensor of allreduce_rows: its rows (indices into dim 0, strictly ascending) to reduce, or with
/// rows = std::nullopt all of it.
struct RowSelection {
  Tensor tensor;                              ///< contiguous, at least 1-D; reduced in place
  std::optional<std::vector<int64_t>> rows;  ///< strictly ascending indices into dim 0; nullopt: every row
};
/// allreduce (sum or mean) of the selected rows of several tensors at once: they are gathered into one
/// buffer, reduced with one MPI_Allreduce behind one agreement check, and scattered back; the other rows are
/// left as they are. For gradients whose other rows are zero on every rank (the rows of an embedding table
/// that no rank's batch looked up), the result is exactly that of allreduce on each whole tensor, at the
/// cost of the selected rows alone. Every rank passes the same shapes, dtype and rows (ShapeError / DTypeError /
/// ValueError naming the first rank that differs otherwise, on every rank). The tensors are contiguous, of
/// one dtype (f32, f64, i64), at least 1-D: ValueError / DTypeError naming the tensor otherwise, and for a
/// row outside [0, size(0)) or out of order (thrown before any communication, so on the ranks passing it).
/// The buffer (the largest so far) is kept for the next call on the thread: a new one of a few MB each
/// training step would cost its page faults.
void allreduce_rows(const std::vector<RowSelection>& parts, ReduceOp op = ReduceOp::sum);
/// Every rank's t stacked in rank order: shape (world_size(), ...t's shape) (MPI_Allgather). t may be
/// non-contiguous (it is read, not written). ShapeError / DTypeError as broadcast's.
Tensor allgather(const Tensor& t);

}  // namespace tg::distributed
