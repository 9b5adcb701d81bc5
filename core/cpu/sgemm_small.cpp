// Small f32 GEMMs without OpenBLAS's per-call costs (packing both operands, zeroing C, the level-3 driver),
// for the tiny products of small transformers: 64 x 64 weights, per-head (S x 16) @ (16 x S); and products of
// every size where OpenBLAS runs kernels for narrower vectors than the CPU has (sgemm_small_takes). Each element of
// C sums its terms over k in order into one accumulator started at +0, one multiply-add a term (an FMA where
// the target has one; SSE4 and the scalar target round the product, then the sum), with the bias, if any,
// added to the whole sum. C is computed in blocks of rows and columns and in K blocks whose partial sums wait
// in C (exactly, as floats) for the next: the bits of one pass, whatever the block, the batch run or the thread.
//
// Written once on Highway and dispatched at run time (AVX-512, AVX2, SSE4, NEON, scalar). SVE targets are not
// built here: the blocks hold their accumulators in arrays, which SVE's sizeless vectors cannot be (the NEON
// code runs on those CPUs).
#undef HWY_DISABLED_TARGETS
#define HWY_DISABLED_TARGETS (HWY_SSSE3 | HWY_SVE | HWY_SVE2 | HWY_SVE_256 | HWY_SVE2_128)
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "core/cpu/sgemm_small.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/aligned_allocator.h>
#include <hwy/cache_control.h>
#include <hwy/highway.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>

#include "core/cpu/kernels.h"

HWY_BEFORE_NAMESPACE();
namespace tg::cpu::HWY_NAMESPACE {
namespace {

namespace hn = hwy::HWY_NAMESPACE;
using D = hn::ScalableTag<float>;
using V = hn::Vec<D>;

// A block is up to kRows[NV] rows by NV vectors of C (NV = 1..kVectors). The rows give enough accumulators to
// cover the multiply-add latency, while they, NV vectors of B and a broadcast fit the registers: at most 24
// of 32 (AVX-512, NEON), 12 of 16 (AVX2, SSE4).
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL || HWY_TARGET == HWY_NEON
constexpr int kVectors = 4;
constexpr int kRows[kVectors + 1] = {0, 12, 8, 6, 6};
#else
constexpr int kVectors = 2;
constexpr int kRows[kVectors + 1] = {0, 12, 6};
#endif
constexpr int64_t kBlockK = 256;  // a K block's rows of B stay in L1 for every block of rows of A

// The first n (1..lanes) floats at p, zeros after them; and the store of v's first n lanes to p. AVX2 and
// AVX-512 have masked moves; Highway's on SSE4, NEON and the scalar target move whole vectors (past the end
// of a row, or onto another thread's columns), so there the tail goes through a buffer.
#if HWY_TARGET == HWY_AVX2 || !HWY_MEM_OPS_MIGHT_FAULT
HWY_INLINE V LoadFirst(D d, const float* p, size_t n) { return hn::MaskedLoad(hn::FirstN(d, n), d, p); }
HWY_INLINE void StoreFirst(V v, D d, float* p, size_t n) { hn::BlendedStore(v, hn::FirstN(d, n), d, p); }
#else
HWY_INLINE V LoadFirst(D d, const float* p, size_t n) {
  if (n == hn::MaxLanes(d)) return hn::LoadU(d, p);
  HWY_ALIGN float buffer[hn::MaxLanes(D())] = {};
  std::memcpy(buffer, p, n * sizeof(float));
  return hn::Load(d, buffer);
}
HWY_INLINE void StoreFirst(V v, D d, float* p, size_t n) {
  if (n == hn::MaxLanes(d)) return hn::StoreU(v, d, p);
  HWY_ALIGN float buffer[hn::MaxLanes(D())];
  hn::Store(v, d, buffer);
  std::memcpy(p, buffer, n * sizeof(float));
}
#endif

// MR rows x NV vectors of C: acc = acc + A(i, k)·B(k, j) for k = 0..K-1, from +0, or from C's partial sums
// with `resume`. A(i, k) is a[i·ai + k·ak]; B's rows are contiguous (b[k·ldb + j]); the last vector has `tail`
// columns (1..lanes). A bias (bias[j], or null) is added to what is stored. Whole vectors are loaded and
// stored plainly, only the last one partly (masked loads defeat the hardware prefetcher).
template <int MR, int NV>
void Block(const float* a, int64_t ai, int64_t ak, const float* b, int64_t ldb, float* c, int64_t ldc, int64_t K,
           size_t tail, bool resume, const float* bias) {
  const D d;
  const size_t lanes = hn::Lanes(d);
  V acc[MR][NV];
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      const float* from = c + r * ldc + lanes * v;
      acc[r][v] = !resume ? hn::Zero(d) : v + 1 < NV ? hn::LoadU(d, from) : LoadFirst(d, from, tail);
    }
  for (int64_t k = 0; k < K; ++k) {
    // Rows of A read along k (ak = 1) are MR streams of a cache line every 16 k, which the hardware
    // prefetcher picks up late on every new page: the next block's rows are fetched now (past the last
    // block, the next product's). A prefetch never faults.
    if (ak == 1 && k % 16 == 0)
#pragma GCC unroll 16
      for (int r = 0; r < MR; ++r) hwy::Prefetch(a + (r + MR) * ai + k);
    V bv[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      const float* from = b + k * ldb + lanes * v;
      bv[v] = v + 1 < NV ? hn::LoadU(d, from) : LoadFirst(d, from, tail);
    }
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      const V av = hn::Set(d, a[r * ai + k * ak]);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[r][v] = hn::MulAdd(av, bv[v], acc[r][v]);
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      float* to = c + r * ldc + lanes * v;
      V x = acc[r][v];
      if (v + 1 < NV) {
        if (bias) x = hn::Add(x, hn::LoadU(d, bias + lanes * v));
        hn::StoreU(x, d, to);
      } else {
        if (bias) x = hn::Add(x, LoadFirst(d, bias + lanes * v, tail));
        StoreFirst(x, d, to, tail);
      }
    }
}

using BlockFn = void (*)(const float*, int64_t, int64_t, const float*, int64_t, float*, int64_t, int64_t, size_t,
                         bool, const float*);
template <int NV, size_t... R>
constexpr std::array<BlockFn, sizeof...(R)> BlocksOf(std::index_sequence<R...>) {
  return {Block<int(R) + 1, NV>...};
}
template <int NV>
constexpr auto kBlocksOf = BlocksOf<NV>(std::make_index_sequence<kRows[NV]>());
template <size_t... NV>
constexpr std::array<const BlockFn*, sizeof...(NV) + 1> AllBlocks(std::index_sequence<NV...>) {
  return {nullptr, kBlocksOf<int(NV) + 1>.data()...};
}
constexpr auto kBlocks = AllBlocks(std::make_index_sequence<kVectors>());  // kBlocks[NV][MR - 1]

#if HWY_TARGET != HWY_SCALAR  // which has no interleaves
// out (K x N, row-major) = the transpose of b (N x K, row stride ldb) in tiles of lanes x lanes (4 or 8),
// over the columns and k that fill whole tiles: pairs of rows interleaved, then pairs of those (as 64-bit
// lanes), which transposes each 128-bit block, then (8 lanes) the blocks exchanged.
template <class DF>
void TransposeTiles(DF d, const float* b, int64_t ldb, int64_t N, int64_t K, float* out) {
  using VF = hn::Vec<DF>;
  constexpr int64_t kLanes = int64_t(hn::MaxLanes(DF()));
  const hn::Repartition<uint64_t, DF> d64;
  auto pairs = [&](VF x, VF y, bool upper) {
    return hn::BitCast(d, upper ? hn::InterleaveUpper(d64, hn::BitCast(d64, x), hn::BitCast(d64, y))
                                : hn::InterleaveLower(d64, hn::BitCast(d64, x), hn::BitCast(d64, y)));
  };
  for (int64_t j = 0; j + kLanes <= N; j += kLanes)
    for (int64_t k = 0; k + kLanes <= K; k += kLanes) {
      VF r[kLanes], t[kLanes];
      for (int64_t q = 0; q < kLanes; ++q) r[q] = hn::LoadU(d, b + (j + q) * ldb + k);
      for (int64_t q = 0; q < kLanes; q += 2) {
        t[q] = hn::InterleaveLower(d, r[q], r[q + 1]);
        t[q + 1] = hn::InterleaveUpper(d, r[q], r[q + 1]);
      }
      for (int64_t q = 0; q < kLanes; q += 4)
        for (int64_t h = 0; h < 2; ++h) {
          r[q + 2 * h] = pairs(t[q + h], t[q + 2 + h], false);
          r[q + 2 * h + 1] = pairs(t[q + h], t[q + 2 + h], true);
        }
      for (int64_t q = 0; q < 4; ++q) {
        if constexpr (kLanes == 4) {
          hn::StoreU(r[q], d, out + (k + q) * N + j);
        } else {
          hn::StoreU(hn::ConcatLowerLower(d, r[q + 4], r[q]), d, out + (k + q) * N + j);
          hn::StoreU(hn::ConcatUpperUpper(d, r[q + 4], r[q]), d, out + (k + q + 4) * N + j);
        }
      }
    }
}
#endif

// out (K x N, row-major) = the transpose of b (N x K, row stride ldb): tiles of 4 or 8 lanes (AVX-512 takes
// 8-lane tiles of its 256-bit half: gathers of 16 entries ldb apart cost more than the products of a few rows
// of A, bench/RESULTS.md), then what they left (and everything on the scalar target) one by one.
void Transpose(const float* b, int64_t ldb, int64_t N, int64_t K, float* out) {
  int64_t n_done = 0, k_done = 0;  // out's columns [0, n_done) are done for k in [0, k_done)
#if HWY_TARGET != HWY_SCALAR
  const hn::CappedTag<float, 8> d;
  constexpr int64_t kLanes = int64_t(hn::MaxLanes(d));
  if constexpr (kLanes == 4 || kLanes == 8) {
    TransposeTiles(d, b, ldb, N, K, out);
    n_done = N / kLanes * kLanes, k_done = K / kLanes * kLanes;
  }
#endif
  for (int64_t j = 0; j < N; ++j)
    for (int64_t k = j < n_done ? k_done : 0; k < K; ++k) out[k * N + j] = b[j * ldb + k];
}

}  // namespace

// kernels.h's sgemm_small_batched on this target.
void SgemmBatched(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, const float* a, int64_t lda,
                  const int64_t* a_at, const float* b, int64_t ldb, const int64_t* b_at, float* c, const int64_t* c_at,
                  int64_t ldc, int64_t count, const float* bias) {
  const int64_t lanes = int64_t(hn::Lanes(D())), width = lanes * kVectors;  // columns a block takes at most
  // Bᵀ stored (N x K) is copied to (K x N) so that each k reads a contiguous row of B, on whole cache lines
  // (a vector load across two lines costs two).
  thread_local hwy::AlignedFreeUniquePtr<float[]> packed;
  thread_local size_t packed_size = 0;
  if (trans_b && packed_size < size_t(K * N)) packed = hwy::AllocateAligned<float>(packed_size = size_t(K * N));
  const int64_t ai = trans_a ? 1 : lda, ak = trans_a ? lda : 1;
  for (int64_t p = 0; p < count; ++p) {
    const float* pa = a + a_at[p];
    const float* pb = b + b_at[p];
    int64_t ld = ldb;
    float* pc = c + c_at[p];
    if (trans_b) {
      Transpose(pb, ldb, N, K, packed.get());
      pb = packed.get(), ld = N;
    }
    for (int64_t k0 = 0; k0 < K; k0 += kBlockK) {
      const int64_t kl = std::min(kBlockK, K - k0);
      const float* with = k0 + kl == K ? bias : nullptr;  // onto the whole sum
      for (int64_t j = 0; j < N; j += width) {
        const int64_t cols = std::min(width, N - j), nv = (cols + lanes - 1) / lanes;
        const int64_t tail = cols - lanes * (nv - 1), step = kRows[nv];
        for (int64_t i = 0; i < M; i += step) {
          const int64_t rows = std::min(step, M - i);
          kBlocks[size_t(nv)][rows - 1](pa + i * ai + k0 * ak, ai, ak, pb + k0 * ld + j, ld, pc + i * ldc + j, ldc, kl,
                                        size_t(tail), k0 > 0, with ? with + j : nullptr);
        }
      }
    }
  }
}

// Whether this target has vectors (kernels.h's rule).
bool HasVectors() { return HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128; }

}  // namespace tg::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tg::cpu {

HWY_EXPORT(SgemmBatched);
HWY_EXPORT(HasVectors);

namespace {
// From here OpenBLAS's cache blocking wins, when its kernels are as wide as the CPU's vectors.
constexpr double kMaxMNK = 256.0 * 256 * 256;
}  // namespace

bool sgemm_small_takes(bool, bool, int64_t M, int64_t N, int64_t K) {
  if (K < 1 || M < 2 || N < 1) return false;
  if (double(M) * double(N) * double(K) >= kMaxMNK && !blas_narrower_than_cpu()) return false;
  return HWY_DYNAMIC_DISPATCH(HasVectors)();
}

void sgemm_small_batched(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, const float* a, int64_t lda,
                         const int64_t* a_at, const float* b, int64_t ldb, const int64_t* b_at, float* c,
                         const int64_t* c_at, int64_t ldc, int64_t count, const float* bias) {
  HWY_DYNAMIC_DISPATCH(SgemmBatched)(trans_a, trans_b, M, N, K, a, lda, a_at, b, ldb, b_at, c, c_at, ldc, count, bias);
}

}  // namespace tg::cpu
#endif  // HWY_ONCE
