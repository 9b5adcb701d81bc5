// Micro-benchmarks (issue 7), Google Benchmark: tensorgrad's kernels next to what bounds them.
//   matmul n×n×n against raw cblas_sgemm (counter GFLOPS);
//   add / mul / gelu / gelu_backward on 1M–16M f32 elements against memcpy (bytes moved per second);
//   softmax, layer_norm and cross_entropy forward + backward; attention's masked softmax;
//   autograd overhead: a chain of ops on 4×4 tensors, recorded and backpropagated (counter ns_per_op).
// All single-threaded unless --threads N is given before the benchmark flags.
#include <cblas.h>

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <cstring>
#include <vector>
#include <tensorgrad/tensorgrad.h>

namespace {

using tg::Tensor;
using tg::Variable;

void set_flops(benchmark::State& s, double per_iter) {
  s.counters["GFLOPS"] = benchmark::Counter(per_iter * double(s.iterations()) * 1e-9, benchmark::Counter::kIsRate);
}

void BM_matmul(benchmark::State& s) {
  const int64_t n = s.range(0);
  Tensor a = tg::randn({n, n}), b = tg::randn({n, n});
  for (auto _ : s) benchmark::DoNotOptimize(tg::matmul(a, b));
  set_flops(s, 2.0 * n * n * n);
}
void BM_sgemm_raw(benchmark::State& s) {
  const int n = int(s.range(0));
  Tensor a = tg::randn({n, n}), b = tg::randn({n, n});
  for (auto _ : s) {
    Tensor c = tg::empty({n, n});  // tensorgrad allocates its output too
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data<float>(), n, b.data<float>(), n, 0.0f,
                c.data<float>(), n);
    benchmark::DoNotOptimize(c.data<float>());
  }
  set_flops(s, 2.0 * n * n * n);
}
BENCHMARK(BM_matmul)->RangeMultiplier(2)->Range(64, 2048)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_sgemm_raw)->RangeMultiplier(2)->Range(64, 2048)->Unit(benchmark::kMicrosecond);

// Bytes per iteration: each operand read once, the output written once (4 bytes per f32).
void BM_add(benchmark::State& s) {
  Tensor a = tg::randn({s.range(0)}), b = tg::randn({s.range(0)});
  for (auto _ : s) benchmark::DoNotOptimize(tg::add(a, b));
  s.SetBytesProcessed(s.iterations() * s.range(0) * 12);
}
void BM_mul(benchmark::State& s) {
  Tensor a = tg::randn({s.range(0)}), b = tg::randn({s.range(0)});
  for (auto _ : s) benchmark::DoNotOptimize(tg::mul(a, b));
  s.SetBytesProcessed(s.iterations() * s.range(0) * 12);
}
void BM_gelu(benchmark::State& s) {
  Tensor a = tg::randn({s.range(0)});
  for (auto _ : s) benchmark::DoNotOptimize(tg::gelu(a, false));
  s.SetBytesProcessed(s.iterations() * s.range(0) * 8);
}
void BM_gelu_backward(benchmark::State& s) {  // dy and x read, dx written
  Tensor dy = tg::randn({s.range(0)}), x = tg::randn({s.range(0)});
  for (auto _ : s) benchmark::DoNotOptimize(tg::gelu_backward(dy, x));
  s.SetBytesProcessed(s.iterations() * s.range(0) * 12);
}
// memcpy into a fresh buffer, as the kernels write a fresh output: 4 bytes read and 4 written per element. Both
// take their output from tg::empty, so both reuse the same cached pages (core/storage.cpp) after the first
// iteration: neither pays page faults the other does not.
void BM_memcpy(benchmark::State& s) {
  Tensor a = tg::randn({s.range(0)});
  for (auto _ : s) {
    Tensor c = tg::empty({s.range(0)});
    std::memcpy(c.data<float>(), a.data<float>(), size_t(s.range(0)) * 4);
    benchmark::DoNotOptimize(c.data<float>());
  }
  s.SetBytesProcessed(s.iterations() * s.range(0) * 8);
}
BENCHMARK(BM_add)->RangeMultiplier(4)->Range(1 << 20, 1 << 24)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_mul)->RangeMultiplier(4)->Range(1 << 20, 1 << 24)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_gelu)->RangeMultiplier(4)->Range(1 << 20, 1 << 24)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_gelu_backward)->RangeMultiplier(4)->Range(1 << 20, 1 << 24)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_memcpy)->RangeMultiplier(4)->Range(1 << 20, 1 << 24)->Unit(benchmark::kMicrosecond);

// Fused ops, forward + backward, on attention- and classifier-sized rows.
void BM_softmax_fwd_bwd(benchmark::State& s) {  // (B·H·S, S) = (32·8·128, 128): config M's attention
  Variable x(tg::randn({32 * 8 * 128, 128}), true);
  Tensor dy = tg::randn(x.shape());
  for (auto _ : s) {
    tg::softmax(x, -1).backward(dy);
    x.zero_grad();
  }
}
void BM_layer_norm_fwd_bwd(benchmark::State& s) {  // (B·S, D) = (32·128, 256): config M
  Variable x(tg::randn({32 * 128, 256}), true), w(tg::ones({256}), true), b(tg::zeros({256}), true);
  Tensor dy = tg::randn(x.shape());
  for (auto _ : s) {
    tg::layer_norm(x, {256}, w, b, 1e-5).backward(dy);
    x.zero_grad(), w.zero_grad(), b.zero_grad();
  }
}
void BM_cross_entropy_fwd_bwd(benchmark::State& s) {  // (N, C) = (4096, 5000): a vocabulary-sized head
  Variable x(tg::randn({4096, 5000}), true);
  Tensor t = tg::randint(0, 5000, {4096});
  for (auto _ : s) {
    tg::cross_entropy(x, t).backward();
    x.zero_grad();
  }
}
// Attention's masked softmax in the sentiment reference configuration: scores (B, H, S, S) = (32, 4, 40, 40),
// key padding (B, 1, 1, S) leaving sentence b its first 10 + 7b mod 31 tokens. Forward only (the backward
// is softmax_backward's).
void BM_masked_softmax(benchmark::State& s) {
  const int64_t B = 32, H = 4, S = 40;
  Tensor x = tg::randn({B, H, S, S});
  std::vector<double> lengths;
  for (int64_t b = 0; b < B; ++b) lengths.push_back(double(10 + 7 * b % 31));
  Tensor pad = tg::ge(tg::arange(0, double(S), 1, tg::f32).unsqueeze(0), tg::tensor(lengths, {B, 1}, tg::f32))
                   .reshape({B, 1, 1, S});
  for (auto _ : s) benchmark::DoNotOptimize(tg::masked_softmax(x, pad));
}
BENCHMARK(BM_softmax_fwd_bwd)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_masked_softmax)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_layer_norm_fwd_bwd)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_cross_entropy_fwd_bwd)->Unit(benchmark::kMicrosecond);

// 64 ops y = tanh(y·w + b) on 4×4 (3 ops per link, 63 in all plus the sum), recorded and backpropagated.
void BM_autograd_overhead(benchmark::State& s) {
  Variable x(tg::randn({4, 4}), true), w(tg::randn({4, 4}), true), b(tg::randn({4, 4}), true);
  constexpr int kLinks = 21;
  for (auto _ : s) {
    Variable y = x;
    for (int i = 0; i < kLinks; ++i) y = tg::tanh(y * w + b);
    tg::sum(y).backward();
    x.zero_grad(), w.zero_grad(), b.zero_grad();
  }
  // kIsRate | kInvert: seconds per (ops · 1e-9) = ns per op.
  s.counters["ns_per_op"] = benchmark::Counter(double(s.iterations()) * (3 * kLinks + 1) * 1e-9,
                                               benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_autograd_overhead)->Unit(benchmark::kMicrosecond);

}  // namespace

int main(int argc, char** argv) {
  int threads = 1;
  if (argc > 2 && !std::strcmp(argv[1], "--threads")) {  // ours, before Google Benchmark's flags
    threads = std::atoi(argv[2]);
    argv[2] = argv[0], argv += 2, argc -= 2;
  }
  tg::set_num_threads(threads);
  tg::check_blas();
  benchmark::Initialize(&argc, argv);
  benchmark::AddCustomContext("blas_core", tg::blas_info().core);
  benchmark::AddCustomContext("threads", std::to_string(threads));
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
}
