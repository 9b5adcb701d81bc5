#pragma once
// DistributedDataParallel: data-parallel training over MPI, as torch.nn.parallel.DistributedDataParallel.
// Every rank holds the whole model and trains on its own share of each batch; after each backward the
// gradients are averaged over the ranks, so every rank's optimizer takes the same step, the step that one
// process would take on the whole batch (for a loss that is a mean over the batch, equal shares per rank).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nn/layer.h"

namespace tg::distributed {

/// What DistributedDataParallel does with buckets and with parameters that a backward does not reach.
struct DistributedDataParallelOptions {
  /// Gradients are averaged in buckets of about this many bytes (PyTorch's bucket_cap_mb = 25), each
  /// allreduced as soon as its last gradient is ready, while the rest of the backward runs. >= 1.
  int64_t bucket_cap_bytes = int64_t(25) << 20;
  /// A parameter that a backward does not reach on some rank counts as a zero gradient there (or as the
  /// gradient it still holds), and one with no gradient on any rank keeps none, as PyTorch's option does.
  /// Off: a parameter that is not reached on every rank is an error at finish().
  bool find_unused_parameters = false;
};

/// Wraps a model for data-parallel training on every rank of MPI_COMM_WORLD (its own communicator, a copy,
/// so that other collectives do not interleave with its allreduces). The loop is the usual one plus finish():
///   model(x) → loss.backward() → ddp.finish() → optimizer.step().
/// Construction broadcasts every parameter and buffer from rank 0 (ShapeError / DTypeError naming the
/// parameter whose shape or dtype differs between ranks, ValueError when the counts differ) and registers a
/// post-accumulate hook on each parameter that requires grad. Buckets hold the parameters in reverse
/// registration order (gradients arrive roughly so) split by dtype, and start (MPI_Iallreduce) in one
/// order on every rank, as MPI requires. The model must outlive this object, and MPI must still run when it
/// is destroyed.
class DistributedDataParallel {
 public:
  /// Broadcasts `module`'s parameters and buffers from rank 0 and hooks its parameters (errors: above).
  explicit DistributedDataParallel(nn::Layer& module, const DistributedDataParallelOptions& options = {});
  ~DistributedDataParallel();
  DistributedDataParallel(const DistributedDataParallel&) = delete;
  DistributedDataParallel& operator=(const DistributedDataParallel&) = delete;

  /// The wrapped model.
  nn::Layer& module() const { return module_; }
  /// module()(x), for unary models; others call their model directly (the hooks are on its parameters).
  Variable operator()(const Variable& x) const { return module_(x); }

  /// Waits for the gradients' allreduces and sets every parameter's grad() to the average over ranks; call it
  /// after each synchronised backward, before the optimizer's step. Starts the buckets of parameters that
  /// got no gradient in that backward. ValueError naming those parameters unless find_unused_parameters
  /// (thrown on every rank alike; the averaged gradients are set first). Does nothing under no_sync().
  void finish();

  /// RAII from no_sync(): while it lives, backward only accumulates gradients locally (no communication),
  /// for gradient accumulation; the first backward after it averages the accumulated sum.
  class NoSync {
   public:
    /// Turns `ddp`'s gradient averaging off until this object is destroyed (then restores what it was).
    explicit NoSync(DistributedDataParallel& ddp) : ddp_(ddp), previous_(ddp.sync_) { ddp.sync_ = false; }
    ~NoSync() { ddp_.sync_ = previous_; }
    NoSync(const NoSync&) = delete;
    NoSync& operator=(const NoSync&) = delete;

   private:
    DistributedDataParallel& ddp_;
    bool previous_;
  };
  /// Turns gradient averaging off until the returned guard is destroyed (PyTorch's no_sync).
  [[nodiscard]] NoSync no_sync() { return NoSync(*this); }

  /// Parameter names per bucket, in the order the buckets start.
  std::vector<std::vector<std::string>> bucket_names() const;
  /// Buckets whose allreduce has started since the last finish() (for tests of the overlap with backward).
  int64_t started_buckets() const;
  /// Wall-clock seconds the last synchronised finish() took until every bucket's allreduce had completed
  /// (starting the buckets left, the exchange of which parameters were reached, the waits): the
  /// communication, and the waiting for slower ranks, that the backward did not hide. Excludes the division
  /// into grad(). 0 before the first finish(); a finish() under no_sync() leaves it as it was.
  double last_wait_seconds() const;

 private:
  struct State;  // MPI's handles and the buckets (data_parallel.cpp): no <mpi.h> in this header
  void on_gradient_ready(size_t param, const Tensor& grad);

  nn::Layer& module_;
  DistributedDataParallelOptions options_;
  std::unique_ptr<State> state_;
  bool sync_ = true;
};

}  // namespace tg::distributed
