// Parallel on tg::distributed (MPI), when the build has it; without it, a program under mpirun refuses to
// train instead of running N independent copies.
#include "parallel.h"

#include <cstdlib>
#include <string>

#ifdef EXAMPLES_MPI
#include <tensorgrad/distributed/distributed.h>
#endif

namespace examples {
namespace {

// mpirun's process count from the environment, 0 when not launched by one.
int launched_size() {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"})
    if (const char* v = std::getenv(var)) return std::max(1, std::atoi(v));
  return std::getenv("PMIX_RANK") ? 1 : 0;
}

#ifdef EXAMPLES_MPI
namespace dist = tg::distributed;

class MpiParallel final : public Parallel {
 public:
  int rank() const override { return rank_; }
  int world_size() const override { return size_; }
  void attach(tg::nn::Layer& model) override { ddp_ = std::make_unique<dist::DistributedDataParallel>(model); }
  void finish() override {
    tg::check<tg::Error>(ddp_ != nullptr, "Parallel: finish() before attach()");
    ddp_->finish();
  }
  double sum(double x) override {
    const tg::Tensor t = tg::full({1}, x, tg::DType::f64);
    dist::allreduce(t, dist::ReduceOp::sum);
    return t.item();
  }
  std::vector<double> sum(const std::vector<double>& xs) override {
    if (xs.empty()) return {};
    const tg::Tensor t = tg::tensor(xs, tg::DType::f64);
    dist::allreduce(t, dist::ReduceOp::sum);
    return t.to_vector<double>();
  }
  void average_gradients(const std::vector<tg::Variable>& params,
                         const std::vector<std::optional<std::vector<int64_t>>>& rows) override {
    tg::check<tg::ValueError>(rows.empty() || rows.size() == params.size(), "average_gradients: rows for {} "
                              "parameters, given {}", params.size(), rows.size());
    std::vector<dist::RowSelection> parts;
    for (size_t i = 0; i < params.size(); ++i)
      if (const tg::Tensor g = params[i].grad(); g.defined()) parts.push_back({g, rows.empty() ? std::nullopt : rows[i]});
    if (!parts.empty()) dist::allreduce_rows(parts, dist::ReduceOp::mean);
  }
  [[noreturn]] void abort(int status) override { dist::abort(status); }

 private:
  dist::Environment env_;  // first in, last out: MPI runs while the DDP does
  int rank_ = dist::rank(), size_ = dist::world_size();
  std::unique_ptr<dist::DistributedDataParallel> ddp_;
};
#endif

}  // namespace

bool launched_by_mpirun() { return launched_size() > 0; }

std::unique_ptr<Parallel> start_parallel() {
  const int size = launched_size();
  if (size == 0) return nullptr;
#ifdef EXAMPLES_MPI
  return std::make_unique<MpiParallel>();
#else
  tg::check<tg::Error>(size == 1, "this program was built without MPI (TENSORGRAD_MPI off; install libopenmpi-dev "
                       "and configure again): under mpirun its {} processes would each train alone", size);
  return nullptr;
#endif
}

Shard shard_of(int64_t batch, int world, int rank) {
  tg::check<tg::ValueError>(world >= 1 && rank >= 0 && rank < world, "shard_of: rank {} of {} ranks", rank, world);
  tg::check<tg::ValueError>(batch >= 0, "shard_of: a batch of {} rows", batch);
  const int64_t base = batch / world, extra = batch % world;
  return {rank * base + std::min<int64_t>(rank, extra), base + (rank < extra ? 1 : 0)};
}

}  // namespace examples
