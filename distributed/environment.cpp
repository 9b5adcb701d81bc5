// MPI's start and end around a program, and the world's rank, size and barrier.
#include "distributed/environment.h"

#include <cstdlib>
#include <exception>

#include "core/error.h"
#include "distributed/mpi_util.h"

namespace tg::distributed {

Environment::Environment() : uncaught_(std::uncaught_exceptions()) {
  int started = 0, ended = 0;
  MPI_Initialized(&started);
  MPI_Finalized(&ended);
  check<Error>(!ended, "Environment: MPI was already finalised in this process and cannot start again");
  if (started) return;
  int provided = 0;
  detail::check_mpi(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "Environment",
                    "MPI_Init_thread");
  owns_ = true;
  // Errors come back as codes (then tg::Error) instead of MPI's default of aborting the job on the spot.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}

Environment::~Environment() {
  if (!owns_ || !initialized()) return;
  // An exception on its way out of this rank: the others may be waiting for it in a collective, where they
  // would wait forever after a finalise; aborting makes mpirun stop them all.
  if (std::uncaught_exceptions() > uncaught_) MPI_Abort(MPI_COMM_WORLD, 1);
  MPI_Finalize();
}

bool initialized() {
  int started = 0, ended = 0;
  MPI_Initialized(&started);
  MPI_Finalized(&ended);
  return started && !ended;
}

int rank() {
  detail::check_initialized("rank");
  int r = 0;
  detail::check_mpi(MPI_Comm_rank(MPI_COMM_WORLD, &r), "rank", "MPI_Comm_rank");
  return r;
}

int world_size() {
  detail::check_initialized("world_size");
  int n = 0;
  detail::check_mpi(MPI_Comm_size(MPI_COMM_WORLD, &n), "world_size", "MPI_Comm_size");
  return n;
}

void barrier() {
  detail::check_initialized("barrier");
  detail::check_mpi(MPI_Barrier(MPI_COMM_WORLD), "barrier", "MPI_Barrier");
}

void abort(int status) {
  detail::check_initialized("abort");
  MPI_Abort(MPI_COMM_WORLD, status);
  std::_Exit(status);  // MPI_Abort does not return; should an MPI return anyway, this process still ends
}

}  // namespace tg::distributed
