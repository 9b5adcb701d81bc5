// broadcast, allreduce and allgather on MPI_COMM_WORLD, each behind the check that every rank agrees on the
// tensor's dtype and shape (mpi_util.h).
#include "distributed/collectives.h"

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
