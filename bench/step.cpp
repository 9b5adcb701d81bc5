// Training-step benchmark (issue 7): forward + backward + Adam step of config S, M or L on synthetic token
// ids; prints one JSON line with the median step time and the process's peak RSS. One process per config,
// so the RSS is that config's alone. torch_step.py is the same in PyTorch.
//   bench_step --config S --threads 1 --steps 20 --warmup 3
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "configs.h"

int main(int argc, char** argv) {
  std::string name = "S";
  int threads = 1, steps = 20, warmup = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--config")) name = argv[i + 1];
    else if (!std::strcmp(argv[i], "--threads")) threads = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--steps")) steps = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--warmup")) warmup = std::atoi(argv[i + 1]);
    else return fmt::print(stderr, "bench_step: unknown flag {}\n", argv[i]), 2;
  }
  const bench::StepConfig& c = bench::config_named(name);
  tg::set_num_threads(threads);
  tg::check_blas();
  tg::manual_seed(0);
  bench::StepModel model(c);
  model.train();
  tg::optim::Adam opt(model.parameters(), {.lr = 1e-4});
  tg::Tensor ids = tg::randint(0, c.vocab, {c.batch, c.seq});
  tg::Tensor labels = tg::randint(0, 2, {c.batch});
  // Wall time, and the process's CPU time: on a loaded machine the second is the steadier (with 1 thread they
  // agree when the machine is idle).
  auto cpu_ms = [] {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
  };
  std::vector<double> ms, cpu;
  for (int i = 0; i < warmup + steps; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    const double c0 = cpu_ms();
    tg::Variable loss = tg::cross_entropy(model.logits(ids), labels);
    opt.zero_grad();
    loss.backward();
    opt.step();
    double dt = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (i >= warmup) ms.push_back(dt), cpu.push_back(cpu_ms() - c0);
  }
  std::sort(ms.begin(), ms.end());
  std::sort(cpu.begin(), cpu.end());
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  tg::BlasInfo b = tg::blas_info();
  fmt::print("{{\"impl\": \"tensorgrad\", \"config\": \"{}\", \"threads\": {}, \"steps\": {}, \"median_ms\": {:.3f}, "
             "\"min_ms\": {:.3f}, \"cpu_ms\": {:.3f}, \"rss_mb\": {:.1f}, \"blas_core\": \"{}\"}}\n",
             c.name, threads, steps, ms[ms.size() / 2], ms.front(), cpu[cpu.size() / 2], ru.ru_maxrss / 1024.0, b.core);
}
