#pragma once
// Internal to core: small f32 GEMMs, each element summed over k in order, which give OpenBLAS's bits on its
// SkylakeX core and are taken for every small product on the cores whose sums we do not follow (see
// sgemm_small.cpp).
#include <cstdint>

namespace tg::detail {

/// Whether matmul gives C = op(A) @ op(B) (row-major, M x N, inner dim K) to sgemm_small_batched: on
/// OpenBLAS's SkylakeX core (and an AVX-512 CPU), only the shapes for which it gives cblas_sgemm's bits with
/// alpha 1, beta 0 (those that core's kernels sum over k in order with one FMA per term, in the K blocks of
/// OpenBLAS's level-3 driver, known with one OpenBLAS thread); on other cores and an AVX2 and FMA CPU, every
/// product of fewer than 256³ multiply-adds; false on CPUs without AVX2.
bool sgemm_small_takes(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K);

/// Whether the products sgemm_small_takes give OpenBLAS's bits here (its SkylakeX core), rather than each
/// element's in-order sum in one pass.
bool sgemm_small_gives_blas_bits();

/// Whether OpenBLAS's cblas_sgemm computes C = op(A) @ op(B) + C (alpha 1, beta 1) on the SkylakeX core as each
/// element's whole sum over k, rounded once onto C: its level-3 path (not its small-matrix kernels) in one K
/// block. Then C prefilled with a bias (plus +0) gives the bits of the product followed by adding the bias.
bool sgemm_sums_onto_c(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K);

/// C (M x N, row stride ldc) = op(A) @ op(B) with one FMA per term, k in order, into one accumulator per
/// element and K block, for `count` products of one shape (every head of attention's (B, H, S, d) views in
/// one call): product p reads A at a + a_at[p], B at b + b_at[p] and writes C at c + c_at[p]. A is (M x K)
/// with row stride lda, or (K x M) if trans_a; B is (K x N) with row stride ldb, or (N x K) if trans_b. With a
/// bias (N floats), C(i, j) = stored sum + bias[j], the bits of adding the bias to C afterwards. Only call it
/// where sgemm_small_takes says so (it needs AVX2 and FMA, or AVX-512).
void sgemm_small_batched(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, const float* a, int64_t lda,
                         const int64_t* a_at, const float* b, int64_t ldb, const int64_t* b_at, float* c,
                         const int64_t* c_at, int64_t ldc, int64_t count, const float* bias = nullptr);

}  // namespace tg::detail
