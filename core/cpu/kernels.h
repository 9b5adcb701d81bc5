#pragma once
// The kernel room's one door. Everything core/ computes on raw buffers, it computes through these functions:
// the thread pool's loops, the small-GEMM kernel, the softmax and layer-norm lines, and (as they move here)
// the elementwise, mask, random and optimizer kernels. The room (core/cpu/) is the only place with SIMD;
// nothing outside it includes intrinsics, and its headers are not installed: these are not public API.
// Pointers are contiguous f32 unless said otherwise; n counts elements.
#include <cstdint>
#include <functional>

namespace tg::cpu {

// ---- threads (thread_pool.cpp) ----

/// The threads a parallel_for started here may run on: 1 inside a parallel region (one runs serially
/// there), else get_num_threads().
int threads_here();

/// How many elements of a light elementwise kernel (a few tenths of a ns each) are worth a thread: a parallel
/// region costs microseconds while the worker is awake and tens of them when it must be woken from sleep on a
/// VM, so a small tensor runs on one thread (bench/RESULTS.md, "Measurements behind the code"). Kernels size
/// their grains from it, a quarter of it for heavier elements (exp, sqrt).
inline constexpr int64_t kGrainElements = int64_t(1) << 19;

/// parallel_for's general case: chunks on the pool, or f(0, n) when the pool is busy or has one thread.
void parallel_for_chunks(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& f);
/// Runs f(begin, end) over [0, n) in chunks of at least `grain` items, on up to get_num_threads() threads.
/// A template so that work of one chunk (every small tensor) calls f directly: wrapping a kernel's lambda
/// in a std::function costs a heap allocation.
template <class F>
void parallel_for(int64_t n, int64_t grain, F&& f) {
  if (n <= 0) return;
  if (n <= grain) return f(int64_t(0), n);
  parallel_for_chunks(n, grain, f);
}

// ---- small f32 GEMM (sgemm_small.cpp) ----

/// Whether matmul gives C = op(A) @ op(B) (row-major, M x N, inner dim K) to sgemm_small_batched: every
/// product of fewer than 256³ multiply-adds (from there OpenBLAS's cache blocking wins), on any OpenBLAS core,
/// where Highway has vectors for the CPU (SSE4, AVX2, AVX-512, NEON): on x86 it beat or matched cblas_sgemm
/// on the benchmark's products on each core (bench/RESULTS.md); never on the scalar target.
bool sgemm_small_takes(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K);

/// C (M x N, row stride ldc) = op(A) @ op(B) for `count` products of one shape (every head of attention's
/// (B, H, S, d) views in one call): product p reads A at a + a_at[p], B at b + b_at[p] and writes C at
/// c + c_at[p]. A is (M x K) with row stride lda, or (K x M) if trans_a; B is (K x N) with row stride ldb, or
/// (N x K) if trans_b. With a bias (N floats), C(i, j) = sum + bias[j], the bits of adding the bias after.
/// Order: each element sums its terms over k in order into one accumulator started at +0, one multiply-add
/// a term (an FMA where the target has one: AVX2, AVX-512, NEON; SSE4 rounds the product, then the sum): the
/// same bits at any thread count and batch split. Accuracy: the in-order sum's bound,
/// |C - exact| <= K·u·Σ_k |A(i,k)|·|B(k,j)| (u = 2^-24, to first order), as cblas_sgemm's.
void sgemm_small_batched(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, const float* a, int64_t lda,
                         const int64_t* a_at, const float* b, int64_t ldb, const int64_t* b_at, float* c,
                         const int64_t* c_at, int64_t ldc, int64_t count, const float* bias = nullptr);

// ---- softmax lines (softmax_row.cpp; the portable lines in core/normalize.cpp) ----

/// softmax of the contiguous f32 line in[0, n) into out (which may be in) with the bits of normalize.cpp's
/// portable line: max, exp_f32(x - max), Σ in its 8 lanes, ·(1/Σ). Returns false, writing nothing, where
/// that line must run instead: on a CPU without AVX-512, or when the line's max is -inf (fully masked).
bool softmax_f32_avx512(const float* in, float* out, int64_t n);

/// The same line with -inf where blocked[j] is true (blocked: n bools), as masked_fill then softmax_f32_avx512
/// would give it, without the filled copy; out may be in. Returns false, writing nothing, without
/// AVX-512 or when every element is blocked or -inf (the line's max is -inf).
bool masked_softmax_f32_avx512(const float* in, const bool* blocked, float* out, int64_t n);

/// softmax's gradient on a contiguous f32 line, p·(g - Σ g·p) with the sum in the portable line's 8 lanes;
/// out may be g or p. Returns false, writing nothing, on a CPU without AVX-512.
bool softmax_backward_f32_avx512(const float* g, const float* p, float* out, int64_t n);

/// log_softmax of the contiguous f32 line in[0, n) into out (which may be in) with the bits of normalize.cpp's
/// log_softmax_f32: (x - max) - log Σ exp_f32(x - max), Σ in its 8 lanes. Returns false, writing nothing,
/// where that line must run instead: on a CPU without AVX-512, or when the line's max is not finite.
bool log_softmax_f32_avx512(const float* in, float* out, int64_t n);

/// The portable lines (normalize.cpp) that the ones above stand in for, and that run where they return false.
void softmax_f32_portable(const float* in, float* out, int64_t n);
void log_softmax_f32_portable(const float* in, float* out, int64_t n);
void softmax_backward_f32_portable(const float* g, const float* p, float* out, int64_t n);

/// softmax's gradient on a contiguous f32 line, on AVX-512 where the CPU has it, else the portable line.
void softmax_backward_f32(const float* g, const float* p, float* out, int64_t n);

// ---- layer-norm rows (layer_norm_row.cpp; the portable rows in core/normalize.cpp) ----

/// Layer norm of each row: x̂ = (x - mean)·rstd into xhat, mean and variance summed in double in sum8's 8
/// lanes; x̂·w + b into y where y is non-null (w or b may then be null); each row's mean and rstd into mean[i]
/// and rstd[i]. Returns false, writing nothing, on a CPU without AVX-512; else the bits of the portable rows.
bool layer_norm_f32_avx512(const float* x, float* xhat, float* y, const float* w, const float* b, int64_t rows,
                           int64_t n, double eps, float* mean, float* rstd);

/// The gradient of each row, with g = dy·w (dy where w is null): dx = rstd·(g - mean(g) - x̂·mean(g·x̂)), the
/// means in sum8's 8 f32 lanes; dy·x̂ added into dw[0, n) and dy into db[0, n) in double, row after row,
/// where they are non-null. Returns false, writing nothing, on a CPU without AVX-512; else the portable bits.
bool layer_norm_backward_f32_avx512(const float* dy, const float* xhat, const float* w, const float* rstd, float* dx,
                                    double* dw, double* db, int64_t rows, int64_t n);

/// The portable rows (normalize.cpp) that the ones above stand in for, and that run where they return false.
void layer_norm_f32_portable(const float* x, float* xhat, float* y, const float* w, const float* b, int64_t rows,
                             int64_t n, double eps, float* mean, float* rstd);
void layer_norm_backward_f32_portable(const float* dy, const float* xhat, const float* w, const float* rstd, float* dx,
                                      double* dw, double* db, int64_t rows, int64_t n);

}  // namespace tg::cpu
