// Small f32 GEMMs without OpenBLAS's per-call costs (packing both operands, zeroing C with sgemm_beta, the
// level-3 driver), for the tiny products of small transformers: 64 x 64 weights, per-head (S x 16) @ (16 x S).
// Each element of C sums its terms over k in order with one FMA per term into one accumulator started at +0.
//
// On OpenBLAS's SkylakeX core every published result was computed with OpenBLAS's summation order, so there
// this path is taken only where it gives the same bits. Debian's OpenBLAS 0.3.21 on that core sums as above
// (its small-matrix kernels, and its level-3 kernel within one K block), except where measured otherwise
// below. Found by comparing with cblas_sgemm bit for bit over a sweep of shapes
// (tests/core/sgemm_small_test.cpp runs that sweep on every build):
//  - K > 448 (SGEMM_DEFAULT_Q) on the level-3 path: the driver sums k in blocks and adds the blocks' sums
//    into C. With one thread the blocks follow driver/level3/level3.c (next_block below: K = 593 is
//    304 + 289); with more they are split otherwise (297 + 296), so those products stay on OpenBLAS;
//  - its small-matrix kernels (M·N·K <= 100^3) for row-major A @ B sum "dot style" in 16 lanes reduced by a
//    tree when N % 16 is 1..8 and K >= 32, and for row-major A @ Bᵀ always (taken when M·N <= 1200 and
//    K >= 32).
// Where C's sum is -0 (every product an underflow to -0), the level-3 path stores it onto a zeroed C and
// gives +0, the small-matrix kernels store -0: the store below does the same.
//
// Other cores' kernels sum otherwise, and not in one order we could follow: on an AMD EPYC (Zen 3), the
// Zen core's sgemm gives some elements, depending on their row and column in its tiles, two accumulators
// (even and odd k) that it adds at the end. There, with an AVX2 and FMA CPU, every product under 256³
// multiply-adds is ours, summed in order in one pass (K not blocked): its bits are the in-order sum's, not
// OpenBLAS's, and the same at any thread count (linalg.cpp splits a product over threads only from 2·256³).
#include "core/cpu/kernels.h"

#include <cblas.h>
#include <immintrin.h>

#include <array>
#include <cstring>
#include <utility>
#include <vector>

namespace tg::cpu {
namespace {

constexpr int64_t kBlockK = 448;                // OpenBLAS SkylakeX SGEMM_DEFAULT_Q
constexpr double kSmallMNK = 100.0 * 100 * 100;  // sgemm_small_matrix_permit's limit
constexpr double kThreadMNK = 65536.0 * 4;       // OpenBLAS runs a product on one thread up to here
constexpr double kMaxMNK = 256.0 * 256 * 256;    // from here OpenBLAS's cache blocking wins: left to it
constexpr int64_t kInOrderK = 256;               // K block of the in-order mode

// Where our kernel runs: nowhere, on OpenBLAS's SkylakeX core where it gives its bits, or (other cores, an
// AVX2 and FMA CPU) on every small product, summed in order. Its vectors: AVX-512 where the CPU has it.
enum class Mode { off, blas_bits, in_order };
struct Target {
  Mode mode;
  bool avx512;
};
const Target& target() {
  static const Target t = [] {
    __builtin_cpu_init();
    const bool avx512 = __builtin_cpu_supports("avx512f");
    if (avx512 && std::strcmp(openblas_get_corename(), "SkylakeX") == 0) return Target{Mode::blas_bits, true};
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return Target{Mode::in_order, avx512};
    return Target{Mode::off, false};
  }();
  return t;
}

// How a block's sums reach C: stored as they are (small-matrix kernels), added to a zeroed C (the level-3
// kernel on the first K block), or added to C (the next K blocks). With `resume` the accumulators start from
// C, a partial sum stored as it was: the in-order sum over K blocks, the bits of one pass.
enum class Store { sum, onto_zero, add, resume };

// MR rows x NV vectors of 16 columns of C: acc = fma(A(i, k), B(k, j), acc) for k = 0..K-1. A(i, k) is
// a[i·ai + k·ak]; B's rows are contiguous (b[k·ldb + j]); the last vector has `tail` columns (1..16).
// A bias (bias[j], or null) is added to what is stored, as a separate add of the bias to C would.
template <int MR, int NV>
[[gnu::target("avx512f")]] void block512(const float* a, int64_t ai, int64_t ak, const float* b, int64_t ldb,
                                         float* c, int64_t ldc, int64_t K, int64_t tail, Store store,
                                         const float* bias) {
  const __mmask16 last = __mmask16((1u << tail) - 1);
  __m512 acc[MR][NV];
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v)
      acc[r][v] = store == Store::resume ? _mm512_maskz_loadu_ps(v + 1 < NV ? 0xffff : last, c + r * ldc + 16 * v)
                                         : _mm512_setzero_ps();
  for (int64_t k = 0; k < K; ++k) {
    // Rows of A read along k (ak = 1): each is a stream of a cache line every 16 k, MR of them in one page,
    // which the hardware prefetcher picks up late on every new page. The next block's rows are fetched now
    // (per-head p @ v of config M, 256 products: 2.6 -> 1.6 ms on an AMD EPYC, Zen 5; past the last block
    // they are the next product's). A prefetch never faults.
    if (ak == 1 && k % 16 == 0)
#pragma GCC unroll 16
      for (int r = 0; r < MR; ++r) _mm_prefetch(reinterpret_cast<const char*>(a + (r + MR) * ai + k), _MM_HINT_T0);
    __m512 bv[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v)
      bv[v] = v + 1 < NV ? _mm512_loadu_ps(b + k * ldb + 16 * v) : _mm512_maskz_loadu_ps(last, b + k * ldb + 16 * v);
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      __m512 av = _mm512_set1_ps(a[r * ai + k * ak]);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_fmadd_ps(av, bv[v], acc[r][v]);
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      float* to = c + r * ldc + 16 * v;
      __m512 x = acc[r][v];
      if (store == Store::onto_zero) x = _mm512_add_ps(_mm512_setzero_ps(), x);  // +0 + -0 = +0
      if (store == Store::add) x = _mm512_add_ps(_mm512_maskz_loadu_ps(v + 1 < NV ? 0xffff : last, to), x);
      if (bias) x = _mm512_add_ps(x, _mm512_maskz_loadu_ps(v + 1 < NV ? 0xffff : last, bias + 16 * v));
      if (v + 1 < NV) _mm512_storeu_ps(to, x);
      else _mm512_mask_storeu_ps(to, last, x);
    }
}

// block512 on AVX2: NV vectors of 8 columns, the last with `tail` (1..8). Only the in-order mode runs it, which
// stores sums (Store::sum) or resumes them (Store::resume).
template <int MR, int NV>
[[gnu::target("avx2,fma")]] void block256(const float* a, int64_t ai, int64_t ak, const float* b, int64_t ldb,
                                          float* c, int64_t ldc, int64_t K, int64_t tail, Store store,
                                          const float* bias) {
  const __m256i last = _mm256_cmpgt_epi32(_mm256_set1_epi32(int(tail)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  __m256 acc[MR][NV];
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v)
      acc[r][v] = store != Store::resume ? _mm256_setzero_ps()
                  : v + 1 < NV           ? _mm256_loadu_ps(c + r * ldc + 8 * v)
                                         : _mm256_maskload_ps(c + r * ldc + 8 * v, last);
  for (int64_t k = 0; k < K; ++k) {
    __m256 bv[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v)
      bv[v] = v + 1 < NV ? _mm256_loadu_ps(b + k * ldb + 8 * v) : _mm256_maskload_ps(b + k * ldb + 8 * v, last);
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      __m256 av = _mm256_broadcast_ss(a + r * ai + k * ak);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[r][v] = _mm256_fmadd_ps(av, bv[v], acc[r][v]);
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      float* to = c + r * ldc + 8 * v;
      __m256 x = acc[r][v];
      if (v + 1 < NV) {
        if (bias) x = _mm256_add_ps(x, _mm256_loadu_ps(bias + 8 * v));
        _mm256_storeu_ps(to, x);
      } else {
        if (bias) x = _mm256_add_ps(x, _mm256_maskload_ps(bias + 8 * v, last));
        _mm256_maskstore_ps(to, last, x);
      }
    }
}

using BlockFn = void (*)(const float*, int64_t, int64_t, const float*, int64_t, float*, int64_t, int64_t, int64_t,
                         Store, const float*);
// A kernel family: `lanes` floats a vector, up to kRows[NV] rows by NV vectors a block (NV = 1..kVectors).
// The rows give enough accumulators to cover the FMA latency (4 cycles at 2 a cycle) while they, NV rows of B
// and a broadcast fit the registers: at most 24 of 32 zmm, 12 of 16 ymm.
struct Kernels {
  int64_t lanes, vectors;
  const int* rows;
  const BlockFn* const* blocks;  // blocks[NV][MR - 1]
};
template <int NV, size_t... R>
constexpr std::array<BlockFn, sizeof...(R)> blocks512(std::index_sequence<R...>) {
  return {block512<int(R) + 1, NV>...};
}
template <int NV, size_t... R>
constexpr std::array<BlockFn, sizeof...(R)> blocks256(std::index_sequence<R...>) {
  return {block256<int(R) + 1, NV>...};
}
constexpr int kRows512[5] = {0, 12, 8, 6, 6}, kRows256[3] = {0, 12, 6};
template <int NV>
constexpr auto kBlocks512For = blocks512<NV>(std::make_index_sequence<kRows512[NV]>());
template <int NV>
constexpr auto kBlocks256For = blocks256<NV>(std::make_index_sequence<kRows256[NV]>());
const BlockFn* const kBlocks512[5] = {nullptr, kBlocks512For<1>.data(), kBlocks512For<2>.data(),
                                      kBlocks512For<3>.data(), kBlocks512For<4>.data()};
const BlockFn* const kBlocks256[3] = {nullptr, kBlocks256For<1>.data(), kBlocks256For<2>.data()};
const Kernels kAvx512{16, 4, kRows512, kBlocks512}, kAvx2{8, 2, kRows256, kBlocks256};

// Whether OpenBLAS's interface (interface/gemm.c, sgemm_small_matrix_permit) takes its small-matrix kernels
// rather than the level-3 driver. Row-major A @ Bᵀ is its column-major "TN" case.
bool small_kernels(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K) {
  if (double(M) * double(N) * double(K) > kSmallMNK) return false;
  return !(!trans_a && trans_b && (M * N > 1200 || K < 32));
}

// The level-3 driver's K blocks with one thread (driver/level3/level3.c): a whole block while 2 or more
// remain, then the rest in one block, or in two halves (the first rounded up to 16) if it is over one block.
int64_t next_block(int64_t rest) {
  if (rest >= 2 * kBlockK) return kBlockK;
  return rest > kBlockK ? (rest / 2 + 15) / 16 * 16 : rest;
}

// out (K x N, row-major) = the transpose of b (N x K, row stride ldb).
void transpose_rows(const float* b, int64_t ldb, int64_t N, int64_t K, float* out) {
  for (int64_t j = 0; j < N; ++j)
    for (int64_t k = 0; k < K; ++k) out[k * N + j] = b[j * ldb + k];
}

// transpose_rows with 16 entries of a row of out, ldb apart in b, in one gather (the scalar loop was 2.6 %
// of a bench_step S profile on SkylakeX, mostly the per-head q @ kᵀ). Strides whose 16th multiple does not
// fit the gather's 32-bit offsets take the scalar loop.
[[gnu::target("avx512f")]] void transpose512(const float* b, int64_t ldb, int64_t N, int64_t K, float* out) {
  if (16 * ldb > INT32_MAX) return transpose_rows(b, ldb, N, K, out);
  const __m512i offsets = _mm512_mullo_epi32(_mm512_set1_epi32(int32_t(ldb)),
                                             _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
  for (int64_t j = 0; j < N; j += 16) {
    const __mmask16 cols = N - j >= 16 ? __mmask16(0xffff) : __mmask16((1u << (N - j)) - 1);
    for (int64_t k = 0; k < K; ++k)
      _mm512_mask_storeu_ps(out + k * N + j, cols,
                            _mm512_mask_i32gather_ps(_mm512_setzero_ps(), cols, offsets, b + j * ldb + k, 4));
  }
}

// transpose_rows in 8 x 8 tiles of AVX2 shuffles (the scalar loop was 3 % of bench_step S on a Zen 3); the
// edges of N and K that fill no tile take the scalar loop.
[[gnu::target("avx2")]] void transpose256(const float* b, int64_t ldb, int64_t N, int64_t K, float* out) {
  const int64_t n8 = N / 8 * 8, k8 = K / 8 * 8;
  for (int64_t j = 0; j < n8; j += 8)
    for (int64_t k = 0; k < k8; k += 8) {
      __m256 r[8], t[8];
      for (int q = 0; q < 8; ++q) r[q] = _mm256_loadu_ps(b + (j + q) * ldb + k);
      for (int q = 0; q < 8; q += 2) {  // pairs of rows interleaved
        t[q] = _mm256_unpacklo_ps(r[q], r[q + 1]);
        t[q + 1] = _mm256_unpackhi_ps(r[q], r[q + 1]);
      }
      for (int q = 0; q < 8; q += 4)  // then fours: lane l of row c holds b[j + q..q+3][k + ...]
        for (int h = 0; h < 2; ++h) {
          r[q + 2 * h] = _mm256_shuffle_ps(t[q + h], t[q + 2 + h], _MM_SHUFFLE(1, 0, 1, 0));
          r[q + 2 * h + 1] = _mm256_shuffle_ps(t[q + h], t[q + 2 + h], _MM_SHUFFLE(3, 2, 3, 2));
        }
      for (int q = 0; q < 4; ++q) {  // and the 128-bit halves: rows j..j+3 with j+4..j+7
        _mm256_storeu_ps(out + (k + q) * N + j, _mm256_permute2f128_ps(r[q], r[q + 4], 0x20));
        _mm256_storeu_ps(out + (k + q + 4) * N + j, _mm256_permute2f128_ps(r[q], r[q + 4], 0x31));
      }
    }
  for (int64_t jj = 0; jj < N; ++jj)
    for (int64_t kk = jj < n8 ? k8 : 0; kk < K; ++kk) out[kk * N + jj] = b[jj * ldb + kk];
}

}  // namespace

bool sgemm_small_gives_blas_bits() { return target().mode == Mode::blas_bits; }

bool sgemm_small_takes(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K) {
  const Mode mode = target().mode;
  if (mode == Mode::off || K < 1 || M < 1 || N < 1) return false;
  const double mnk = double(M) * double(N) * double(K);
  if (mnk >= kMaxMNK) return false;
  if (mode == Mode::in_order) return true;
  // The level-3 path: products OpenBLAS would spread over its threads stay there (ours runs on one), and
  // its K blocks are known for one thread only.
  if (!small_kernels(trans_a, trans_b, M, N, K))
    return openblas_get_num_threads() == 1 || (mnk <= kThreadMNK && K <= kBlockK);
  if (K < 32) return true;
  if (!trans_a && !trans_b) return N % 16 == 0 || N % 16 > 8;  // else the dot-style remainder kernel
  return !(!trans_a && trans_b);                                // the "TN" small kernel is dot-style
}

bool sgemm_sums_onto_c(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K) {
  return sgemm_small_gives_blas_bits() && K >= 1 && K <= kBlockK && M >= 1 && N >= 1 &&
         !small_kernels(trans_a, trans_b, M, N, K);
}

void sgemm_small_batched(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, const float* a, int64_t lda,
                         const int64_t* a_at, const float* b, int64_t ldb, const int64_t* b_at, float* c,
                         const int64_t* c_at, int64_t ldc, int64_t count, const float* bias) {
  const bool avx512 = target().avx512;
  const Kernels& kernels = avx512 ? kAvx512 : kAvx2;
  const int64_t width = kernels.lanes * kernels.vectors;  // columns a block takes at most
  // Bᵀ stored (N x K) is copied to (K x N) so that each k reads a contiguous row of B.
  thread_local std::vector<float> packed;
  if (trans_b) packed.resize(size_t(K * N));
  const int64_t ai = trans_a ? 1 : lda, ak = trans_a ? lda : 1;
  // OpenBLAS's level-3 K blocks where we give its bits, else blocks of kInOrderK resumed from C (one pass's
  // bits): a block's rows of B stay in L1 for every block of rows of A.
  const bool blas_bits = sgemm_small_gives_blas_bits();
  const bool level3 = blas_bits && !small_kernels(trans_a, trans_b, M, N, K);
  for (int64_t p = 0; p < count; ++p) {
    const float* pa = a + a_at[p];
    const float* pb = b + b_at[p];
    int64_t ld = ldb;
    float* pc = c + c_at[p];
    if (trans_b) {
      (avx512 ? transpose512 : transpose256)(pb, ldb, N, K, packed.data());
      pb = packed.data(), ld = N;
    }
    for (int64_t k0 = 0; k0 < K;) {
      const int64_t kl = level3 ? next_block(K - k0) : blas_bits ? K : std::min(kInOrderK, K - k0);
      const Store store = level3 ? (k0 == 0 ? Store::onto_zero : Store::add) : k0 == 0 ? Store::sum : Store::resume;
      const float* with = k0 + kl == K ? bias : nullptr;  // onto the complete sum
      for (int64_t j = 0; j < N; j += width) {
        const int64_t cols = std::min(width, N - j), nv = (cols + kernels.lanes - 1) / kernels.lanes;
        const int64_t tail = cols - kernels.lanes * (nv - 1), step = kernels.rows[nv];
        for (int64_t i = 0; i < M; i += step) {
          const int64_t rows = std::min(step, M - i);
          kernels.blocks[nv][rows - 1](pa + i * ai + k0 * ak, ai, ak, pb + k0 * ld + j, ld, pc + i * ldc + j, ldc, kl,
                                       tail, store, with ? with + j : nullptr);
        }
      }
      k0 += kl;
    }
  }
}

}  // namespace tg::cpu
