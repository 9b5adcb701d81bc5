// Matrix products on OpenBLAS. A 2-D operand whose view is a transposed contiguous matrix is passed to cblas_?gemm
// with a transpose flag instead of being copied; batch dims broadcast as in PyTorch's matmul and each batch entry is
// one GEMM call (large ones split by rows over the threads), or f32 ones on our own kernel: the kernel room's
// cpu::gemm_batched. matmul_out writes into a given layout (attention's per-head results straight into (B, S, H, d)
// order), with the same bits per element as matmul.
#include <algorithm>

#include "core/cpu/kernels.h"
#include "core/kernel_util.h"
#include "core/ops.h"

namespace tg {
namespace {

// How a (rows, cols) matrix view can be handed to BLAS without copying.
struct BlasMat {
  Tensor t;    // the (possibly copied) view
  bool trans;  // t is stored as its transpose, with rows of length ld
  int64_t ld;
};

BlasMat as_blas(const Tensor& m) {
  int64_t r = m.size(-2), c = m.size(-1), sr = m.strides()[m.dim() - 2], sc = m.strides()[m.dim() - 1];
  if ((sc == 1 || c == 1) && sr >= std::max<int64_t>(c, 1)) return {m, false, sr};
  if ((sr == 1 || r == 1) && sc >= std::max<int64_t>(r, 1)) return {m, true, sc};
  Tensor cm = m.contiguous();
  return {cm, false, std::max<int64_t>(c, 1)};
}

// The batch dims' strides of a (batch..., rows, cols) view.
Strides batch_strides(const Tensor& t) { return Strides(t.strides().begin(), t.strides().end() - 2); }

// The shape of (..., M, K) @ (..., K, N), batch dims broadcast.
Shape batched_shape(const Tensor& a, const Tensor& b) {
  Shape out = broadcast_shapes(Shape(a.shape().begin(), a.shape().end() - 2),
                               Shape(b.shape().begin(), b.shape().end() - 2), "matmul");
  out.push_back(a.size(-2));
  out.push_back(b.size(-1));
  return out;
}

// out = (..., M, K) @ (..., K, N) with at least 2 dims each (+ out with `onto_out`, on OpenBLAS only, K > 0);
// out has the product's shape and rows that GEMM can write (unit column stride, row stride >= N).
void batched_into(const Tensor& a, const Tensor& b, Tensor out, bool onto_out = false) {
  const int64_t M = a.size(-2), K = a.size(-1), N = b.size(-1);
  const Shape batch(out.shape().begin(), out.shape().end() - 2);
  // Sizes are spelled out, not -1: a -1 cannot be inferred when another size is 0.
  if (b.dim() == 2 && a.dim() > 2 && a.is_contiguous() && out.is_contiguous())
    return batched_into(a.reshape({batch.numel() * M, K}), b, out.view({batch.numel() * M, N}), onto_out);
  if (out.numel() == 0) return;
  if (K == 0) {  // empty sums (matmul passes zeros)
    out.fill_(0);
    return;
  }
  Shape ea = batch, eb = batch;
  ea.insert(ea.end(), {M, K});
  eb.insert(eb.end(), {K, N});
  // Every batch entry shares one matrix layout, so the views are walked through their batch strides
  // instead of reshaped to (batch, M, K): attention's per-head (B, H, S, d) views of a (B, S, H·d)
  // projection would be copied by a reshape, as would broadcast operands.
  BlasMat ma = as_blas(a.expand(ea)), mb = as_blas(b.expand(eb));
  const std::array<Strides, 3> strides = {batch_strides(ma.t), batch_strides(mb.t), batch_strides(out)};
  const int64_t ldc = M == 1 ? std::max<int64_t>(N, 1) : out.strides()[size_t(out.dim() - 2)];
  const bool ta = ma.trans, tb = mb.trans;
  std::vector<int64_t> a_at, b_at, c_at;  // where each batch entry's operands and product start
  for (std::vector<int64_t>* at : {&a_at, &b_at, &c_at}) at->reserve(size_t(batch.numel()));
  cpu::visit<3>(batch, strides, [&](const std::array<int64_t, 3>& o) {
    a_at.push_back(o[0]), b_at.push_back(o[1]), c_at.push_back(o[2]);
  });
  detail::dispatch_float(a.dtype(), "matmul", [&](auto z) {
    using T = decltype(z);
    cpu::gemm_batched(ta, tb, M, N, K, ma.t.data<T>(), ma.ld, a_at.data(), mb.t.data<T>(), mb.ld, b_at.data(),
                      out.data<T>(), c_at.data(), ldc, int64_t(a_at.size()), onto_out);
  });
}

// Whether GEMMs can write `out` in place: its elements are distinct and fill their span (a permutation of
// a contiguous layout, such as a permuted fresh tensor) and each matrix's rows are unit-stride.
bool writable_rows(const Tensor& out) {
  std::vector<std::pair<int64_t, int64_t>> dims;  // (stride, size) of the dims that step
  for (int64_t d = 0; d < out.dim(); ++d)
    if (out.shape()[size_t(d)] > 1) dims.emplace_back(out.strides()[size_t(d)], out.shape()[size_t(d)]);
  std::sort(dims.begin(), dims.end());
  int64_t expected = 1;
  for (const auto& [stride, size] : dims) {
    if (stride != expected) return false;
    expected *= size;
  }
  return out.size(-1) <= 1 || out.strides()[size_t(out.dim() - 1)] == 1;
}

// The checks of matmul and matmul_out; a and b promoted to matrices.
std::pair<Tensor, Tensor> checked_operands(const Tensor& a, const Tensor& b, const char* op) {
  detail::check_defined(a, op, "an operand");
  detail::check_defined(b, op, "an operand");
  check<DTypeError>(a.dtype() == b.dtype(), "{}: dtypes differ: {} vs {} (shapes {} @ {})", op, a.dtype(), b.dtype(),
                    a.shape(), b.shape());
  check<DTypeError>(is_floating(a.dtype()), "{}: expected f32 or f64, got {} (shapes {} @ {})", op, a.dtype(),
                    a.shape(), b.shape());
  check<ShapeError>(a.dim() >= 1 && b.dim() >= 1, "{}: both operands need at least 1 dim: {} @ {}", op, a.shape(),
                    b.shape());
  check<ShapeError>(a.size(-1) == b.size(b.dim() == 1 ? 0 : -2), "{}: inner dimensions differ: {} @ {}", op,
                    a.shape(), b.shape());
  return {a.dim() == 1 ? a.unsqueeze(0) : a, b.dim() == 1 ? b.unsqueeze(1) : b};
}

// linear with the bias inside the product, or undefined where x is not a contiguous f32 input (then matmul and
// add run). x is seen as (rows, in) @ weightᵀ:
//  - on our own GEMM kernel (where cpu::sgemm_small_takes), the bias is added in its store (the bits of matmul
//    then add);
//  - on OpenBLAS, the output is prefilled with the bias and OpenBLAS adds the product onto it (beta = 1), which
//    saves the pass of adding the bias and OpenBLAS's zeroing of C; the bias then joins the sum in OpenBLAS's
//    order (within its error bound of matmul then add, not always its bits).
Tensor linear_with_bias(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  if (x.dtype() != f32 || weight.dtype() != f32 || bias.dtype() != f32 || !x.is_contiguous()) return {};
  const int64_t K = x.size(-1), N = weight.size(0), M = K ? x.numel() / K : 0;
  if (K == 0) return {};  // an empty sum: matmul's zeros, then the bias
  const BlasMat mb = as_blas(weight.mT());
  const bool tb = mb.trans;
  const bool own = cpu::sgemm_small_takes(false, tb, M, N, K);
  Shape shape = x.shape();
  shape.back() = N;
  Tensor out = empty(shape, f32);
  const Tensor b = bias.contiguous();
  const float* pb = b.data<float>();
  float* po = out.data<float>();
  if (own) {
    const int64_t at = 0;
    cpu::gemm_batched(false, tb, M, N, K, x.data<float>(), K, &at, mb.t.data<float>(), mb.ld, &at, po, &at, N, 1, false,
                      pb);
    return out;
  }
  cpu::repeat_row(pb, po, M, N);
  batched_into(x.reshape({M, K}), weight.mT(), out.view({M, N}), true);
  return out;
}

}  // namespace

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  detail::check_defined(x, "linear");
  detail::check_defined(weight, "linear", "the weight");
  check<ShapeError>(weight.dim() == 2 && x.dim() >= 1 && x.size(-1) == weight.size(1),
                    "linear: input {} does not fit weight {}: expected (..., in) and (out, in)", x.shape(),
                    weight.shape());
  check<ShapeError>(!bias.defined() || bias.shape() == Shape{weight.size(0)},
                    "linear: bias {} does not fit weight {}: expected (out)", bias.shape(), weight.shape());
  if (bias.defined())
    if (Tensor y = linear_with_bias(x, weight, bias); y.defined()) return y;
  const Tensor y = matmul(x, weight.mT());
  return bias.defined() ? add(y, bias) : y;
}

Tensor matmul(const Tensor& a, const Tensor& b) {
  auto [a2, b2] = checked_operands(a, b, "matmul");
  const Shape shape = batched_shape(a2, b2);
  Tensor out = a2.size(-1) == 0 ? zeros(shape, a.dtype()) : empty(shape, a.dtype());  // empty sums are 0
  if (a2.size(-1) > 0) batched_into(a2, b2, out);
  if (a.dim() == 1) out = out.squeeze(-2);
  if (b.dim() == 1) out = out.squeeze(-1);
  return out;
}

Tensor& matmul_out(Tensor& out, const Tensor& a, const Tensor& b) {
  detail::check_defined(out, "matmul_out", "out");
  auto [a2, b2] = checked_operands(a, b, "matmul_out");
  check<ShapeError>(a.dim() >= 2 && b.dim() >= 2 && out.shape() == batched_shape(a2, b2),
                    "matmul_out: out {} for {} @ {}: expected the product's shape (operands of 2 or more dims)",
                    out.shape(), a.shape(), b.shape());
  check<DTypeError>(out.dtype() == a.dtype(), "matmul_out: out is {}, the operands {}", out.dtype(), a.dtype());
  const bool shares = out.storage() == a.storage() || out.storage() == b.storage();
  if (!shares && writable_rows(out)) {
    batched_into(a2, b2, out);
    ++out.storage()->version;
  } else {  // through a temporary; copy_ refuses an out whose elements overlap
    Tensor product = empty(out.shape(), out.dtype());
    batched_into(a2, b2, product);
    out.copy_(product);
  }
  return out;
}

}  // namespace tg
