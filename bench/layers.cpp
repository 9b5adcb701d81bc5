// Layer benchmarks (issue 25): forward + backward of Conv2d at the digits example's two shapes and at a
// ResNet-like one, and of an LSTM; prints one JSON line per case and thread count with the median time.
// torch_layers.py is the same in PyTorch.
//   bench_layers --threads 1 --steps 20 --warmup 3 [--only conv2d_digits1,conv2d_digits2]
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <tensorgrad/tensorgrad.h>

namespace {

using tg::Tensor;
using tg::Variable;

struct Case {
  std::string name;
  std::function<std::function<void()>()> make;  // builds the layer and inputs, returns one fwd+bwd step
};

// y = conv(x) and y.backward(dy) with a fixed random dy; x requires grad unless it is the network's input.
std::function<void()> conv_step(int64_t N, int64_t C_in, int64_t C_out, int64_t HW, bool input_grad) {
  auto conv = std::make_shared<tg::nn::Conv2d>(
      tg::nn::Conv2dOptions{.in_channels = C_in, .out_channels = C_out, .kernel_size = 3, .padding = 1});
  Variable x(tg::randn({N, C_in, HW, HW}), input_grad);
  Tensor dy = tg::randn({N, C_out, HW, HW});
  return [conv, x, dy]() mutable {
    (*conv)(x).backward(dy);
    conv->zero_grad();
    if (x.requires_grad()) x.zero_grad();
  };
}

// LSTM (T, B, input) -> (T, B, H), time-major as PyTorch's default; the output's gradient a fixed random dy.
std::function<void()> lstm_step(int64_t T, int64_t B, int64_t input, int64_t H) {
  auto lstm = std::make_shared<tg::nn::LSTM>(tg::nn::LSTMOptions{.input_size = input, .hidden_size = H});
  Variable x(tg::randn({T, B, input}), true);
  Tensor dy = tg::randn({T, B, H});
  return [lstm, x, dy]() mutable {
    (*lstm)(x).backward(dy);
    lstm->zero_grad();
    x.zero_grad();
  };
}

// The digits network's convolutions at its batch of 32 (examples/digits: 1 -> 16 channels on 8×8, then
// 16 -> 32 on 4×4, 3×3 with padding 1); the ResNet-like shape and the LSTM of issue 25.
const std::vector<Case>& cases() {
  static const std::vector<Case> k = {
      {"conv2d_digits1", [] { return conv_step(32, 1, 16, 8, false); }},
      {"conv2d_digits2", [] { return conv_step(32, 16, 32, 4, true); }},
      {"conv2d_resnet", [] { return conv_step(32, 64, 64, 32, true); }},
      {"lstm", [] { return lstm_step(64, 32, 256, 256); }},
  };
  return k;
}

double cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 1, steps = 20, warmup = 3;
  std::string only;  // comma-separated case names; empty runs them all
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--threads")) threads = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--steps")) steps = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--warmup")) warmup = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--only")) only = argv[i + 1];
    else return fmt::print(stderr, "bench_layers: unknown flag {}\n", argv[i]), 2;
  }
  if (steps < 1 || warmup < 0) return fmt::print(stderr, "bench_layers: steps must be >= 1, warmup >= 0\n"), 2;
  tg::set_num_threads(threads);
  tg::check_blas();
  for (const Case& c : cases()) {
    if (!only.empty() && ("," + only + ",").find("," + c.name + ",") == std::string::npos) continue;
    tg::manual_seed(0);
    const std::function<void()> step = c.make();
    std::vector<double> ms, cpu;  // wall and process CPU time (the steadier on a loaded machine)
    for (int i = 0; i < warmup + steps; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      const double c0 = cpu_ms();
      step();
      const double dt = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      if (i >= warmup) ms.push_back(dt), cpu.push_back(cpu_ms() - c0);
    }
    std::sort(ms.begin(), ms.end());
    std::sort(cpu.begin(), cpu.end());
    fmt::print("{{\"impl\": \"tensorgrad\", \"name\": \"{}\", \"threads\": {}, \"steps\": {}, \"median_ms\": {:.3f}, "
               "\"min_ms\": {:.3f}, \"cpu_ms\": {:.3f}}}\n",
               c.name, threads, steps, ms[ms.size() / 2], ms.front(), cpu[cpu.size() / 2]);
    std::fflush(stdout);
  }
}
