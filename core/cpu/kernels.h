#pragma once
// The kernel room's one door. What the ops on tensors (ops/), core/ and Adam compute on raw buffers, they
// compute through these functions: the thread pool's loops, the memory pool and page cache, the small-GEMM
// kernel and the batched products (and the probe of which BLAS runs them, blas.cpp), the softmax and layer-norm
// lines, the row reductions, lookups, elementwise, packed-mask, random-lane and Adam kernels; the ops keep the
// checks, dtype dispatch, layouts (which loop a layout takes) and outputs. The SIMD kernels are written once on Google Highway
// and dispatched at run time to the best target the CPU has (AVX-512, AVX2, SSE4, NEON, SVE, scalar). The room
// (core/cpu/) is the only place with SIMD; nothing outside it includes Highway or OpenBLAS, and its headers are
// not installed: these are not public API. The loops that take an op's element function (binary, where,
// masked_fill, the in-place updates, copies and fills) are templates, in loops.h and visit.h.
// Pointers are contiguous f32 unless said otherwise; n counts elements.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "core/cpu/visit.h"

namespace tg::cpu {

// ---- threads (thread_pool.cpp) ----

/// The threads a parallel_for started here may run on: 1 inside a parallel region (one runs serially
/// there), else get_num_threads().
int threads_here();

/// How many elements of a light elementwise kernel (a few tenths of a ns each) are worth a thread: a parallel
/// region costs microseconds while the worker is awake and tens of them when it must be woken from sleep on a
/// VM, so a small tensor runs on one thread (bench/RESULTS.md, "Measurements behind the code"). Kernels size
/// their grains from it, a quarter of it for heavier elements (exp, sqrt). Each thread takes a grain or more,
/// so 2^19 elements (the GPT default's (32, 128, 128) activations) are the least that two threads share
/// (bench/RESULTS.md, "Issue 24, two threads on the GPT step").
inline constexpr int64_t kGrainElements = int64_t(1) << 18;

/// parallel_for's general case: chunks on the pool, or f(0, n) when the pool is busy or has one thread.
void parallel_for_chunks(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& f);
/// Runs f(begin, end) over [0, n) in chunks of at least `grain` items, on up to get_num_threads() threads.
/// A template so that work of one chunk (every small tensor) calls f directly: wrapping a kernel's lambda
/// in a std::function costs a heap allocation.
template <class F>
void parallel_for(int64_t n, int64_t grain, F&& f) {
  if (n <= 0) return;
  if (n - grain < grain) return f(int64_t(0), n);  // fewer than two grains (n < 2·grain, without overflow)
  parallel_for_chunks(n, grain, f);
}

// ---- memory (allocator.cpp; the small-block pool is core/pool.h's) ----

/// Whether pool_allocate keeps blocks of `bytes` on its per-thread free lists (64 B .. 64 KB).
bool pooled_size(size_t bytes);
/// A page-aligned block of at least `bytes` (rounded up to whole pages): a cached block freed earlier that it
/// fills to 3/4 at least, else fresh pages from mmap; nullptr when the mapping fails.
void* map_pages(size_t bytes);
/// Returns a block of map_pages(bytes) (the same `bytes`) to the cache, or to the kernel once the cache holds
/// more than the peak in use plus 256 MB.
void unmap_pages(void* p, size_t bytes) noexcept;

// ---- small f32 GEMM (sgemm_small.cpp) ----

/// Whether matmul gives C = op(A) @ op(B) (row-major, M x N, inner dim K) to sgemm_small_batched: every
/// product of two rows or more (one row is a matrix-vector product, gemm_batched's) and fewer than 256³
/// multiply-adds (from there OpenBLAS's cache blocking wins), or of any size where blas_narrower_than_cpu
/// (there it uses wider vectors than OpenBLAS's kernels, and outruns them: bench/RESULTS.md),
/// where Highway has vectors for the CPU (SSE4, AVX2, AVX-512, NEON): on x86 it beat or matched cblas_sgemm
/// on the benchmark's products on each core (bench/RESULTS.md); never on the scalar target.
bool sgemm_small_takes(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K);

/// Whether OpenBLAS runs kernels for narrower vectors than the CPU has: its AVX2 or older kernels on an AVX-512
/// CPU, or pre-AVX2 ones on an AVX2 CPU (an OPENBLAS_CORETYPE override, or a CPU the build does not know;
/// blas_info warns of it). Decided once per process.
bool blas_narrower_than_cpu();

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

// ---- batched products (gemm.cpp), T = float or double ----

/// C = op(A) @ op(B), or C += op(A) @ op(B) where onto_c, for `count` products laid out as sgemm_small_batched's.
/// A product of one row (M = 1) is one cblas_?gemv call per entry (OpenBLAS's GEMM would pack all of B first);
/// an f32 product that sgemm_small_takes (and not onto_c) runs there, others call cblas_?gemm per entry. With
/// fewer entries than threads, each large product (2·256³ multiply-adds or more) is split into parts of rows that
/// start at multiples of 48 (a multiple of every x86 OpenBLAS core's row tile); otherwise whole entries, in runs,
/// go to the threads: the same bits at any thread count, on OpenBLAS's x86 cores and on ours. `bias` (N floats,
/// or null) is added to every row of C as sgemm_small_batched's; Error if given for a product not on our kernel.
template <class T>
void gemm_batched(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, const T* a, int64_t lda,
                  const int64_t* a_at, const T* b, int64_t ldb, const int64_t* b_at, T* c, const int64_t* c_at,
                  int64_t ldc, int64_t count, bool onto_c, const float* bias = nullptr);

// ---- softmax lines (softmax.cpp) ----
// One line of n contiguous f32, on Highway's best target for the CPU (L lanes: 16 on AVX-512, 8 on AVX2, 4 on
// SSE4 and NEON, 1 scalar). Sums run in the L lanes, element j into lane j mod L, then the lanes are added
// pairwise (the order differs between targets, so the last bits may). exp is hn::Exp (within 1 ulp). ε is
// 2^-24 (half an ulp of 1); the bounds below are checked against double references in
// tests/core/softmax_row_test.cpp on every compiled target.

/// softmax into out (which may be in): e_j = exp(x_j - max), then e_j·(1/Σ e). Each output within
/// (|x_j - max| + n + 8)·ε relative of softmax in double (the f32 difference x_j - max rounds, and exp
/// amplifies that), plus 2^-149 absolute (denormal outputs). A line whose max is not finite runs
/// nonfinite_softmax_line (zeros when all -inf, 1/k on k +inf entries); a NaN anywhere makes the line NaN.
void softmax_f32(const float* in, float* out, int64_t n);

/// softmax_f32 of the line with -inf where blocked[j] is true (n bools): masked_fill then softmax_f32, the
/// same bits, without the filled copy. out may be in.
void masked_softmax_f32(const float* in, const bool* blocked, float* out, int64_t n);

/// log_softmax into out (which may be in): (x_j - max) - log Σ exp(x_k - max). Each output within
/// (|x_j - max| + |out_j| + 2n + 16)·ε absolute of log_softmax in double. A line without a finite max runs
/// nonfinite_softmax_line (-inf when all -inf; -log k on k +inf entries, -inf elsewhere); a NaN gives NaNs.
void log_softmax_f32(const float* in, float* out, int64_t n);

/// log Σ exp(x_j) of the line: max + log Σ exp(x_j - max), the exps summed in f32 lanes. Within
/// (|out| + n + 8)·ε absolute of the same in double. Without a finite max: the max (-inf for all -inf or
/// n = 0, +inf when an entry is +inf); a NaN anywhere gives NaN.
float logsumexp_f32(const float* in, int64_t n);

/// The largest (largest) or smallest element of the line, n >= 1, exact; NaN when the line holds one.
float extreme_f32(const float* in, int64_t n, bool largest);

/// softmax's gradient p_j·(g_j - Σ g·p) from the upstream gradient g and the softmax p, into out (which may
/// be g or p); Σ with fused multiply-adds where the target has them. Each output within
/// (n + 4)·ε·|p_j|·(|g_j| + Σ|g·p|) + 2^-149 absolute. A fully masked line (p all 0) gives zeros.
void softmax_backward_f32(const float* g, const float* p, float* out, int64_t n);

/// log_softmax's gradient g_j - exp(ly_j)·Σ g from the upstream gradient g and the log_softmax ly, into out
/// (which may be g or ly). Each output within (n + 4)·ε·(|g_j| + exp(ly_j)·Σ|g|) absolute; NaN where ly_j is.
/// A line of ly that is all -inf (a fully masked line's log_softmax) gives zeros, as softmax's gradient there.
void log_softmax_backward_f32(const float* g, const float* ly, float* out, int64_t n);

/// The softmax (with `log`, the log_softmax) of a line whose max is not finite, n elements s apart, into out
/// (which may be in): the limit as its infinite entries grow together. All -inf (or n = 0): zeros (log: -inf);
/// k entries +inf: 1/k there and 0 elsewhere (log: -log k and -inf), so never inf - inf. A NaN: all NaN.
/// T = float or double; a scalar loop (such lines are rare), defined in normalize.cpp.
template <class T>
void nonfinite_softmax_line(const T* in, T* out, int64_t n, int64_t s, bool log);
/// True when the n elements s apart are all -inf (n >= 1): log_softmax's fully masked line.
template <class T>
bool all_minus_inf(const T* x, int64_t n, int64_t s);

// ---- layer-norm rows (layer_norm.cpp) ----
// `rows` contiguous rows of n f32, on Highway's best target for the CPU; L as above for f32, L/2 lanes of
// f64. Bounds checked against double references in tests/core/layer_norm_row_test.cpp on every target.

/// Layer norm of each row: mean and variance in double (Σ x_j, then Σ (x_j - mean)² with fused
/// multiply-adds where the target has them, element j into lane j mod L/2, the lanes added pairwise),
/// rstd = 1/sqrt(var + eps); x̂ = (x - mean)·rstd in double rounded once to f32 into xhat; x̂·w + b
/// (a rounded product, then a rounded sum: the bits of mul then add) into y where y is non-null (w or b may
/// then be null); each row's mean and rstd rounded to f32 into mean[i] and rstd[i]. Against the same maths
/// in double, with δ = (n + 8)·2^-53 and μ = 2^-52·Σ|x| (the double sums' errors), plus 2^-149 absolute:
/// mean within ε·|mean| + μ, rstd within (ε + δ)·rstd, x̂ within (ε + δ)·|x̂| + rstd·μ.
void layer_norm_f32(const float* x, float* xhat, float* y, const float* w, const float* b, int64_t rows, int64_t n,
                    double eps, float* mean, float* rstd);

/// The gradient of each row, with g = dy·w (dy where w is null): dx = rstd·(g - mean(g) - x̂·mean(g·x̂)),
/// the means summed in f32 (lane j mod L, fused multiply-adds where the target has them), within
/// (n + 8)·ε·rstd·(|g_j| + mean|g| + |x̂_j|·mean|g·x̂|) + 2^-149 absolute where no f32 sum overflows. dy·x̂
/// added into dw[0, n) and dy into db[0, n) in double, row after row, where they are non-null: each term is
/// exact, so these are the bits of a plain double loop over the rows.
void layer_norm_backward_f32(const float* dy, const float* xhat, const float* w, const float* rstd, float* dx,
                             double* dw, double* db, int64_t rows, int64_t n);

// ---- softmax and layer norm over a tensor (normalize.cpp), T = float or double ----
// Threaded over lines (rows); a contiguous f32 line runs the line kernels above, any other line (a stride, f64)
// the same maths in double with libm, the bits of a plain loop.

/// softmax_f32's maths along each line of the contiguous tensor x split as `a` (a line is a.n elements a.inner
/// apart), into y of x's layout.
template <class T>
void softmax_lines(const T* x, T* y, Around a);
/// log_softmax_f32's maths along each line, as softmax_lines.
template <class T>
void log_softmax_lines(const T* x, T* y, Around a);
/// softmax_backward_f32's maths along each line: dx from dy and the softmax y.
template <class T>
void softmax_backward_lines(const T* dy, const T* y, T* dx, Around a);
/// log_softmax_backward_f32's maths along each line: dx from dy and the log_softmax y.
template <class T>
void log_softmax_backward_lines(const T* dy, const T* y, T* dx, Around a);
/// softmax(masked_fill(x, blocked, -inf), -1), the bits of the two ops, for a contiguous x of `shape` (>= 1 dim) and
/// a mask read at strides ms (x's dims, 0 where it broadcasts).
template <class T>
void masked_softmax_lines(const T* x, const bool* blocked, const Shape& shape, const Strides& ms, T* y);
/// layer_norm_f32's rows (and contract) for f32, for f64 the same maths all in double.
template <class T>
void layer_norm_rows(const T* x, T* xhat, T* y, const T* w, const T* b, int64_t rows, int64_t n, double eps, T* mean,
                     T* rstd);
/// layer_norm_backward_f32's rows (and contract) for f32, for f64 the same maths all in double; dw and db (n doubles,
/// or null) get every row's terms, summed per chunk of rows and the chunks added in any order.
template <class T>
void layer_norm_backward_rows(const T* dy, const T* xhat, const T* w, const T* rstd, T* dx, double* dw, double* db,
                              int64_t rows, int64_t n);

// ---- packed masks (mask.cpp): f32 and f64, one bit per element, 64 to a word, element i at bit i % 64 of
// word i / 64; the words of an n-element line are words[0, (n + 63) / 64), and bits at n and past are 0.
// Exact: each lane does the scalar definition's one IEEE operation, so every target gives its bits.

/// out[i] = x[i]·(bit i ? scale : +0) for i in [0, n): dropout's forward (a NaN or inf in x stays NaN).
void mask_multiply(const uint64_t* bits, const float* x, float scale, float* out, int64_t n);
void mask_multiply(const uint64_t* bits, const double* x, double scale, double* out, int64_t n);
/// out[i] = bit i ? x[i]·scale : +0 for i in [0, n): masked_scale (dropout's and relu's gradient).
void mask_select(const uint64_t* bits, const float* x, float scale, float* out, int64_t n);
void mask_select(const uint64_t* bits, const double* x, double scale, double* out, int64_t n);
/// dropout(relu(x)): out[i] = r·(bit i ? scale : +0) with r = !(x[i] <= 0) ? x[i] : +0 (relu keeps a NaN),
/// and bit i cleared where r > 0 is false.
void relu_mask_multiply(uint64_t* bits, const float* x, float scale, float* out, int64_t n);
void relu_mask_multiply(uint64_t* bits, const double* x, double scale, double* out, int64_t n);
/// Bit i of the (n + 63) / 64 words = x[i] > 0 (false for NaN); the bits past n are 0.
void pack_positive(const float* x, uint64_t* words, int64_t n);
void pack_positive(const double* x, uint64_t* words, int64_t n);

/// Words for n bits (the (n + 63) / 64 of them), all n set where value, else all clear; bits past n 0 (bits.cpp).
void fill_bits(uint64_t* words, int64_t n, bool value);
/// out[i] = bit i, for i < n.
void unpack_bits(const uint64_t* words, bool* out, int64_t n);
/// softmax_backward_f32 of mask_select(keep, dy, scale) for `rows` lines of n (dropout after a softmax): the
/// bits of the two, without the masked dy as a whole tensor (a block of lines at a time, in dx).
void dropout_softmax_backward_f32(const uint64_t* keep, const float* dy, const float* y, float scale, float* dx,
                                  int64_t rows, int64_t n);

// ---- random lanes (xoshiro.cpp) ----

/// Eight xoshiro256** streams (Generator::next()'s, state word q of stream l in lanes[q][l]) each draw
/// 64·words numbers: bit j of out[l·words + w] = (draw 64·w + j of stream l) < threshold. The streams are
/// left in their final states. Exact: the bits of Generator::next() on every target.
void xoshiro_bits_below8(uint64_t (&lanes)[4][8], uint64_t threshold, uint64_t* out, int64_t words);

/// n draws of the xoshiro256** stream `state` (Generator's) as bits packed 64 to a word: bit i of words[i / 64] is
/// draw i < threshold, the bits past n 0; `state` is left after the n draws (xoshiro_jump.cpp). Blocks of 8·C
/// draws run on xoshiro_bits_below8, their lanes started C draws apart by jump polynomials. Exact: the bits of
/// n calls of Generator::next().
void xoshiro_bits_below(uint64_t (&state)[4], uint64_t threshold, uint64_t* words, int64_t n);

// ---- Adam (adam.cpp) ----

/// The scalars of one Adam or AdamW step of a parameter, as torch 1.13's _single_tensor_adam(w) uses them:
/// step_size = lr / (1 − β1ᵗ), sqrt_bias_correction2 = √(1 − β2ᵗ); decoupled for AdamW.
struct AdamScalars {
  double beta1, beta2, lr, weight_decay, eps, step_size, sqrt_bias_correction2;
  bool decoupled, amsgrad;
};

/// One f32 Adam step of elements [0, n) of a parameter p with gradient g, moments m and v, and (amsgrad
/// only; else null) v_max. Exact: the bits of optim/adam.cpp's scalar definition on every target (its f32
/// and f64 operations in its order, no fused multiply-add).
void adam_f32(float* p, const float* g, float* m, float* v, float* v_max, int64_t n, const AdamScalars& a);

// ---- elementwise (unary.cpp, pointwise.cpp, binary.cpp, reduce.cpp) ----
// Lines of n contiguous values; y may be x. Accuracies in ulp of the result (the denormal step below FLT_MIN),
// measured against the function in double (tests/core/unary_test.cpp, on every Highway target).

/// y = e^x: hwy/contrib/math's Exp, within 1 ulp; inf above 88.72, 0 below -103.97; exp(±inf) = inf, 0; NaN kept.
void exp_f32(const float* x, float* y, int64_t n);
/// y = tanh x: hwy/contrib/math's Tanh (expm1 based), within 4 ulp; ±0, ±inf (±1) and NaN as libm's.
void tanh_f32(const float* x, float* y, int64_t n);
/// y = σ(x) = 1/(1 + e^-x), as 1/(1 + e) or e/(1 + e) with e = e^-|x| by x's sign: within 3 ulp, both tails.
void sigmoid_f32(const float* x, float* y, int64_t n);
/// y = silu(x) = x·σ(x) (PyTorch's silu): σ as sigmoid_f32, then one product; within 4 ulp, or |x| denormal
/// steps where σ(x) is denormal (x < -87.3; PyTorch's f32 silu gives -0 below -88.7). silu(-inf) = -0, the limit (PyTorch: NaN).
void silu_f32(const float* x, float* y, int64_t n);
/// y = gelu(x) = x·Φ(x), our normal-tail polynomial (cpu/unary.cpp, tools/fit_gelu.py): within 8 ulp, the left
/// tail and its denormals included (PyTorch's f32 erf form cancels to 0 below -5.7); gelu(-inf) = -0, the limit
/// (PyTorch: NaN); ±0, inf and NaN kept.
void gelu_f32(const float* x, float* y, int64_t n);
/// gelu's tanh form, x/(1 + e^(-2u)) with u = √(2/π)(x + 0.044715x³): within 4·(1 + 2|u|) ulp of that formula in
/// double for u < 0 (the rounding of u is amplified by the exp), 4 ulp for u ≥ 0. gelu(-inf) = -0, the limit.
void gelu_tanh_f32(const float* x, float* y, int64_t n);
/// dx = dy·gelu'(x), gelu'(x) = Φ(x) + x·φ(x) within 4 ulp of the larger of Φ(x) and |x|·φ(x) (they cancel
/// near x = -0.75; 5 ulp on targets without FMA: SSE4, scalar), then one product. NaN for x NaN; the limits 1 at +inf
/// and 0 at -inf (PyTorch: NaN).
void gelu_backward_f32(const float* dy, const float* x, float* dx, int64_t n);

/// The f64 gelu_backward_f32: dx = dy·(Φ(x) + x·φ(x)) with libm's erfc and exp in double, the limits 1 and 0 at
/// ±inf; a scalar loop (pointwise.cpp), as are the two below.
void gelu_backward_f64(const double* dy, const double* x, double* dx, int64_t n);
/// dx = dy·(1 - y·y) from tanh's output y, each operation in T (the bits of the composition); T = float or double.
template <class T>
void tanh_backward(const T* dy, const T* y, T* dx, int64_t n);
/// Whether none of x[0, n) is inf or NaN, tested on the bits (exponent all ones) so that the loop vectorises;
/// T = float or double.
template <class T>
bool all_finite(const T* x, int64_t n);

/// out[r, j] = row[j] for r < rows and j < n (linear's output prefilled with its bias), rows threaded over the pool.
void repeat_row(const float* row, float* out, int64_t rows, int64_t n);

/// The exact IEEE arithmetic of core's binary ops (the same bits on every target and as a scalar loop).
enum class Arith { add, sub, mul, div };
/// out[i] = a[i] op b[i] for i < n; a_scalar (b_scalar) makes a[0] (b[0]) the operand of every i. out may be
/// a or b.
void arith_f32(Arith op, const float* a, bool a_scalar, const float* b, bool b_scalar, float* out, int64_t n);
void arith_f64(Arith op, const double* a, bool a_scalar, const double* b, bool b_scalar, double* out, int64_t n);
/// The repeated row (a bias): out[r, j] = full[r, j] op row[j], or row[j] op full[r, j] when row_first, for
/// r < rows and j < m; full and out are rows × m.
void arith_rows_f32(Arith op, const float* full, const float* row, bool row_first, float* out, int64_t rows,
                    int64_t m);
void arith_rows_f64(Arith op, const double* full, const double* row, bool row_first, double* out, int64_t rows,
                    int64_t m);

// ---- lookups (index.cpp) on checked indices; T = float, double or int64_t (move_slices: also bool) ----

/// Of contiguous tensors split as s and d around one dim: for each (dj, sj) in pairs, slice dj of dst = slice sj
/// of src, or += it with `add` (in order, so repeated dj accumulate).
template <class T>
void move_slices(const T* src, T* dst, Around s, Around d, const std::vector<std::pair<int64_t, int64_t>>& pairs,
                 bool add);
/// Bags of rows of D: out[m] += rows[index[m, n]] for index (M, N) (embedding_bag_sum), or with `adjoint`
/// out[index[m, n]] += rows[m]; entries equal to padding_idx are skipped. In the order of m, then n.
template <class T>
void bag_sum(const T* rows, const int64_t* index, int64_t M, int64_t N, int64_t D, int64_t padding_idx, bool adjoint,
             T* out);

/// gather: out[p] = x at p's coordinates with the one along `dim` replaced by index[p], for each position p of the
/// contiguous index of shape `is` (x contiguous of shape `xs`, same ndim). T = float, double, int64_t or bool.
template <class T>
void gather_along(const T* x, const Shape& xs, const int64_t* index, const Shape& is, int64_t dim, T* out);
/// scatter (scatter_add with `add`): x at gather_along's position for p = src[p] (+= src[p]), in the order of p, so
/// that among repeated positions the last write wins; src contiguous of the index's shape `is`.
template <class T>
void scatter_along(const T* src, const int64_t* index, const Shape& is, int64_t dim, const Shape& xs, bool add, T* x);

// ---- row reductions (reduce_rows.cpp) ----
// `rows` contiguous rows of len, one result per row, threaded over rows. Float sums accumulate in double in the
// order of the row: the same bits at any thread count and on every target.

/// out[r] = T(Σ row r / divisor), T = float or double (divisor 1: the sum; len: the mean, NaN for len 0).
template <class T>
void sum_rows(const T* x, int64_t rows, int64_t len, double divisor, T* out);
/// out[r] = Σ row r, T = int64_t or bool, wrapping around on overflow as PyTorch's integer sum does.
template <class T>
void wrapping_sum_rows(const T* x, int64_t rows, int64_t len, int64_t* out);
/// out[o, i] = T(Σ_j x[o, j, i] / divisor) over (outer, len, inner) blocks, len >= 1, T = float or double: each
/// element's terms in the order of j, as sum_rows's.
template <class T>
void sum_blocks(const T* x, int64_t outer, int64_t len, int64_t inner, double divisor, T* out);
/// out[r] = Σ (x - mean)² / (len - correction) over row r, two passes in double, T = float or double; the
/// caller ensures len > correction. A row holding ±inf (no NaN) gives +inf: its spread is unbounded.
template <class T>
void var_rows(const T* x, int64_t rows, int64_t len, int64_t correction, T* out);
/// out[r] = max + log Σ exp(x - max) over row r in double, T = float or double; max when it is not finite (an
/// all -inf row gives -inf, one holding +inf gives +inf), NaN when the row holds a NaN.
template <class T>
void logsumexp_rows(const T* x, int64_t rows, int64_t len, T* out);
/// The largest (or with !largest the smallest) value of each row, len >= 1, and its first index (indices may be
/// null: values only, f32 rows then by extreme_f32); a NaN wins, as in PyTorch. T = float, double or int64_t.
template <class T>
void extreme_rows(const T* x, int64_t rows, int64_t len, bool largest, T* values, int64_t* indices);

/// acc[i] += Σ_j src[j·stride + i] for i < m and j < len: each term widened to double and added in the order of
/// j (exact order, the same bits on every target).
void add_columns_f32(const float* src, int64_t len, int64_t stride, int64_t m, double* acc);

// ---- sorting (sort.cpp) ----

/// The first k (<= len) entries of each of `rows` contiguous rows of len in order, ascending or with
/// `descending` descending, NaN above every number and ties in index order (a stable sort, as PyTorch's
/// stable=True): values and indices (rows, k). T = float, double or int64_t.
template <class T>
void sort_rows(const T* x, int64_t rows, int64_t len, int64_t k, bool descending, T* values, int64_t* indices);

// ---- convolution windows (im2col.cpp): f32 and f64 ----

/// A sliding window over N images of C planes H x W, one after another: kernel kh x kw, stride (sh, sw),
/// padding (ph, pw) before the first row and column, dilation (dh, dw), and the output size oh x ow. Output
/// position (y, x) and kernel tap (i, j) read input (y·sh - ph + i·dh, x·sw - pw + j·dw); positions outside
/// the image are padding. The images are split over the threads; each is done as on one.
struct Window2d {
  int64_t N, C, H, W, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow;
};
/// Each image's (C·kh·kw, oh·ow) columns, one after another: each output position's window as a column,
/// col[n, (c·kh + i)·kw + j, y·ow + x] = image[n, c, y·sh - ph + i·dh, x·sw - pw + j·dw], 0 on padding.
/// Exact (copies).
void im2col(const float* image, const Window2d& w, float* col);
void im2col(const double* image, const Window2d& w, double* col);
/// The adjoint of im2col: adds every col entry into the images (N, C, H, W) at the position im2col read it
/// from (entries on padding are dropped). The images are not cleared first; each element adds its terms in
/// the order (c, i, j, y, x) of the column entries.
void col2im_add(const float* col, const Window2d& w, float* image);
void col2im_add(const double* col, const Window2d& w, double* image);
/// Max pooling's choice for the N·C planes: idx[((n·C + c)·oh + y)·ow + x] = the flat index into the images
/// of the largest input of window (y, x) in plane (n, c), the first in row-major window order among ties,
/// and the last NaN if there is one (as PyTorch's kernel); padding never wins. Every window must hold an
/// input.
void max_pool_argmax(const float* image, const Window2d& w, int64_t* idx);
void max_pool_argmax(const double* image, const Window2d& w, int64_t* idx);

// ---- scans and index maps (scan.cpp, remap.cpp): T = float, double or int64_t (remap: also bool) ----

/// Running sums (or with `product`, running products) along the lines of the contiguous x split as `a`, into
/// y of the same layout: y(o, j, i) = x(o, 0, i) + ... + x(o, j, i). Floats accumulate in double and round each
/// output once (PyTorch's CPU cumsum/cumprod use double as their accumulator too); i64 wraps around on overflow
/// as PyTorch does. Threaded over the outer blocks; the same bits at any thread count.
template <class T>
void cumulate(const T* x, T* y, Around a, bool product);

/// Per-dim index maps: maps[d][i] is the source index along dim d of output index i, or -1 for "no source"
/// (padding). The output's shape is (maps[0].size(), maps[1].size(), ...).
using IndexMaps = std::vector<std::vector<int64_t>>;
/// out (contiguous, row-major) = src at (maps[0][i0], maps[1][i1], ...) under src_strides, or `fill` where a
/// map says -1: flip, roll, pad and repeat as one gather. With no maps (0-d) it copies one element. Exact.
template <class T>
void remap(const T* src, const Strides& src_strides, const IndexMaps& maps, T fill, T* out);
/// Its adjoint: dst (under dst_strides) at (maps[0][i0], ...) += g(i0, i1, ...) for the contiguous g of the maps'
/// shape, skipping -1 entries; sources that several outputs read add up, in row-major order of g.
template <class T>
void remap_add(const T* g, const IndexMaps& maps, const Strides& dst_strides, T* dst);

}  // namespace tg::cpu
