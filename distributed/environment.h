#pragma once
// The MPI process group: start and end, this process's rank, the number of processes, a barrier. Every
// process of an `mpirun -np N program` run is one rank of MPI_COMM_WORLD; the collectives (collectives.h)
// and DistributedDataParallel work on it. Without mpirun, MPI starts a world of one process.

namespace tg::distributed {

/// RAII: initialises MPI from mpirun's environment (MPI_Init_thread, MPI_THREAD_FUNNELED: MPI is called from
/// the thread that created the Environment) unless MPI already runs, and finalises it on destruction if it
/// initialised it. Leaving its scope by an exception aborts the whole job (MPI_Abort) instead, so the other
/// ranks stop rather than wait forever in a collective. Errors in MPI calls become tg::Error. Error when MPI
/// was already finalised (it cannot start twice in one process).
class Environment {
 public:
  Environment();
  ~Environment();
  Environment(const Environment&) = delete;
  Environment& operator=(const Environment&) = delete;

 private:
  bool owns_ = false;
  int uncaught_ = 0;  // std::uncaught_exceptions() at construction
};

/// Whether MPI is initialised and not yet finalised.
bool initialized();
/// This process's rank in [0, world_size()). Error when MPI is not initialised (as for every call below).
int rank();
/// The number of processes (mpirun's -np).
int world_size();
/// Returns once every rank has called it (MPI_Barrier).
void barrier();
/// Ends every process of the job with this exit status (MPI_Abort on MPI_COMM_WORLD; mpirun then stops the
/// others), for an error on one rank while the others may wait for it in a collective. Error when MPI is not
/// initialised.
[[noreturn]] void abort(int status);

}  // namespace tg::distributed
