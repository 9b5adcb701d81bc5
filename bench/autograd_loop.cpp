// The loop of micro.cpp's BM_autograd_overhead with a fixed number of iterations, for callgrind: 21 ×
// tanh(y·w + b) + sum on 4×4 f32 tensors (64 ops), recorded and backpropagated. Per-op instruction and malloc
// counts are the difference of two runs (150 and 50 iterations) divided by 100 × 64, so that start-up cancels:
//   valgrind --tool=callgrind build/bench/bench_autograd_loop 150   (and 50)
// Prints a hash of the last iteration's gradients of x, w and b, so that a change that moves a bit is seen.
#include <fmt/format.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <tensorgrad/tensorgrad.h>

int main(int argc, char** argv) {
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 150;
  tg::set_num_threads(1);
  tg::manual_seed(0);
  tg::Variable x(tg::randn({4, 4}), true), w(tg::randn({4, 4}), true), b(tg::randn({4, 4}), true);
  constexpr int kLinks = 21;
  uint64_t hash = 14695981039346656037ull;
  for (int it = 0; it < iterations; ++it) {
    tg::Variable y = x;
    for (int i = 0; i < kLinks; ++i) y = tg::tanh(y * w + b);
    tg::sum(y).backward();
    if (it == iterations - 1)  // FNV-1a over the bits of the three gradients, outside the measured difference
      for (const tg::Variable* v : {&x, &w, &b})
        for (float g : v->grad().to_vector<float>()) {
          uint32_t bits;
          std::memcpy(&bits, &g, 4);
          hash = (hash ^ bits) * 1099511628211ull;
        }
    x.zero_grad(), w.zero_grad(), b.zero_grad();
  }
  fmt::print("{} iterations, gradient hash {:016x}\n", iterations, hash);
}
