// Elementwise differentiable functions. Each forward calls a core kernel and records a backward written
// with these same functions, so that create_graph can differentiate it again.
#include <cmath>
#include <numbers>

#include "autograd/functions.h"

namespace tg {
namespace {
// v as a 0-dim tensor of the dtype a Python scalar takes beside `like` (result_type).
Variable constant(double v, const Variable& like) { return Variable(scalar_tensor(v, result_type(like.value(), v))); }
}  // namespace

// y = x in another dtype.  dx = dy in x's dtype (a rounding, when y is the wider).
Variable to(const Variable& x, DType dtype) {
  if (x.dtype() == dtype) return x;
  const DType from = x.dtype();
  return record("to", x.value().to(dtype), {x},
                [from](const Variable& dy, const Variable&) -> Grads { return {to(dy, from)}; });
}

// Binary ops compute in the promoted dtype (core's result_type); the engine hands each input its gradient in
// its own dtype, as PyTorch does.
// c = a + b.  da = dc, db = dc (the engine sums broadcast dims back).
Variable add(const Variable& a, const Variable& b) {
  return record("add", tg::add(a.value(), b.value()), {a, b},
                [](const Variable& dy, const Variable&) -> Grads { return {dy, dy}; });
}
// c = a - b.  da = dc, db = -dc.
Variable sub(const Variable& a, const Variable& b) {
  return record("sub", tg::sub(a.value(), b.value()), {a, b},
                [](const Variable& dy, const Variable&) -> Grads { return {dy, -dy}; });
}
// c = a·b.  da = dc·b, db = dc·a.  Each side is kept only when the other needs a gradient, so x·0.5 keeps
// nothing of x. (Not const: a closure moves its non-const captures into the node, and copies const ones.)
// An unrecorded product (every one in an ordinary backward) skips the closure: its copies of a and b cost
// more than the kernel on small tensors.
Variable mul(const Variable& a, const Variable& b) {
  if (!is_recorded({a, b})) return record("mul", tg::mul(a.value(), b.value()), {a, b}, nullptr);
  Variable keep_a = b.requires_grad() ? a : Variable(), keep_b = a.requires_grad() ? b : Variable();
  return record("mul", tg::mul(a.value(), b.value()), {a, b},
                [keep_a, keep_b](const Variable& dy, const Variable&) -> Grads {
                  return {keep_b ? dy * keep_b : Variable(), keep_a ? dy * keep_a : Variable()};
                });
}
// c = a / b.  da = dc / b, db = -dc·a / b².  a is kept only when b needs a gradient (x / √d keeps no x).
Variable div(const Variable& a, const Variable& b) {
  if (!is_recorded({a, b})) return record("div", tg::div(a.value(), b.value()), {a, b}, nullptr);  // as mul
  Variable keep_a = b.requires_grad() ? a : Variable();
  return record("div", tg::div(a.value(), b.value()), {a, b},
                [keep_a, b](const Variable& dy, const Variable&) -> Grads {
                  return {dy / b, keep_a ? -dy * keep_a / (b * b) : Variable()};
                });
}
Variable neg(const Variable& x) {
  return record("neg", tg::neg(x.value()), {x}, [](const Variable& dy, const Variable&) -> Grads { return {-dy}; });
}
// y = eˣ.  dx = dy·y.
Variable exp(const Variable& x) {
  return record("exp", tg::exp(x.value()), {x}, [](const Variable& dy, const Variable& y) -> Grads { return {dy * y}; },
                true);
}
// y = eˣ - 1.  dx = dy·(y + 1).
Variable expm1(const Variable& x) {
  return record("expm1", tg::expm1(x.value()), {x},
                [](const Variable& dy, const Variable& y) -> Grads { return {dy * (y + 1.0)}; }, true);
}
// y = ln x.  dx = dy / x.
Variable log(const Variable& x) {
  return record("log", tg::log(x.value()), {x}, [x](const Variable& dy, const Variable&) -> Grads { return {dy / x}; });
}
// y = √x.  dx = dy / (2y).
Variable sqrt(const Variable& x) {
  return record("sqrt", tg::sqrt(x.value()), {x},
                [](const Variable& dy, const Variable& y) -> Grads { return {dy * 0.5 / y}; }, true);
}
// y = x^(-1/2).  dx = -dy·y³/2.
Variable rsqrt(const Variable& x) {
  return record("rsqrt", tg::rsqrt(x.value()), {x},
                [](const Variable& dy, const Variable& y) -> Grads { return {dy * -0.5 * y * y * y}; }, true);
}
// y = |x|.  dx = dy·sign(x).
Variable abs(const Variable& x) {
  return record("abs", tg::abs(x.value()), {x}, [x](const Variable& dy, const Variable&) -> Grads {
    return {dy * Variable(tg::sign(x.value()))};
  });
}
namespace {
// dx = dy·(1 - y²) as an op (one kernel), so that a recorded backward can be differentiated again:
// d(dy) = ddx·(1 - y²), d(y) = -2·ddx·dy·y.
Variable tanh_backward(const Variable& dy, const Variable& y) {
  Tensor dx = tg::tanh_backward(dy.value(), y.value());
  if (!is_recorded({dy, y})) return record("tanh_backward", std::move(dx), {dy, y}, nullptr);  // an ordinary backward
  return record("tanh_backward", dx, {dy, y},
                [dy, y](const Variable& ddx, const Variable&) -> Grads {
                  return {tanh_backward(ddx, y), -2.0 * ddx * dy * y};
                });
}
}  // namespace

// y = tanh x.  dx = dy·(1 - y²).
Variable tanh(const Variable& x) {
  return record("tanh", tg::tanh(x.value()), {x},
                [](const Variable& dy, const Variable& y) -> Grads { return {tanh_backward(dy, y)}; }, true);
}
// y = σ(x).  dx = dy·y·(1 - y).
Variable sigmoid(const Variable& x) {
  return record("sigmoid", tg::sigmoid(x.value()), {x},
                [](const Variable& dy, const Variable& y) -> Grads { return {dy * y * (1.0 - y)}; }, true);
}
// y = erf x.  dx = dy·(2/√π)·e^(-x²).
Variable erf(const Variable& x) {
  return record("erf", tg::erf(x.value()), {x}, [x](const Variable& dy, const Variable&) -> Grads {
    return {dy * (2.0 / std::sqrt(std::numbers::pi)) * exp(-(x * x))};
  });
}
// y = x·m with m ∈ {0, scale} given by one bit per element.  dx = dy·m: its own adjoint.
Variable masked_scale(const Variable& x, const Tensor& bits, double scale) {
  return record("masked_scale", tg::masked_scale(x.value(), bits, scale), {x},
                [bits, scale](const Variable& dy, const Variable&) -> Grads { return {masked_scale(dy, bits, scale)}; });
}
// y = max(x, 0).  dx = dy where y > 0, kept as one bit per element rather than y: the next op (dropout in a
// feed-forward block) often does not keep y, and then a 32nd of its memory stays alive. The bits are packed
// only when the op is recorded, for there is no backward to read them otherwise.
Variable relu(const Variable& x) {
  Tensor y = tg::relu(x.value());
  Tensor positive = is_recorded({x}) ? pack_positive(y) : Tensor();
  return record("relu", y, {x}, [positive](const Variable& dy, const Variable&) -> Grads {
    return {masked_scale(dy, positive, 1.0)};
  });
}

namespace {
// slope where x is finite, and at x = ±inf the limits of an S-shaped activation's slope, 1 at +inf and 0 at
// -inf, where silu's and the tanh gelu's formulas meet inf·0.
Variable slope_limits(const Variable& x, const Variable& slope) {
  if (all_finite(x.value())) return slope;
  return where(eq(abs(x.value()), INFINITY), Variable(gt(x.value(), 0.0).to(slope.dtype())), slope);
}

// dx = dy·(Φ(x) + x·φ(x)) as an op (exact gelu's one-pass kernel). As φ' = -x·φ:
// d(dy) = ddx·(Φ(x) + x·φ(x)), d(x) = ddx·dy·φ(x)·(2 - x²).
Variable gelu_backward(const Variable& dy, const Variable& x) {
  Tensor dx = tg::gelu_backward(dy.value(), x.value());
  if (!is_recorded({dy, x})) return record("gelu_backward", std::move(dx), {dy, x}, nullptr);  // as tanh_backward
  return record("gelu_backward", dx, {dy, x},
                [dy, x](const Variable& ddx, const Variable&) -> Grads {
                  Variable pdf = exp(-0.5 * x * x) / std::sqrt(2 * std::numbers::pi);
                  return {gelu_backward(ddx, x), ddx * dy * pdf * (2.0 - x * x)};
                });
}
}  // namespace

// Exact: y = x·Φ(x), dx = dy·(Φ(x) + x·φ(x)), one kernel (gelu_backward above). Tanh form: y = x/2·(1 + tanh u),
// u = k(x + 0.044715x³), dx = dy·(½(1 + t) + ½x(1 - t²)·k(1 + 3·0.044715x²)), composed.
Variable gelu(const Variable& x, bool tanh_approx) {
  return record("gelu", tg::gelu(x.value(), tanh_approx), {x}, [x, tanh_approx](const Variable& dy,
                                                                                  const Variable&) -> Grads {
    if (!tanh_approx) return {gelu_backward(dy, x)};
    const double k = std::sqrt(2 / std::numbers::pi), c = 0.044715;
    Variable t = tanh(k * (x + c * x * x * x));
    return {dy * slope_limits(x, 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * k * (1.0 + 3 * c * x * x))};
  });
}
// y = xᵉ.  dx = dy·e·x^(e-1).
Variable pow(const Variable& x, double e) {
  return record("pow", tg::pow(x.value(), e), {x}, [x, e](const Variable& dy, const Variable&) -> Grads {
    if (e == 0) return {dy * 0.0};
    return {dy * e * (e == 2 ? x : pow(x, e - 1))};
  });
}
// y = a^b.  da = dy·b·a^(b-1), db = dy·y·ln a, as PyTorch's pow_backward: 0 where a = 0 and b >= 0 (not
// 0·-inf), and ln of an integer or bool a in f32 (torch.log's default dtype).
Variable pow(const Variable& a, const Variable& b) {
  return record("pow_tensor", tg::pow(a.value(), b.value()), {a, b},
                [a, b](const Variable& dy, const Variable& y) -> Grads {
                  if (!b.requires_grad()) return {dy * b * pow(a, b - 1.0), Variable()};
                  Tensor at_zero = logical_and(eq(a.value(), 0.0), ge(b.value(), 0.0));
                  Variable ln_a = log(is_floating(a.dtype()) ? a : to(a, f32));
                  return {dy * b * pow(a, b - 1.0), where(at_zero, constant(0, dy), dy * y * ln_a)};
                }, true);
}
// Gradient passes where lo <= x <= hi.
Variable clamp(const Variable& x, std::optional<double> lo, std::optional<double> hi) {
  return record("clamp", tg::clamp(x.value(), lo, hi), {x}, [x, lo, hi](const Variable& dy, const Variable&) -> Grads {
    Tensor inside = ones(x.shape(), boolean);
    if (lo) inside = logical_and(inside, ge(x.value(), *lo));
    if (hi) inside = logical_and(inside, le(x.value(), *hi));
    return {where(inside, dy, constant(0, dy))};
  });
}
// The side that is smaller (larger) takes dy; on a tie each side takes dy/2. The shares are in dy's dtype, the
// promoted one (an i64 a would round 0.5 to 0).
static Variable pick(const char* name, Tensor value, const Variable& a, const Variable& b, bool take_larger) {
  return record(name, std::move(value), {a, b}, [a, b, take_larger](const Variable& dy, const Variable&) -> Grads {
    Tensor wins = take_larger ? gt(a.value(), b.value()) : lt(a.value(), b.value());
    Tensor share = where(eq(a.value(), b.value()), scalar_tensor(0.5, dy.dtype()), wins.to(dy.dtype()));
    return {dy * Variable(share), dy * Variable(1.0 - share)};
  });
}
Variable minimum(const Variable& a, const Variable& b) {
  return pick("minimum", tg::minimum(a.value(), b.value()), a, b, false);
}
Variable maximum(const Variable& a, const Variable& b) {
  return pick("maximum", tg::maximum(a.value(), b.value()), a, b, true);
}
// y = cond ? a : b.  da = dy where cond, db = dy elsewhere.
Variable where(const Tensor& cond, const Variable& a, const Variable& b) {
  return record("where", tg::where(cond, a.value(), b.value()), {a, b},
                [cond](const Variable& dy, const Variable&) -> Grads {
                  Variable zero = constant(0, dy);
                  return {where(cond, dy, zero), where(cond, zero, dy)};
                });
}
Variable masked_fill(const Variable& x, const Tensor& mask, double value) {
  return record("masked_fill", tg::masked_fill(x.value(), mask, value), {x},
                [mask](const Variable& dy, const Variable&) -> Grads { return {masked_fill(dy, mask, 0.0)}; });
}
// y = x·σ(x).  dx = dy·σ(x)·(1 + x·(1 - σ(x))), and its limits dy at +inf, 0 at -inf.
Variable silu(const Variable& x) {
  return record("silu", tg::silu(x.value()), {x}, [x](const Variable& dy, const Variable&) -> Grads {
    Variable s = sigmoid(x);
    return {dy * slope_limits(x, s * (1.0 + x * (1.0 - s)))};
  });
}

Variable operator+(const Variable& a, const Variable& b) { return add(a, b); }
Variable operator-(const Variable& a, const Variable& b) { return sub(a, b); }
Variable operator*(const Variable& a, const Variable& b) { return mul(a, b); }
Variable operator/(const Variable& a, const Variable& b) { return div(a, b); }
Variable operator-(const Variable& x) { return neg(x); }
Variable operator+(const Variable& a, double b) { return add(a, constant(b, a)); }
Variable operator-(const Variable& a, double b) { return sub(a, constant(b, a)); }
Variable operator*(const Variable& a, double b) { return mul(a, constant(b, a)); }
Variable operator/(const Variable& a, double b) { return div(a, constant(b, a)); }
Variable operator+(double a, const Variable& b) { return add(constant(a, b), b); }
Variable operator-(double a, const Variable& b) { return sub(constant(a, b), b); }
Variable operator*(double a, const Variable& b) { return mul(constant(a, b), b); }
Variable operator/(double a, const Variable& b) { return div(constant(a, b), b); }

}  // namespace tg
