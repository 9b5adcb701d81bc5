// The activations beyond relu, gelu and silu, with PyTorch's definitions and PyTorch's gradient at each kink.
// Only softplus is its own op (its composition would have the kinks of relu and abs at 0, where PyTorch's
// gradient is 1/2); the others are a few differentiable functions each, so their second derivatives come free.
#include <cmath>

#include "autograd/functions.h"

namespace tg {

// x > 0 takes x, x <= 0 takes slope·x: the gradient at 0 is the slope, as in PyTorch's leaky_relu_backward.
Variable leaky_relu(const Variable& x, double negative_slope) {
  return where(gt(x.value(), 0.0), x, x * negative_slope);
}

// x <= 0 takes α·(eˣ - 1), so the gradient at 0 is α (PyTorch's elu_backward). The exponential sees min(x, 0):
// e^100 is inf in f32, and the 0 gradient `where` sends to the branch not taken would meet it as 0·inf = NaN.
Variable elu(const Variable& x, double alpha) {
  return where(gt(x.value(), 0.0), x, alpha * expm1(clamp(x, std::nullopt, 0.0)));
}

// Klambauer et al. 2017, with PyTorch's constants (the fixed point of mean 0 and variance 1).
Variable selu(const Variable& x) {
  constexpr double alpha = 1.6732632423543772848170429916717, scale = 1.0507009873554804934193349852946;
  return scale * elu(x, alpha);
}

// y = log(1 + e^{βx})/β as (max(βx, 0) + log1p(e^{-|βx|}))/β, which never overflows, and y = x where
// βx > threshold (PyTorch's linear region; there the two differ by less than e^-threshold/β).
// dx = dy·σ(βx), dy in the linear region: PyTorch's softplus_backward.
Variable softplus(const Variable& x, double beta, double threshold) {
  check<ValueError>(beta != 0 && std::isfinite(beta), "softplus: beta must be finite and nonzero, got {}", beta);
  const Tensor bx = x.value() * beta;
  const Tensor y = (tg::relu(bx) + tg::log1p(tg::exp(-tg::abs(bx)))) / beta;
  return record("softplus", tg::where(gt(bx, threshold), x.value(), y), {x},
                [x, beta, threshold](const Variable& dy, const Variable&) -> Grads {
                  return {where(gt(x.value() * beta, threshold), dy, dy * sigmoid(x * beta))};
                });
}

// The gradient is 1 strictly inside (min_val, max_val) and 0 at the bounds and outside, as PyTorch's
// hardtanh_backward; clamp's is 1 at the bounds, so the clamped value enters here as a constant instead.
Variable hardtanh(const Variable& x, double min_val, double max_val) {
  check<ValueError>(min_val <= max_val, "hardtanh: min_val {} is greater than max_val {}", min_val, max_val);
  const Tensor inside = logical_and(gt(x.value(), min_val), lt(x.value(), max_val));
  return where(inside, x, Variable(tg::clamp(x.value(), min_val, max_val)));
}

// Misra 2019: x·tanh(softplus(x)), softplus without PyTorch's threshold (as PyTorch's mish). At ±inf the
// limits: -0 with gradient 0 at -inf, x with gradient dy at +inf (the product would be inf·0 there); the
// composition then sees 0 in their place.
Variable mish(const Variable& x) {
  if (all_finite(x.value())) return x * tanh(softplus(x, 1.0, INFINITY));
  const Tensor minus_inf = eq(x.value(), -INFINITY), plus_inf = eq(x.value(), INFINITY);
  const Variable safe = where(logical_or(minus_inf, plus_inf), Variable(zeros_like(x.value())), x);
  const Variable y = safe * tanh(softplus(safe, 1.0, INFINITY));
  return where(plus_inf, x, where(minus_inf, Variable(full(x.shape(), -0.0, x.dtype())), y));
}

}  // namespace tg
