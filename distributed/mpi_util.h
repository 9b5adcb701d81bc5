#pragma once
// Internal to distributed/: MPI's types and errors for tensors, and the check that a collective's tensors
// agree on every rank before the collective runs. Not installed: the public headers do not include <mpi.h>.
#include <mpi.h>

#include <string>

#include "core/tensor.h"

namespace tg::distributed::detail {

/// Error naming `op` and MPI's own message unless rc is MPI_SUCCESS.
void check_mpi(int rc, const char* op, const char* call);
/// Error naming `op` unless MPI is initialised (and not finalised).
void check_initialized(const char* op);
/// The MPI datatype of f32, f64 and i64 tensors; DTypeError naming `op` for any other.
MPI_Datatype mpi_type(DType dtype, const char* op);
/// The first element of t (any dtype), for MPI's untyped buffers; null for an empty tensor.
void* data_of(const Tensor& t);
/// MPI's element count for t; ValueError naming `op` past INT_MAX elements (MPI counts are int).
int mpi_count(const Tensor& t, const char* op);

/// What a collective's callers must agree on besides the tensor: an argument (a root, a reduction) by name.
struct Agreed {
  const char* name;
  int64_t value;
};
/// Checks on every rank at once (one MPI_Allgather) that `what` is defined and has rank 0's dtype and shape,
/// that `arg` is rank 0's, and, if `writes`, that t is contiguous everywhere; the error names the first rank
/// that differs, on every rank, so that all throw together and none waits in the collective. Then that the
/// dtype has an MPI type. ShapeError / DTypeError / ValueError "<op>: <what> ...".
void check_same_everywhere(const Tensor& t, Agreed arg, bool writes, MPI_Comm comm, const char* op,
                           const std::string& what);
/// Every rank's t takes the values of `root`'s (MPI_Bcast in place), after check_same_everywhere.
void broadcast(const Tensor& t, int root, MPI_Comm comm, const char* op, const std::string& what);

}  // namespace tg::distributed::detail
