// GPT benchmark (issue 24), one JSON line per run; torch_gpt.py is the same in PyTorch.
//   bench_gpt --config default --threads 1 --steps 20 --warmup 3
//     the training step: forward, cross-entropy over every position, backward, clip_grad_norm, AdamW; median
//     wall and process CPU ms, and the process's peak RSS (one process per config, so it is that config's).
//   bench_gpt --generate cache|nocache --threads 1 --reps 3
//     greedy generation of 255 tokens after one with the nano config (context 256), eval mode: with the
//     KV cache (each token runs alone) or without (each token reruns the whole prefix); tokens per second.
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "gpt_configs.h"

namespace {

double cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

double wall_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double peak_rss_mb() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss / 1024.0;
}

void train(const bench::GptBenchConfig& c, int threads, int steps, int warmup) {
  gpt::Gpt model(c.model);
  model.train();
  tg::optim::AdamW opt(model.parameters(), {.lr = 1e-3, .betas = {0.9, 0.95}, .weight_decay = 0.1});
  const int64_t B = c.batch, T = c.model.block_size, V = c.model.vocab_size;
  tg::Tensor ids = tg::randint(0, V, {B, T}), targets = tg::randint(0, V, {B * T});
  std::vector<double> ms, cpu;
  for (int i = 0; i < warmup + steps; ++i) {
    const double w0 = wall_ms(), c0 = cpu_ms();
    tg::Variable loss = tg::cross_entropy(model.forward(ids).reshape({B * T, V}), targets);
    opt.zero_grad();
    loss.backward();
    tg::optim::clip_grad_norm(model.parameters(), 1.0);
    opt.step();
    if (i >= warmup) ms.push_back(wall_ms() - w0), cpu.push_back(cpu_ms() - c0);
  }
  fmt::print("{{\"impl\": \"tensorgrad\", \"bench\": \"gpt_step\", \"config\": \"{}\", \"threads\": {}, \"steps\": {}, "
             "\"median_ms\": {:.3f}, \"cpu_ms\": {:.3f}, \"rss_mb\": {:.1f}}}\n",
             c.name, threads, steps, median(ms), median(cpu), peak_rss_mb());
}

void generate(const std::string& mode, int threads, int reps) {
  const bench::GptBenchConfig& c = bench::gpt_config_named("nano");
  gpt::Gpt model(c.model);
  model.eval();
  const bool cached = mode == "cache";
  tg::check<tg::ValueError>(cached || mode == "nocache", "bench_gpt: --generate cache or nocache, not '{}'", mode);
  std::vector<tg::nn::KVCache> cache(size_t(c.model.num_layers));
  tg::nn::NextLogits next = [&](std::span<const int64_t> tokens, int64_t done) {
    const int64_t from = cached ? done : 0, n = int64_t(tokens.size()) - from;
    const std::vector<int64_t> todo(tokens.begin() + from, tokens.end());
    tg::Variable logits = cached ? model.forward(tg::index_tensor(todo, {1, n}), from, cache)
                                 : model.forward(tg::index_tensor(todo, {1, n}));
    return logits.value().select(0, 0).select(0, n - 1);
  };
  const int64_t new_tokens = c.model.block_size - 1;
  std::vector<double> ms, cpu;
  for (int r = 0; r < reps; ++r) {
    for (tg::nn::KVCache& k : cache) k.clear();
    tg::Generator gen(0);
    const double w0 = wall_ms(), c0 = cpu_ms();
    tg::nn::generate(next, {0}, {.max_new_tokens = new_tokens, .sampling = {.temperature = 0}}, gen);
    ms.push_back(wall_ms() - w0), cpu.push_back(cpu_ms() - c0);
  }
  fmt::print("{{\"impl\": \"tensorgrad\", \"bench\": \"gpt_generate\", \"mode\": \"{}\", \"threads\": {}, "
             "\"tokens\": {}, \"tokens_per_s\": {:.1f}, \"cpu_tokens_per_s\": {:.1f}}}\n",
             mode, threads, new_tokens, new_tokens * 1e3 / median(ms), new_tokens * 1e3 / median(cpu));
}

}  // namespace

int main(int argc, char** argv) {
  std::string name = "default", mode;
  int threads = 1, steps = 20, warmup = 3, reps = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--config")) name = argv[i + 1];
    else if (!std::strcmp(argv[i], "--generate")) mode = argv[i + 1];
    else if (!std::strcmp(argv[i], "--threads")) threads = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--steps")) steps = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--warmup")) warmup = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--reps")) reps = std::atoi(argv[i + 1]);
    else return fmt::print(stderr, "bench_gpt: unknown flag {}\n", argv[i]), 2;
  }
  tg::set_num_threads(threads);
  tg::check_blas();
  tg::manual_seed(0);
  if (mode.empty()) train(bench::gpt_config_named(name), threads, steps, warmup);
  else generate(mode, threads, reps);
}
