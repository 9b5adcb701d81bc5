#pragma once
// Collectives on tensors over every rank of the job (MPI_COMM_WORLD), as torch.distributed's: each rank
// calls the same collective in the same order with a tensor of the same shape and dtype (f32, f64, i64).
// Each call first checks that agreement on every rank (one small MPI_Allgather), so a mismatch is the same
// clear exception everywhere instead of wrong bytes or a hang. Blocking; Error when MPI is not running.
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
/// Every rank's t stacked in rank order: shape (world_size(), ...t's shape) (MPI_Allgather). t may be
/// non-contiguous (it is read, not written). ShapeError / DTypeError as broadcast's.
Tensor allgather(const Tensor& t);

}  // namespace tg::distributed
