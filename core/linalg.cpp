// Matrix products on OpenBLAS. A 2-D operand whose view is a transposed contiguous matrix is passed to
// cblas_?gemm with a transpose flag instead of being copied; batch dims broadcast as in PyTorch's matmul
// and each batch entry is one GEMM call. Small f32 products go to our own kernel where it gives OpenBLAS's
// bits (sgemm_small.cpp), all batch entries in one call.
#include <cblas.h>

#include "core/kernel_util.h"
#include "core/ops.h"
#include "core/sgemm_small.h"

namespace tg {
namespace {

// How a (rows, cols) matrix view can be handed to BLAS without copying.
struct BlasMat {
  Tensor t;  // the (possibly copied) view
  CBLAS_TRANSPOSE trans;
  int64_t ld;
};

BlasMat as_blas(const Tensor& m) {
  int64_t r = m.size(-2), c = m.size(-1), sr = m.strides()[m.dim() - 2], sc = m.strides()[m.dim() - 1];
  if ((sc == 1 || c == 1) && sr >= std::max<int64_t>(c, 1)) return {m, CblasNoTrans, sr};
  if ((sr == 1 || r == 1) && sc >= std::max<int64_t>(r, 1)) return {m, CblasTrans, sc};
  Tensor cm = m.contiguous();
  return {cm, CblasNoTrans, std::max<int64_t>(c, 1)};
}

// C = A @ B for one batch entry: A and B start `a_at` and `b_at` elements into their views.
template <class T>
void gemm(const BlasMat& a, const BlasMat& b, int64_t a_at, int64_t b_at, T* c, int64_t M, int64_t N, int64_t K) {
  const T* pa = a.t.template data<T>() + a_at;
  const T* pb = b.t.template data<T>() + b_at;
  if constexpr (std::is_same_v<T, float>)
    cblas_sgemm(CblasRowMajor, a.trans, b.trans, M, N, K, 1.0f, pa, a.ld, pb, b.ld, 0.0f, c, std::max<int64_t>(N, 1));
  else
    cblas_dgemm(CblasRowMajor, a.trans, b.trans, M, N, K, 1.0, pa, a.ld, pb, b.ld, 0.0, c, std::max<int64_t>(N, 1));
}

// The batch dims' strides of a (batch..., rows, cols) view.
Strides batch_strides(const Tensor& t) { return Strides(t.strides().begin(), t.strides().end() - 2); }

// (..., M, K) @ (..., K, N) with at least 2 dims each.
Tensor batched(const Tensor& a, const Tensor& b) {
  const int64_t M = a.size(-2), K = a.size(-1), N = b.size(-1);
  Shape ba(a.shape().begin(), a.shape().end() - 2), bb(b.shape().begin(), b.shape().end() - 2);
  Shape batch = broadcast_shapes(ba, bb, "matmul");
  Shape out_shape = batch;
  out_shape.push_back(M);
  out_shape.push_back(N);
  // Sizes are spelled out, not -1: a -1 cannot be inferred when another size is 0.
  if (bb.empty() && !ba.empty() && a.is_contiguous())
    return batched(a.reshape({ba.numel() * M, K}), b).reshape(out_shape);  // one GEMM
  if (K == 0) return zeros(out_shape, a.dtype());  // empty sums
  Tensor out = empty(out_shape, a.dtype());
  Shape ea = batch, eb = batch;
  ea.insert(ea.end(), {M, K});
  eb.insert(eb.end(), {K, N});
  // Every batch entry shares one matrix layout, so the views are walked through their batch strides
  // instead of reshaped to (batch, M, K): attention's per-head (B, H, S, d) views of a (B, S, H·d)
  // projection would be copied by a reshape, as would broadcast operands.
  BlasMat ma = as_blas(a.expand(ea)), mb = as_blas(b.expand(eb));
  if (M * N == 0) return out;
  const std::array<Strides, 2> strides = {batch_strides(ma.t), batch_strides(mb.t)};
  const bool ta = ma.trans == CblasTrans, tb = mb.trans == CblasTrans;
  if (a.dtype() == f32 && detail::sgemm_small_matches_blas(ta, tb, M, N, K)) {
    // One call for all entries (attention's B·H heads): their offsets first.
    std::vector<int64_t> a_at, b_at;
    a_at.reserve(size_t(batch.numel())), b_at.reserve(size_t(batch.numel()));
    detail::visit<2>(batch, strides, [&](const std::array<int64_t, 2>& o) { a_at.push_back(o[0]), b_at.push_back(o[1]); });
    detail::sgemm_small_batched(ta, tb, M, N, K, ma.t.data<float>(), ma.ld, a_at.data(), mb.t.data<float>(), mb.ld,
                                b_at.data(), out.data<float>(), N, int64_t(a_at.size()));
    return out;
  }
  detail::dispatch_float(a.dtype(), "matmul", [&](auto z) {
    using T = decltype(z);
    T* pc = out.data<T>();
    int64_t i = 0;
    detail::visit<2>(batch, strides, [&](const std::array<int64_t, 2>& o) {
      gemm<T>(ma, mb, o[0], o[1], pc + i++ * M * N, M, N, K);
    });
  });
  return out;
}

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b) {
  detail::check_defined(a, "matmul", "an operand");
  detail::check_defined(b, "matmul", "an operand");
  check<DTypeError>(a.dtype() == b.dtype(), "matmul: dtypes differ: {} vs {} (shapes {} @ {})", a.dtype(), b.dtype(),
                    a.shape(), b.shape());
  check<DTypeError>(is_floating(a.dtype()), "matmul: expected f32 or f64, got {} (shapes {} @ {})", a.dtype(),
                    a.shape(), b.shape());
  check<ShapeError>(a.dim() >= 1 && b.dim() >= 1, "matmul: both operands need at least 1 dim: {} @ {}", a.shape(),
                    b.shape());
  check<ShapeError>(a.size(-1) == b.size(b.dim() == 1 ? 0 : -2), "matmul: inner dimensions differ: {} @ {}",
                    a.shape(), b.shape());
  Tensor a2 = a.dim() == 1 ? a.unsqueeze(0) : a, b2 = b.dim() == 1 ? b.unsqueeze(1) : b;
  Tensor out = batched(a2, b2);
  if (a.dim() == 1) out = out.squeeze(-2);
  if (b.dim() == 1) out = out.squeeze(-1);
  return out;
}

}  // namespace tg
