// Softmax, log-softmax (forward and backward) and layer-norm statistics: the kernels whose naive forms
// overflow or cancel, or that would be several passes as compositions. Softmax subtracts the line max;
// layer norm takes mean and variance in two passes in double. The lines and rows run in the kernel room
// (core/cpu/normalize.cpp); here are the checks, the layouts and the outputs.
#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "core/cpu/kernels.h"
#include "core/kernel_util.h"
#include "core/ops.h"

namespace tg {
namespace {

// Runs kernel(T{}, ins, out, around) on contiguous copies of the inputs (all of x's shape) split into lines
// along `dim`, ins[k] input k's elements, into a fresh output.
template <size_t N, class F>
Tensor along(const std::array<Tensor, N>& xs, int64_t dim, const char* op, F kernel) {
  for (const Tensor& t : xs) detail::check_defined(t, op, "an input");
  const Tensor& x = xs[0];
  dim = normalize_dim(dim, x.dim(), op);
  std::array<Tensor, N> c;
  for (size_t k = 0; k < N; ++k) {
    check<ShapeError>(xs[k].shape() == x.shape(), "{}: shapes differ: {} vs {}", op, xs[k].shape(), x.shape());
    check<DTypeError>(xs[k].dtype() == x.dtype(), "{}: dtypes differ: {} vs {}", op, xs[k].dtype(), x.dtype());
    c[k] = xs[k].contiguous();
  }
  Tensor out = empty(x.shape(), x.dtype());
  const cpu::Around a = cpu::around(x.shape(), x.dim() ? dim : 0);
  detail::dispatch_float(x.dtype(), op, [&](auto z) {
    using T = decltype(z);
    std::array<const T*, N> in;
    for (size_t k = 0; k < N; ++k) in[k] = c[k].template data<T>();
    kernel(z, in, out.data<T>(), a);
  });
  return out;
}

// Rows whose statistics are not finite: a row holding NaN gives NaNs (NaN in, NaN out); one holding ±inf has
// no mean or variance (x - mean would be inf - inf), and a constant row under eps = 0 has rstd = 1/√0: both
// are refused, naming the row, rather than normalised into NaNs. One test per row; a row's values only when
// its statistics are not finite.
void check_rows(const Tensor& x, const Tensor& mean, const Tensor& rstd, int64_t n, double eps) {
  if (all_finite(mean) && all_finite(rstd)) return;
  const std::vector<double> m = mean.to_vector<double>(), r = rstd.to_vector<double>();
  for (size_t i = 0; i < m.size(); ++i) {
    if (std::isfinite(m[i]) && std::isfinite(r[i])) continue;
    const std::vector<double> row = x.reshape({-1, n}).select(0, int64_t(i)).to_vector<double>();
    if (std::any_of(row.begin(), row.end(), [](double v) { return std::isnan(v); })) continue;
    check<ValueError>(std::isfinite(m[i]), "layer_norm: row {} of {} holds ±inf: its mean and variance are not finite",
                      i, x.shape());
    check<ValueError>(false, "layer_norm: row {} of {} is constant (or nearly) and eps is {}: rstd = 1/√(var + eps) "
                      "is not finite", i, x.shape(), eps);
  }
}

}  // namespace

Tensor softmax(const Tensor& x, int64_t dim) {
  return along<1>({x}, dim, "softmax", [](auto, const auto& in, auto* y, cpu::Around a) {
    cpu::softmax_lines(in[0], y, a);
  });
}

// softmax(masked_fill(x, blocked, -inf), -1) without the filled copy (cpu::masked_softmax_lines).
Tensor masked_softmax(const Tensor& x, const Tensor& blocked) {
  detail::check_defined(x, "masked_softmax");
  if (!blocked.defined()) return softmax(x, -1);
  check<ShapeError>(x.dim() >= 1, "masked_softmax: expected at least 1 dim, got shape {}", x.shape());
  check<DTypeError>(blocked.dtype() == boolean, "masked_softmax: mask must be bool, got {}", blocked.dtype());
  check<ShapeError>(broadcast_shapes(x.shape(), blocked.shape(), "masked_softmax") == x.shape(),
                    "masked_softmax: mask of shape {} does not broadcast to input shape {}", blocked.shape(), x.shape());
  Tensor c = x.contiguous(), out = empty(x.shape(), x.dtype());
  const Strides ms = detail::broadcast_strides(blocked, x.shape());
  detail::dispatch_float(x.dtype(), "masked_softmax", [&](auto z) {
    using T = decltype(z);
    cpu::masked_softmax_lines(c.data<T>(), blocked.data<bool>(), x.shape(), ms, out.data<T>());
  });
  return out;
}

Tensor log_softmax(const Tensor& x, int64_t dim) {
  return along<1>({x}, dim, "log_softmax", [](auto, const auto& in, auto* y, cpu::Around a) {
    cpu::log_softmax_lines(in[0], y, a);
  });
}

Tensor softmax_backward(const Tensor& dy, const Tensor& y, int64_t dim) {
  return along<2>({dy, y}, dim, "softmax_backward", [](auto, const auto& in, auto* dx, cpu::Around a) {
    cpu::softmax_backward_lines(in[0], in[1], dx, a);
  });
}

Tensor log_softmax_backward(const Tensor& dy, const Tensor& y, int64_t dim) {
  return along<2>({dy, y}, dim, "log_softmax_backward", [](auto, const auto& in, auto* dx, cpu::Around a) {
    cpu::log_softmax_backward_lines(in[0], in[1], dx, a);
  });
}

Normalized normalize(const Tensor& x, int64_t normalized_ndim, double eps, const Tensor& weight, const Tensor& bias) {
  detail::check_defined(x, "layer_norm");
  check<ShapeError>(normalized_ndim >= 1 && normalized_ndim <= x.dim(),
                    "layer_norm: cannot normalise the last {} dims of a tensor of shape {}", normalized_ndim, x.shape());
  check<ValueError>(eps >= 0 && std::isfinite(eps), "layer_norm: eps must be finite and >= 0, got {}", eps);
  Shape stat_shape = x.shape();
  int64_t n = 1;
  for (int64_t d = x.dim() - normalized_ndim; d < x.dim(); ++d) n *= stat_shape[d], stat_shape[d] = 1;
  const Shape rows_shape(x.shape().end() - normalized_ndim, x.shape().end());
  for (const Tensor* t : {&weight, &bias})
    check<ShapeError>(!t->defined() || (t->shape() == rows_shape && t->dtype() == x.dtype()),
                      "layer_norm: {} {} {} does not fit the normalized shape {} of {}", t == &weight ? "weight" : "bias",
                      t->shape(), t->dtype(), rows_shape, x.dtype());
  Tensor c = x.contiguous(), out = empty(x.shape(), x.dtype());
  Tensor mean = empty(stat_shape, x.dtype()), rstd = empty(stat_shape, x.dtype());
  const Tensor w = weight.defined() ? weight.contiguous() : Tensor(), b = bias.defined() ? bias.contiguous() : Tensor();
  Tensor affine = w.defined() || b.defined() ? empty(x.shape(), x.dtype()) : Tensor();
  check<ValueError>(n > 0 || stat_shape.numel() == 0,
                    "layer_norm: no elements to normalise in the last {} dims of shape {}", normalized_ndim, x.shape());
  const int64_t rows = n ? x.numel() / n : 0;
  detail::dispatch_float(x.dtype(), "layer_norm", [&](auto z) {
    using T = decltype(z);
    const T *pw = w.defined() ? w.data<T>() : nullptr, *pb = b.defined() ? b.data<T>() : nullptr;
    T* pa = affine.defined() ? affine.data<T>() : nullptr;
    cpu::layer_norm_rows(c.data<T>(), out.data<T>(), pa, pw, pb, rows, n, eps, mean.data<T>(), rstd.data<T>());
  });
  check_rows(c, mean, rstd, n, eps);
  return {out, mean, rstd, affine};
}

LayerNormGrads layer_norm_backward(const Tensor& dy, const Tensor& xhat, const Tensor& rstd, const Tensor& weight,
                                   bool with_bias) {
  check<ShapeError>(dy.shape() == xhat.shape(), "layer_norm_backward: dy {} vs x̂ {}", dy.shape(), xhat.shape());
  check<DTypeError>(dy.dtype() == xhat.dtype() && rstd.dtype() == xhat.dtype(),
                    "layer_norm_backward: dtypes differ: {}, {}, {}", dy.dtype(), xhat.dtype(), rstd.dtype());
  const int64_t rows = rstd.numel(), n = rows ? xhat.numel() / rows : 0;
  check<ShapeError>(rows * n == xhat.numel(), "layer_norm_backward: rstd {} does not divide x̂ {} into rows",
                    rstd.shape(), xhat.shape());
  check<ShapeError>(!weight.defined() || (weight.numel() == n && weight.dtype() == xhat.dtype()),
                    "layer_norm_backward: weight {} {} for rows of {}", weight.shape(), weight.dtype(), n);
  Tensor g = dy.contiguous(), h = xhat.contiguous(), r = rstd.contiguous();
  Tensor w = weight.defined() ? weight.contiguous() : Tensor();
  LayerNormGrads out{empty(xhat.shape(), xhat.dtype()), {}, {}};
  std::vector<double> dw(weight.defined() ? n : 0), db(with_bias ? n : 0);
  detail::dispatch_float(xhat.dtype(), "layer_norm_backward", [&](auto z) {
    using T = decltype(z);
    cpu::layer_norm_backward_rows(g.data<T>(), h.data<T>(), w.defined() ? w.data<T>() : nullptr, r.data<T>(),
                                  out.dx.data<T>(), dw.empty() ? nullptr : dw.data(), db.empty() ? nullptr : db.data(),
                                  rows, n);
  });
  if (weight.defined()) out.dweight = tensor(dw, weight.shape(), xhat.dtype());
  if (with_bias) out.dbias = tensor(db, {n}, xhat.dtype());
  return out;
}

}  // namespace tg
