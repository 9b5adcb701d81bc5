#pragma once
// Data-parallel training under mpirun for the example programs (README's "Data-parallel training over MPI",
// docs/distributed.md): every rank runs the same loop on its share of each step's batch, and the gradients
// are averaged over the ranks before the step. The loops of gpt and sentiment see only this interface;
// parallel.cpp implements it on tg::distributed.
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include <tensorgrad/tensorgrad.h>

namespace examples {

/// This process's place among the ranks of an `mpirun -np N <program> train ...` job, and the collectives
/// the training loops need. A run of one process (no mpirun) has none: TrainOptions::parallel is null.
class Parallel {
 public:
  virtual ~Parallel() = default;
  virtual int rank() const = 0;        ///< in [0, world_size())
  virtual int world_size() const = 0;  ///< mpirun's -np
  /// Wraps the model for data parallelism (DistributedDataParallel): rank 0's weights and buffers on every
  /// rank now, and each backward's gradients averaged over the ranks. The model must outlive this object.
  virtual void attach(tg::nn::Layer& model) = 0;
  /// After each backward, before the optimizer's step: waits for the averaged gradients.
  virtual void finish() = 0;
  /// The sum of x over the ranks (every rank gets it).
  virtual double sum(double x) = 0;
  /// The elementwise sum of xs over the ranks (every rank gets it); xs has the same size on every rank
  /// (tg::ShapeError naming the rank otherwise).
  virtual std::vector<double> sum(const std::vector<double>& xs) = 0;
  /// Replaces each parameter's gradient by its mean over the ranks, on the calling thread (MPI is
  /// initialised for the main thread only), all in one blocking allreduce (tg::distributed::allreduce_rows):
  /// for a loop whose backwards run on other threads, where attach()'s hooks cannot. Of params[i] only the
  /// rows rows[i] (ascending indices into dim 0) when rows[i] is given, its other rows being 0 on every rank
  /// (an embedding table's rows no rank's batch looked up); rows may be empty (every gradient whole), else
  /// has one entry per parameter (ValueError). Parameters without a gradient are skipped; they must be the
  /// same on every rank, as must the rows (ShapeError / ValueError from the collective otherwise).
  virtual void average_gradients(const std::vector<tg::Variable>& params,
                                 const std::vector<std::optional<std::vector<int64_t>>>& rows) = 0;
  /// Ends the whole job with this exit status (MPI_Abort): for an error on one rank, so that the others do
  /// not wait for it forever in a collective.
  [[noreturn]] virtual void abort(int status) = 0;
};

/// Whether this process was started by mpirun (Open MPI's OMPI_COMM_WORLD_SIZE, or PMI_SIZE / PMIX_RANK of
/// other launchers, in the environment).
bool launched_by_mpirun();

/// The job's Parallel when launched by mpirun (MPI starts here and ends when it is destroyed), else null.
/// tg::Error when launched by mpirun with more than one process but built without MPI (TENSORGRAD_MPI off):
/// each process would train alone and write the same files.
std::unique_ptr<Parallel> start_parallel();

/// Rank r's rows of a global batch of `batch` rows over `world` ranks: [begin, begin + count). The first
/// batch % world ranks take one row more than the others; when batch < world, the last ranks have none
/// (count 0). ValueError for a rank outside [0, world) or batch < 0.
struct Shard {
  int64_t begin = 0, count = 0;
};
Shard shard_of(int64_t batch, int world, int rank);

}  // namespace examples
