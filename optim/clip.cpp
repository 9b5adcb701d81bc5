// Gradient clipping. The global norm is computed in two passes in double: first max |g| (which also
// finds NaN and inf), then Σ(|g| / max)^p, so no square overflows or underflows whatever the dtype or the
// magnitude; total = max·(Σ)^(1/p). torch 1.13 squares in the gradient's dtype instead.
#include "optim/clip.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.h"
#include "core/ops.h"

namespace tg::optim {
namespace {

// f(|x|) for every element of g, in double.
template <class F>
void for_each_abs(const Tensor& g, F f) {
  Tensor c = g.contiguous();
  if (c.dtype() == f32) {
    for (const float* x = c.data<float>(); x != c.data<float>() + c.numel(); ++x) f(std::fabs(double(*x)));
  } else {
    for (const double* x = c.data<double>(); x != c.data<double>() + c.numel(); ++x) f(std::fabs(*x));
  }
}

// The two passes over g in kLanes independent accumulators, which the compiler keeps in vector registers:
// one running value would chain every element's add (or max) to the one before. `max_abs` raises `largest`
// to max |x| and sets `nan` for a NaN; `sum_squares` adds Σ (|x|·scale)² to `sum`.
constexpr int kLanes = 8;

template <class T>
void max_abs(const Tensor& g, double& largest, bool& nan) {
  const Tensor c = g.contiguous();
  const T* x = c.data<T>();
  const int64_t n = c.numel();
  T m[kLanes] = {};
  bool any_nan = false;
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int j = 0; j < kLanes; ++j) {
      const T a = std::fabs(x[i + j]);
      any_nan |= a != a;
      m[j] = a > m[j] ? a : m[j];
    }
  for (; i < n; ++i) any_nan |= std::isnan(x[i]), m[0] = std::max(m[0], std::fabs(x[i]));
  for (T v : m) largest = std::max(largest, double(v));
  nan |= any_nan;
}

template <class T>
void sum_squares(const Tensor& g, double scale, double& sum) {
  const Tensor c = g.contiguous();
  const T* x = c.data<T>();
  const int64_t n = c.numel();
  double s[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int j = 0; j < kLanes; ++j) {
      const double r = double(x[i + j]) * scale;
      s[j] += r * r;
    }
  for (; i < n; ++i) s[0] += (double(x[i]) * scale) * (double(x[i]) * scale);
  for (double v : s) sum += v;
}

}  // namespace

double clip_grad_norm(const std::vector<Variable>& params, double max_norm, double norm_type,
                      bool error_if_nonfinite) {
  check<ValueError>(max_norm >= 0, "clip_grad_norm: invalid max_norm: {} (expected >= 0)", max_norm);
  check<ValueError>(norm_type > 0, "clip_grad_norm: invalid norm_type: {} (expected > 0 or inf)", norm_type);
  std::vector<Tensor> grads;
  for (const Variable& p : params)
    if (p.grad().defined()) grads.push_back(p.grad());
  if (grads.empty()) return 0.0;

  double largest = 0;  // max |g| over every gradient
  bool nan = false;
  for (const Tensor& g : grads) g.dtype() == f32 ? max_abs<float>(g, largest, nan) : max_abs<double>(g, largest, nan);
  double total = nan ? std::numeric_limits<double>::quiet_NaN() : largest;  // also the inf-norm
  if (!nan && std::isfinite(largest) && largest > 0 && !std::isinf(norm_type)) {
    double sum = 0;  // Σ (|g| / largest)^p: every term in [0, 1] (up to the rounding of 1 / largest)
    const double inverse = 1 / largest;  // inf for a subnormal f64 largest: then the division
    for (const Tensor& g : grads) {
      if (norm_type != 2 || std::isinf(inverse))
        for_each_abs(g, [&](double a) { sum += std::pow(a / largest, norm_type); });
      else if (g.dtype() == f32) sum_squares<float>(g, inverse, sum);
      else sum_squares<double>(g, inverse, sum);
    }
    total = largest * (norm_type == 2 ? std::sqrt(sum) : std::pow(sum, 1 / norm_type));
  }
  if (!std::isfinite(total)) {
    check<ValueError>(!error_if_nonfinite, "clip_grad_norm: the total norm of order {} of the gradients is non-finite: "
                      "{} (pass error_if_nonfinite = false to leave the gradients as they are)", norm_type, total);
    return total;
  }
  const double coef = max_norm / (total + 1e-6);
  if (coef < 1) {
    for (Tensor& g : grads) g.mul_(coef);
  }
  return total;
}

void clip_grad_value(const std::vector<Variable>& params, double clip_value) {
  check<ValueError>(std::isfinite(clip_value) && clip_value >= 0,
                    "clip_grad_value: invalid clip_value: {} (expected a finite value >= 0)", clip_value);
  for (const Variable& p : params) {
    Tensor g = p.grad();
    if (g.defined()) g.copy_(clamp(g, -clip_value, clip_value));
  }
}

}  // namespace tg::optim
