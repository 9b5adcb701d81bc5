// Batched matrix products (ops/linalg.cpp's kernel): products of one row as cblas_?gemv calls, f32 products
// that sgemm_small_takes on our own kernel (sgemm_small.cpp), all others one cblas_?gemm call per entry; large
// products split into parts of rows.
// OpenBLAS runs on one thread (thread_pool.cpp): products go over our pool, whole batch entries to the threads
// or, with fewer entries than threads, parts of rows.
#include <cblas.h>

#include <algorithm>
#include <type_traits>

#include "core/cpu/kernels.h"
#include "core/error.h"

namespace tg::cpu {
namespace {

// A part takes at least kSplitMNK multiply-adds: above OpenBLAS's small-matrix kernels (100³) and our own (256³),
// it takes the whole product's kernels. Those compute C in tiles of rows and sum the rows that fill no tile at a
// matrix's end otherwise; parts start at multiples of kSplitRows, a multiple of the tiles of every x86 core
// (SkylakeX 16 rows, Haswell and Zen 24), so every element sums its terms as in the whole product: the same bits
// at any thread count.
constexpr double kSplitMNK = 256.0 * 256.0 * 256.0;
constexpr int64_t kSplitRows = 48;
// Work of fewer multiply-adds than this per thread is not worth waking one for: several times a parallel region's
// cost (kernels.h). Causal attention's row blocks are products of a few million multiply-adds over all heads: a
// larger threshold ran them on one thread (bench/RESULTS.md, "Issue 24, two threads on the GPT step").
constexpr double kThreadWork = double(int64_t(1) << 21);
// The entries (or parts) one thread takes at least, each of `mnk` multiply-adds.
int64_t grain(double mnk) { return std::max<int64_t>(1, int64_t(kThreadWork / std::max(mnk, 1.0))); }

CBLAS_TRANSPOSE flag(bool trans) { return trans ? CblasTrans : CblasNoTrans; }

// c (1 x N) = a (1 x K) @ op(B), or c += it, as one matrix-vector product: cᵀ = op(B)ᵀ·aᵀ. B (N x K) stored
// for op(B) = Bᵀ is read by rows (NoTrans), B (K x N) by columns (Trans). A GEMM would copy all of B into its
// panels first, which costs as much as the product, for one row.
template <class T>
void gemv(bool trans_a, bool trans_b, int64_t N, int64_t K, const T* a, int64_t lda, const T* b, int64_t ldb, T* c,
          T beta) {
  const int64_t rows = trans_b ? N : K, cols = trans_b ? K : N, inc_a = trans_a ? lda : 1;
  if constexpr (std::is_same_v<T, float>)
    cblas_sgemv(CblasRowMajor, flag(!trans_b), rows, cols, 1.0f, b, ldb, a, inc_a, beta, c, 1);
  else
    cblas_dgemv(CblasRowMajor, flag(!trans_b), rows, cols, 1.0, b, ldb, a, inc_a, beta, c, 1);
}

}  // namespace

template <class T>
void gemm_batched(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, const T* a, int64_t lda,
                  const int64_t* a_at, const T* b, int64_t ldb, const int64_t* b_at, T* c, const int64_t* c_at,
                  int64_t ldc, int64_t count, bool onto_c, const float* bias) {
  const double mnk = double(M) * double(N) * double(K);
  const T beta = onto_c ? 1 : 0;
  bool own = false;  // on our kernel (sgemm_small.cpp)
  if constexpr (std::is_same_v<T, float>) own = !onto_c && sgemm_small_takes(trans_a, trans_b, M, N, K);
  check<Error>(!bias || own, "gemm_batched: a bias needs a product on our own kernel (M {}, N {}, K {})", M, N, K);
  if (M == 1) {  // one row: a matrix-vector product per entry (a token of incremental decoding)
    parallel_for(count, grain(mnk), [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p)
        gemv(trans_a, trans_b, N, K, a + a_at[p], lda, b + b_at[p], ldb, c + c_at[p], beta);
    });
    return;
  }
  // Fewer entries than threads: each large product in parts of rows (for OpenBLAS, every part still above the
  // small kernels). Others whole, on our kernel in runs of entries (attention's B·H heads), one run per thread.
  const int64_t threads = threads_here();  // 1 in a task of parallel_tasks: whole products, its bits
  const int64_t parts = count >= threads || mnk < 2 * kSplitMNK
                            ? 1
                            : std::max<int64_t>(1, std::min({threads, int64_t(mnk / kSplitMNK), M / kSplitRows}));
  if constexpr (std::is_same_v<T, float>) {
    if (own && parts == 1) {
      parallel_for(count, grain(mnk), [&](int64_t p0, int64_t p1) {
        sgemm_small_batched(trans_a, trans_b, M, N, K, a, lda, a_at + p0, b, ldb, b_at + p0, c, c_at + p0, ldc,
                            p1 - p0, bias);
      });
      return;
    }
  }
  auto part_start = [&](int64_t r) { return r == parts ? M : M * r / parts / kSplitRows * kSplitRows; };
  const int64_t a_row = trans_a ? 1 : lda;  // elements from one row of op(A) to the next
  parallel_for(count * parts, grain(mnk / double(parts)), [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      const int64_t p = i / parts, r = i % parts, m0 = part_start(r), m1 = part_start(r + 1);
      const int64_t at_a = a_at[p] + m0 * a_row, at_c = c_at[p] + m0 * ldc;
      if constexpr (std::is_same_v<T, float>) {
        if (own)
          sgemm_small_batched(trans_a, trans_b, m1 - m0, N, K, a, lda, &at_a, b, ldb, b_at + p, c, &at_c, ldc, 1, bias);
        else
          cblas_sgemm(CblasRowMajor, flag(trans_a), flag(trans_b), m1 - m0, N, K, 1.0f, a + at_a, lda, b + b_at[p],
                      ldb, beta, c + at_c, ldc);
      } else {
        cblas_dgemm(CblasRowMajor, flag(trans_a), flag(trans_b), m1 - m0, N, K, 1.0, a + at_a, lda, b + b_at[p], ldb,
                    beta, c + at_c, ldc);
      }
    }
  });
}

template void gemm_batched(bool, bool, int64_t, int64_t, int64_t, const float*, int64_t, const int64_t*, const float*,
                           int64_t, const int64_t*, float*, const int64_t*, int64_t, int64_t, bool, const float*);
template void gemm_batched(bool, bool, int64_t, int64_t, int64_t, const double*, int64_t, const int64_t*,
                           const double*, int64_t, const int64_t*, double*, const int64_t*, int64_t, int64_t, bool,
                           const float*);

}  // namespace tg::cpu
