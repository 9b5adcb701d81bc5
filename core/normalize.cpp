// Softmax, log-softmax (forward and backward) and layer-norm statistics: the kernels whose naive forms
// overflow or cancel, or that would be several passes as compositions. Softmax subtracts the row max;
// layer norm takes mean and variance in two passes in double.
#include <array>
#include <cmath>
#include <limits>
#include <mutex>
#include <type_traits>
#include <vector>

#include "core/cpu/kernels.h"
#include "core/kernel_util.h"
#include "core/ops.h"
#include "core/parallel.h"

namespace tg {
namespace {

// Applies f(ins, out, n, stride) to every line along `dim` of contiguous copies of the inputs (all of x's
// shape), where ins[k] points at the line's first element in input k.
template <size_t N, class F>
Tensor along(const std::array<Tensor, N>& xs, int64_t dim, const char* op, F f) {
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
  detail::Around a = detail::around(x.shape(), x.dim() ? dim : 0);
  detail::dispatch_float(x.dtype(), op, [&](auto z) {
    using T = decltype(z);
    T* po = out.data<T>();
    const int64_t grain = std::max<int64_t>(1, cpu::kGrainElements / 4 / std::max<int64_t>(a.n, 1));
    cpu::parallel_for(a.outer * a.inner, grain, [&](int64_t lo, int64_t hi) {
      std::array<const T*, N> in;
      for (int64_t r = lo; r < hi; ++r) {
        int64_t base = (r / a.inner) * a.n * a.inner + r % a.inner;
        for (size_t k = 0; k < N; ++k) in[k] = c[k].template data<T>() + base;
        f(in, po + base, a.n, a.inner);
      }
    });
  });
  return out;
}

constexpr double kInf = std::numeric_limits<double>::infinity();

// Max of a strided line, and log Σ exp(x - max); an all -inf line gives max -inf.
template <class T>
std::pair<double, double> max_and_log_sum(const T* in, int64_t n, int64_t s) {
  double m = -kInf;
  for (int64_t j = 0; j < n; ++j) m = std::max(m, double(in[j * s]));
  double sum = 0;
  if (std::isfinite(m))
    for (int64_t j = 0; j < n; ++j) sum += std::exp(double(in[j * s]) - m);
  return {m, std::log(sum)};
}

// The softmax of a line whose maximum is -inf: zeros when every element is -inf (a fully masked attention
// row: no NaN, unlike PyTorch, so that padding queries do not poison the batch), NaNs when the line holds a
// NaN (the max passes NaNs over), as a NaN anywhere else in a line makes the whole line NaN.
template <class T>
void masked_line(const T* in, T* out, int64_t n, int64_t s) {
  bool nan = false;
  for (int64_t j = 0; j < n; ++j) nan = nan || std::isnan(in[j * s]);
  for (int64_t j = 0; j < n; ++j) out[j * s] = nan ? std::numeric_limits<T>::quiet_NaN() : T(0);
}

// Contiguous f32 lines (the last dim: attention scores, logits) and rows run in the kernel room
// (core/cpu/kernels.h); other lines, and f64, here in double with libm.
template <class T>
constexpr bool is_f32 = std::is_same_v<T, float>;

// The softmax of one line of n elements s apart (in may be out).
template <class T>
void softmax_line(const T* in, T* out, int64_t n, int64_t s) {
  if constexpr (is_f32<T>)
    if (s == 1) return cpu::softmax_f32(in, out, n);
  double m = -kInf, sum = 0;
  for (int64_t j = 0; j < n; ++j) m = std::max(m, double(in[j * s]));
  if (m == -kInf) return masked_line(in, out, n, s);
  for (int64_t j = 0; j < n; ++j) sum += double(out[j * s] = T(std::exp(double(in[j * s]) - m)));
  for (int64_t j = 0; j < n; ++j) out[j * s] = T(double(out[j * s]) / sum);
}

// The f64 layer-norm rows (f32 rows run in the kernel room): both sums in double, in two passes.
void normalize_rows(const double* x, double* xhat, double* y, const double* w, const double* b, int64_t rows,
                    int64_t n, double eps, double* mean, double* rstd) {
  for (int64_t i = 0; i < rows; ++i, x += n, xhat += n, y = y ? y + n : y) {
    double m = 0, v = 0;
    for (int64_t j = 0; j < n; ++j) m += x[j];
    m /= double(n);
    for (int64_t j = 0; j < n; ++j) v += (x[j] - m) * (x[j] - m);
    const double rs = 1.0 / std::sqrt(v / double(n) + eps);
    for (int64_t j = 0; j < n; ++j) xhat[j] = (x[j] - m) * rs;
    if (y)
      for (int64_t j = 0; j < n; ++j) y[j] = w && b ? xhat[j] * w[j] + b[j] : w ? xhat[j] * w[j] : xhat[j] + b[j];
    mean[i] = m, rstd[i] = rs;
  }
}

// The f64 rows of layer_norm_backward: dx = rstd·(g - mean(g) - x̂·mean(g·x̂)) with g = dy·w; dy·x̂ and dy
// added into dw and db.
void layer_norm_backward_rows(const double* dy, const double* xhat, const double* w, const double* rstd, double* dx,
                              double* dw, double* db, int64_t rows, int64_t n) {
  for (int64_t i = 0; i < rows; ++i, dy += n, xhat += n, dx += n) {
    double sg = 0, sgx = 0;
    for (int64_t j = 0; j < n; ++j) {
      const double g = w ? dy[j] * w[j] : dy[j];
      sg += g, sgx += g * xhat[j];
    }
    const double mg = sg / double(n), mgx = sgx / double(n);
    for (int64_t j = 0; j < n; ++j) dx[j] = rstd[i] * ((w ? dy[j] * w[j] : dy[j]) - mg - xhat[j] * mgx);
    if (dw)
      for (int64_t j = 0; j < n; ++j) dw[j] += dy[j] * xhat[j];
    if (db)
      for (int64_t j = 0; j < n; ++j) db[j] += dy[j];
  }
}

}  // namespace

Tensor softmax(const Tensor& x, int64_t dim) {
  return along<1>({x}, dim, "softmax", [](const auto& in, auto* out, int64_t n, int64_t s) {
    softmax_line(in[0], out, n, s);
  });
}

// softmax(masked_fill(x, blocked, -inf), -1) without the filled copy: each line is written to the output
// with -inf where blocked and the line's softmax runs there in place, so the bits are those of the two ops.
// An f32 line whose mask runs along it (stride 1: key padding, causal) is filled in registers instead.
Tensor masked_softmax(const Tensor& x, const Tensor& blocked) {
  detail::check_defined(x, "masked_softmax");
  if (!blocked.defined()) return softmax(x, -1);
  check<ShapeError>(x.dim() >= 1, "masked_softmax: expected at least 1 dim, got shape {}", x.shape());
  check<DTypeError>(blocked.dtype() == boolean, "masked_softmax: mask must be bool, got {}", blocked.dtype());
  check<ShapeError>(broadcast_shapes(x.shape(), blocked.shape(), "masked_softmax") == x.shape(),
                    "masked_softmax: mask of shape {} does not broadcast to input shape {}", blocked.shape(), x.shape());
  Tensor c = x.contiguous(), out = empty(x.shape(), x.dtype());
  const int64_t n = x.size(-1), rows = n ? x.numel() / n : 0;
  const Strides ms = detail::broadcast_strides(blocked, x.shape());
  const bool* pm = blocked.data<bool>();
  detail::dispatch_float(x.dtype(), "masked_softmax", [&](auto z) {
    using T = decltype(z);
    const T* pi = c.data<T>();
    T* po = out.data<T>();
    cpu::parallel_for(rows, std::max<int64_t>(1, cpu::kGrainElements / 4 / std::max<int64_t>(n, 1)), [&](int64_t lo, int64_t hi) {
      // Line r's first mask element: lo unravelled over the leading dims, then stepped like an odometer
      // (the divisions per line cost as much as a short line's softmax).
      const int64_t lead = x.dim() - 1;
      std::vector<int64_t> index(size_t(lead), 0);
      int64_t at = 0;
      for (int64_t d = lead - 1, rest = lo; d >= 0; --d) {
        index[size_t(d)] = rest % x.size(d), rest /= x.size(d);
        at += index[size_t(d)] * ms[d];
      }
      for (int64_t r = lo; r < hi; ++r) {
        if (r > lo)
          for (int64_t d = lead - 1; d >= 0; --d) {
            at += ms[d];
            if (++index[size_t(d)] < x.size(d)) break;
            at -= ms[d] * x.size(d), index[size_t(d)] = 0;
          }
        const T* line = pi + r * n;
        T* y = po + r * n;
        if constexpr (is_f32<T>)
          if (ms.back() == 1) {
            cpu::masked_softmax_f32(line, pm + at, y, n);
            continue;
          }
        for (int64_t j = 0; j < n; ++j) y[j] = pm[at + j * ms.back()] ? T(-kInf) : line[j];
        softmax_line(y, y, n, 1);
      }
    });
  });
  return out;
}

Tensor log_softmax(const Tensor& x, int64_t dim) {
  return along<1>({x}, dim, "log_softmax", [](const auto& in, auto* out, int64_t n, int64_t s) {
    using T = std::remove_cv_t<std::remove_reference_t<decltype(*out)>>;
    if constexpr (is_f32<T>)
      if (s == 1) return cpu::log_softmax_f32(in[0], out, n);
    auto [m, log_sum] = max_and_log_sum(in[0], n, s);
    for (int64_t j = 0; j < n; ++j) out[j * s] = T(double(in[0][j * s]) - m - log_sum);
  });
}

Tensor softmax_backward(const Tensor& dy, const Tensor& y, int64_t dim) {
  return along<2>({dy, y}, dim, "softmax_backward", [](const auto& in, auto* out, int64_t n, int64_t s) {
    using T = std::remove_cv_t<std::remove_reference_t<decltype(*out)>>;
    const T *g = in[0], *p = in[1];
    if constexpr (is_f32<T>)
      if (s == 1) return cpu::softmax_backward_f32(g, p, out, n);
    double dot = 0;
    for (int64_t j = 0; j < n; ++j) dot += double(g[j * s]) * double(p[j * s]);
    for (int64_t j = 0; j < n; ++j) out[j * s] = T(double(p[j * s]) * (double(g[j * s]) - dot));
  });
}

Tensor log_softmax_backward(const Tensor& dy, const Tensor& y, int64_t dim) {
  return along<2>({dy, y}, dim, "log_softmax_backward", [](const auto& in, auto* out, int64_t n, int64_t s) {
    using T = std::remove_cv_t<std::remove_reference_t<decltype(*out)>>;
    const T *g = in[0], *ly = in[1];
    if constexpr (is_f32<T>)
      if (s == 1) return cpu::log_softmax_backward_f32(g, ly, out, n);
    double total = 0;
    for (int64_t j = 0; j < n; ++j) total += double(g[j * s]);
    for (int64_t j = 0; j < n; ++j) out[j * s] = T(double(g[j * s]) - std::exp(double(ly[j * s])) * total);
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
  int64_t rows = n ? x.numel() / n : 0;
  detail::dispatch_float(x.dtype(), "layer_norm", [&](auto z) {
    using T = decltype(z);
    const T* pi = c.data<T>();
    T *po = out.data<T>(), *pm = mean.data<T>(), *pr = rstd.data<T>();
    const T *pw = w.defined() ? w.data<T>() : nullptr, *pb = b.defined() ? b.data<T>() : nullptr;
    T* pa = affine.defined() ? affine.data<T>() : nullptr;
    cpu::parallel_for(rows, std::max<int64_t>(1, cpu::kGrainElements / 4 / std::max<int64_t>(n, 1)), [&](int64_t lo, int64_t hi) {
      const T* x = pi + lo * n;
      T *xhat = po + lo * n, *y = pa ? pa + lo * n : nullptr;
      if constexpr (is_f32<T>) {
        cpu::layer_norm_f32(x, xhat, y, pw, pb, hi - lo, n, eps, pm + lo, pr + lo);
      } else {
        normalize_rows(x, xhat, y, pw, pb, hi - lo, n, eps, pm + lo, pr + lo);
      }
    });
  });
  return {out, mean, rstd, affine};
}

}  // namespace tg

namespace tg {

// Per row of n: g = dy·w, dx = rstd·(g - mean(g) - x̂·mean(g·x̂)); the column sums dw = Σ dy·x̂ and db = Σ dy
// are taken per chunk of rows in double and added under a lock. f32 rows run in the kernel room.
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
  std::mutex mu;
  detail::dispatch_float(xhat.dtype(), "layer_norm_backward", [&](auto z) {
    using T = decltype(z);
    const T *pg = g.data<T>(), *ph = h.data<T>(), *pr = r.data<T>(), *pw = w.defined() ? w.data<T>() : nullptr;
    T* po = out.dx.data<T>();
    cpu::parallel_for(rows, std::max<int64_t>(1, cpu::kGrainElements / 4 / std::max<int64_t>(n, 1)), [&](int64_t lo, int64_t hi) {
      std::vector<double> dw_part(dw.size()), db_part(db.size());
      double* pdw = dw_part.empty() ? nullptr : dw_part.data();
      double* pdb = db_part.empty() ? nullptr : db_part.data();
      const T *gy = pg + lo * n, *xh = ph + lo * n;
      if constexpr (is_f32<T>) {
        cpu::layer_norm_backward_f32(gy, xh, pw, pr + lo, po + lo * n, pdw, pdb, hi - lo, n);
      } else {
        layer_norm_backward_rows(gy, xh, pw, pr + lo, po + lo * n, pdw, pdb, hi - lo, n);
      }
      std::lock_guard lock(mu);
      for (size_t j = 0; j < dw.size(); ++j) dw[j] += dw_part[j];
      for (size_t j = 0; j < db.size(); ++j) db[j] += db_part[j];
    });
  });
  if (weight.defined()) out.dweight = tensor(dw, weight.shape(), xhat.dtype());
  if (with_bias) out.dbias = tensor(db, {n}, xhat.dtype());
  return out;
}

}  // namespace tg
