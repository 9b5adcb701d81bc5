// Softmax, log-softmax and layer-norm statistics: the kernels whose naive forms overflow or cancel.
// Softmax subtracts the row max; layer norm takes mean and variance in two passes in double.
#include <cmath>
#include <limits>

#include "core/kernel_util.h"
#include "core/ops.h"
#include "core/parallel.h"

namespace tg {
namespace {

// Applies f(in, out, n, stride) to every line along `dim` of a contiguous copy of x.
template <class F>
Tensor along(const Tensor& x, int64_t dim, const char* op, F f) {
  dim = normalize_dim(dim, x.dim(), op);
  Tensor c = x.contiguous();
  Tensor out = empty(x.shape(), x.dtype());
  detail::Around a = detail::around(x.shape(), x.dim() ? dim : 0);
  detail::dispatch_float(x.dtype(), op, [&](auto z) {
    using T = decltype(z);
    const T* pi = c.data<T>();
    T* po = out.data<T>();
    parallel_for(a.outer * a.inner, std::max<int64_t>(1, 4096 / std::max<int64_t>(a.n, 1)), [&](int64_t lo, int64_t hi) {
      for (int64_t r = lo; r < hi; ++r) {
        int64_t base = (r / a.inner) * a.n * a.inner + r % a.inner;
        f(pi + base, po + base, a.n, a.inner);
      }
    });
  });
  return out;
}

// Max of a strided line, and log Σ exp(x - max); an all -inf line gives max -inf.
template <class T>
std::pair<double, double> max_and_log_sum(const T* in, int64_t n, int64_t s) {
  double m = -std::numeric_limits<double>::infinity();
  for (int64_t j = 0; j < n; ++j) m = std::max(m, double(in[j * s]));
  double sum = 0;
  if (std::isfinite(m))
    for (int64_t j = 0; j < n; ++j) sum += std::exp(double(in[j * s]) - m);
  return {m, std::log(sum)};
}

}  // namespace

Tensor softmax(const Tensor& x, int64_t dim) {
  return along(x, dim, "softmax", [](const auto* in, auto* out, int64_t n, int64_t s) {
    using T = std::remove_cv_t<std::remove_reference_t<decltype(*in)>>;
    double m = -std::numeric_limits<double>::infinity(), sum = 0;
    for (int64_t j = 0; j < n; ++j) m = std::max(m, double(in[j * s]));
    if (m == -std::numeric_limits<double>::infinity()) {  // fully masked line: zeros, not NaN
      for (int64_t j = 0; j < n; ++j) out[j * s] = T(0);
      return;
    }
    for (int64_t j = 0; j < n; ++j) sum += double(out[j * s] = T(std::exp(double(in[j * s]) - m)));
    for (int64_t j = 0; j < n; ++j) out[j * s] = T(double(out[j * s]) / sum);
  });
}

Tensor log_softmax(const Tensor& x, int64_t dim) {
  return along(x, dim, "log_softmax", [](const auto* in, auto* out, int64_t n, int64_t s) {
    using T = std::remove_cv_t<std::remove_reference_t<decltype(*in)>>;
    auto [m, log_sum] = max_and_log_sum(in, n, s);
    for (int64_t j = 0; j < n; ++j) out[j * s] = T(double(in[j * s]) - m - log_sum);
  });
}

Normalized normalize(const Tensor& x, int64_t normalized_ndim, double eps) {
  check<ShapeError>(normalized_ndim >= 1 && normalized_ndim <= x.dim(),
                    "layer_norm: cannot normalise the last {} dims of a tensor of shape {}", normalized_ndim, x.shape());
  check<ValueError>(eps >= 0 && std::isfinite(eps), "layer_norm: eps must be finite and >= 0, got {}", eps);
  Shape stat_shape = x.shape();
  int64_t n = 1;
  for (int64_t d = x.dim() - normalized_ndim; d < x.dim(); ++d) n *= stat_shape[d], stat_shape[d] = 1;
  Tensor c = x.contiguous(), out = empty(x.shape(), x.dtype());
  Tensor mean = empty(stat_shape, x.dtype()), rstd = empty(stat_shape, x.dtype());
  int64_t rows = n ? x.numel() / n : 0;
  detail::dispatch_float(x.dtype(), "layer_norm", [&](auto z) {
    using T = decltype(z);
    const T* pi = c.data<T>();
    T *po = out.data<T>(), *pm = mean.data<T>(), *pr = rstd.data<T>();
    parallel_for(rows, std::max<int64_t>(1, 4096 / std::max<int64_t>(n, 1)), [&](int64_t lo, int64_t hi) {
      for (int64_t r = lo; r < hi; ++r) {
        const T* row = pi + r * n;
        double m = 0, v = 0;
        for (int64_t j = 0; j < n; ++j) m += double(row[j]);
        m /= double(n);
        for (int64_t j = 0; j < n; ++j) v += (double(row[j]) - m) * (double(row[j]) - m);
        double rs = 1.0 / std::sqrt(v / double(n) + eps);
        for (int64_t j = 0; j < n; ++j) po[r * n + j] = T((double(row[j]) - m) * rs);
        pm[r] = T(m), pr[r] = T(rs);
      }
    });
  });
  return {out, mean, rstd};
}

}  // namespace tg
