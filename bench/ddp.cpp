// Data-parallel training benchmark (issue 27): bench_gpt's training step under DistributedDataParallel, one
// JSON line from rank 0 per run; torch_ddp.py is the same in PyTorch DDP over Gloo. Run under mpirun, one
// thread per rank (the README's layout on CPUs):
//   mpirun --allow-run-as-root --oversubscribe --mca btl self,vader -np 2 \
//     bench_ddp --config default --steps 20 --warmup 3 [--bucket-bytes N]
// Weak scaling: every rank trains on a batch of the config's size (its own random tokens), so N ranks train
// on N times the sequences of one per step. A step is forward, cross-entropy over every position, backward,
// finish() (the averaged gradients), clip_grad_norm, AdamW. Reported: the median step and finish() wait
// (DistributedDataParallel::last_wait_seconds) of rank 0 and the largest median wait of any rank, and the
// samples (sequences) per second of all ranks over the timed steps. --bucket-bytes defaults to DDP's 25 MB.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "distributed/distributed.h"
#include "gpt_configs.h"

namespace {

double seconds_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void run(const bench::GptBenchConfig& c, int steps, int warmup, int64_t bucket_bytes) {
  namespace dist = tg::distributed;
  gpt::Gpt model(c.model);
  model.train();
  dist::DistributedDataParallel ddp(model, {.bucket_cap_bytes = bucket_bytes});
  tg::optim::AdamW opt(model.parameters(), {.lr = 1e-3, .betas = {0.9, 0.95}, .weight_decay = 0.1});
  const int64_t B = c.batch, T = c.model.block_size, V = c.model.vocab_size;
  tg::Generator gen(uint64_t(dist::rank()) + 1);
  tg::Tensor ids = tg::randint(0, V, {B, T}, &gen), targets = tg::randint(0, V, {B * T}, &gen);
  std::vector<double> step_ms, wait_ms;
  double timed_from = 0;
  for (int i = 0; i < warmup + steps; ++i) {
    if (i == warmup) dist::barrier(), timed_from = seconds_now();
    const double t0 = seconds_now();
    tg::Variable loss = tg::cross_entropy(model.forward(ids).reshape({B * T, V}), targets);
    opt.zero_grad();
    loss.backward();
    ddp.finish();
    tg::optim::clip_grad_norm(model.parameters(), 1.0);
    opt.step();
    if (i >= warmup) step_ms.push_back((seconds_now() - t0) * 1e3), wait_ms.push_back(ddp.last_wait_seconds() * 1e3);
  }
  const double timed = seconds_now() - timed_from;
  const tg::Tensor waits = dist::allgather(tg::full({}, median(wait_ms), tg::f64));  // (world,)
  if (dist::rank() != 0) return;
  const int world = dist::world_size();
  fmt::print("{{\"impl\": \"tensorgrad\", \"bench\": \"ddp\", \"config\": \"{}\", \"ranks\": {}, \"threads\": 1, "
             "\"batch_per_rank\": {}, \"steps\": {}, \"bucket_bytes\": {}, \"buckets\": {}, \"params\": {}, "
             "\"step_ms\": {:.3f}, \"samples_per_s\": {:.2f}, \"wait_ms\": {:.3f}, \"wait_ms_max_rank\": {:.3f}, "
             "\"blas_core\": \"{}\"}}\n",
             c.name, world, B, steps, bucket_bytes, ddp.bucket_names().size(), model.num_parameters(),
             median(step_ms), double(world) * double(B) * steps / timed, median(wait_ms), tg::amax(waits).item(),
             tg::blas_info().core);
}

}  // namespace

int main(int argc, char** argv) {
  tg::distributed::Environment mpi;
  std::string name = "default";
  int steps = 20, warmup = 3;
  int64_t bucket_bytes = tg::distributed::DistributedDataParallelOptions{}.bucket_cap_bytes;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--config")) name = argv[i + 1];
    else if (!std::strcmp(argv[i], "--steps")) steps = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--warmup")) warmup = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--bucket-bytes")) bucket_bytes = std::atoll(argv[i + 1]);
    else return fmt::print(stderr, "bench_ddp: unknown flag {}\n", argv[i]), 2;
  }
  tg::check<tg::ValueError>(steps >= 1 && warmup >= 0, "bench_ddp: --steps {} must be >= 1, --warmup {} >= 0",
                            steps, warmup);
  tg::set_num_threads(1);
  tg::check_blas();
  tg::manual_seed(0);
  run(bench::gpt_config_named(name), steps, warmup, bucket_bytes);
}
