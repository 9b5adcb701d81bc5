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
  for (const Tensor& g : grads) {
    for_each_abs(g, [&](double a) {
      if (std::isnan(a)) nan = true;
      else largest = std::max(largest, a);
    });
  }
  double total = nan ? std::numeric_limits<double>::quiet_NaN() : largest;  // also the inf-norm
  if (!nan && std::isfinite(largest) && largest > 0 && !std::isinf(norm_type)) {
    double sum = 0;  // Σ (|g| / largest)^p: every term in [0, 1]
    auto term = [&](double a) { double r = a / largest; return norm_type == 2 ? r * r : std::pow(r, norm_type); };
    for (const Tensor& g : grads) for_each_abs(g, [&](double a) { sum += term(a); });
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
