// Unary elementwise ops (neg, exp, tanh, gelu, ...), and all_finite: the array side. f32 exp, tanh, sigmoid,
// silu and gelu run the kernel room's lines (core/cpu/kernels.h) over threaded chunks; the other ops, and every
// op in f64, are portable scalar C++ here: a flat, threaded loop the compiler vectorises for contiguous inputs,
// the strided visit for other layouts.
#include <cmath>
#include <type_traits>

#include "core/cpu/loops.h"
#include "core/kernel_util.h"
#include "core/ops.h"

namespace tg {
namespace {

template <class T, class F>
Tensor unary_typed(const Tensor& x, F f) {
  Tensor out = empty(x.shape(), x.dtype());
  cpu::unary_map(x.data<T>(), x.shape(), x.strides(), x.is_contiguous(), out.data<T>(), f);
  return out;
}

template <class F>
Tensor unary_float(const Tensor& x, const char* op, F f) {
  detail::check_defined(x, op);
  return detail::dispatch_float(x.dtype(), op, [&](auto z) {
    using T = decltype(z);
    return unary_typed<T>(x, [&](T v) { return T(f(v)); });
  });
}

template <class F>
Tensor unary_arith(const Tensor& x, const char* op, F f) {
  detail::check_defined(x, op);
  return detail::dispatch_arith(x.dtype(), op, [&](auto z) {
    using T = decltype(z);
    return unary_typed<T>(x, [&](T v) { return T(f(v)); });
  });
}

// An f32 kernel over x's elements in row-major order (other layouts are copied first: the loop is worth more
// than the copy), threaded in chunks.
Tensor map_f32(const Tensor& x, const char* op, void (*kernel)(const float*, float*, int64_t)) {
  detail::check_defined(x, op);
  const Tensor xc = x.contiguous();
  Tensor out = empty(x.shape(), f32);
  const float* px = xc.data<float>();
  float* po = out.data<float>();
  cpu::parallel_for(x.numel(), cpu::kGrainElements, [&](int64_t lo, int64_t hi) { kernel(px + lo, po + lo, hi - lo); });
  return out;
}

// The backward of an elementwise op from dy and one saved tensor s (its input or output) of the same shape
// and dtype: checks both (errors name `op` and `s_name`), then kernel(T{}, dy, s, out, n) over contiguous
// chunks of at least `grain` elements.
template <class F>
Tensor elementwise_backward(const Tensor& dy, const Tensor& s, const char* op, const char* s_name, int64_t grain,
                            F kernel) {
  detail::check_defined(dy, op, "dy");
  detail::check_defined(s, op, s_name);
  check<ShapeError>(dy.shape() == s.shape(), "{}: shapes differ: {} vs {}", op, dy.shape(), s.shape());
  check<DTypeError>(dy.dtype() == s.dtype(), "{}: dtypes differ: {} vs {}", op, dy.dtype(), s.dtype());
  const Tensor g = dy.contiguous(), sc = s.contiguous();
  Tensor out = empty(s.shape(), s.dtype());
  detail::dispatch_float(s.dtype(), op, [&](auto z) {
    using T = decltype(z);
    const T *pg = g.data<T>(), *ps = sc.data<T>();
    T* po = out.data<T>();
    cpu::parallel_for(s.numel(), grain, [&](int64_t lo, int64_t hi) { kernel(z, pg + lo, ps + lo, po + lo, hi - lo); });
  });
  return out;
}

}  // namespace

Tensor neg(const Tensor& x) { return unary_arith(x, "neg", [](auto v) { return -v; }); }
Tensor abs(const Tensor& x) { return unary_arith(x, "abs", [](auto v) { return v < 0 ? -v : v; }); }
Tensor sign(const Tensor& x) { return unary_arith(x, "sign", [](auto v) { return (v > 0) - (v < 0); }); }
// !(v <= 0) rather than v > 0: a NaN stays NaN, as in PyTorch, instead of becoming a healthy-looking 0.
Tensor relu(const Tensor& x) { return unary_arith(x, "relu", [](auto v) { return !(v <= 0) ? v : decltype(v)(0); }); }
Tensor exp(const Tensor& x) {
  if (x.dtype() == f32) return map_f32(x, "exp", cpu::exp_f32);
  return unary_float(x, "exp", [](auto v) { return std::exp(v); });
}
Tensor log(const Tensor& x) { return unary_float(x, "log", [](auto v) { return std::log(v); }); }
Tensor log1p(const Tensor& x) { return unary_float(x, "log1p", [](auto v) { return std::log1p(v); }); }
Tensor expm1(const Tensor& x) { return unary_float(x, "expm1", [](auto v) { return std::expm1(v); }); }
Tensor sqrt(const Tensor& x) { return unary_float(x, "sqrt", [](auto v) { return std::sqrt(v); }); }
Tensor rsqrt(const Tensor& x) { return unary_float(x, "rsqrt", [](auto v) { return 1 / std::sqrt(v); }); }
Tensor tanh(const Tensor& x) {
  if (x.dtype() == f32) return map_f32(x, "tanh", cpu::tanh_f32);
  return unary_float(x, "tanh", [](auto v) { return std::tanh(v); });
}
Tensor erf(const Tensor& x) { return unary_float(x, "erf", [](auto v) { return std::erf(v); }); }

// Branch on the sign so that exp never overflows: for v < 0, e^v / (1 + e^v).
Tensor sigmoid(const Tensor& x) {
  if (x.dtype() == f32) return map_f32(x, "sigmoid", cpu::sigmoid_f32);
  return unary_float(x, "sigmoid", [](auto v) {
    using T = decltype(v);
    if (v >= 0) return T(1) / (T(1) + std::exp(-v));
    T e = std::exp(v);
    return e / (T(1) + e);
  });
}

// x·σ(x), with σ as sigmoid's; -0 at -inf (the limit; the product would be -inf·0).
Tensor silu(const Tensor& x) {
  if (x.dtype() == f32) return map_f32(x, "silu", cpu::silu_f32);
  return unary_float(x, "silu", [](auto v) {
    using T = decltype(v);
    const T e = std::exp(-std::abs(v));
    return v == -INFINITY ? T(-0.0) : v * (v >= 0 ? T(1) : e) / (T(1) + e);
  });
}

Tensor gelu(const Tensor& x, bool tanh_approx) {
  if (x.dtype() == f32) return map_f32(x, "gelu", tanh_approx ? cpu::gelu_tanh_f32 : cpu::gelu_f32);
  if (tanh_approx)
    return unary_float(x, "gelu", [](auto v) {
      const double k = 0.7978845608028654;  // sqrt(2 / pi)
      return v == -INFINITY ? -0.0 : 0.5 * v * (1 + std::tanh(k * (v + 0.044715 * v * v * v)));
    });
  return unary_float(x, "gelu", [](auto v) { return v == -INFINITY ? -0.0 : v * 0.5 * std::erfc(-v * 0.7071067811865476); });
}

Tensor gelu_backward(const Tensor& dy, const Tensor& x) {
  constexpr int64_t grain = cpu::kGrainElements / 4;  // about 35 vector operations per 16 elements
  return elementwise_backward(dy, x, "gelu_backward", "x", grain, [](auto z, const auto* pg, const auto* px, auto* po,
                                                                     int64_t n) {
    using T = decltype(z);
    if constexpr (std::is_same_v<T, float>) cpu::gelu_backward_f32(pg, px, po, n);
    else cpu::gelu_backward_f64(pg, px, po, n);
  });
}

// One pass instead of four tensors (y·y, 1 - that, dy·that, and the scalar 1): what an ordinary backward of
// tanh costs on small tensors is the tensors, not the arithmetic. T-typed ops: the bits of the composition.
Tensor tanh_backward(const Tensor& dy, const Tensor& y) {
  return elementwise_backward(dy, y, "tanh_backward", "y", cpu::kGrainElements,
                              [](auto, const auto* pg, const auto* py, auto* po, int64_t n) {
    cpu::tanh_backward(pg, py, po, n);
  });
}

Tensor clamp(const Tensor& x, std::optional<double> lo, std::optional<double> hi) {
  check<ValueError>(!(lo && std::isnan(*lo)) && !(hi && std::isnan(*hi)), "clamp: min {} and max {} must not be NaN",
                    lo.value_or(-INFINITY), hi.value_or(INFINITY));
  check<ValueError>(!(lo && hi && *lo > *hi), "clamp: min {} is greater than max {}", lo.value_or(0), hi.value_or(0));
  for (std::optional<double> bound : {lo, hi}) {
    if (!bound) continue;
    check_representable(*bound, x.dtype(), "clamp");  // T(*bound) below must be defined
    check<ValueError>(x.dtype() != i64 || *bound == std::trunc(*bound),
                      "clamp: bound {} of an i64 tensor is not an integer (convert with to(f32) first)", *bound);
  }
  return unary_arith(x, "clamp", [&](auto v) {
    using T = decltype(v);
    if (v != v) return v;
    if (lo && v < T(*lo)) return T(*lo);
    if (hi && v > T(*hi)) return T(*hi);
    return v;
  });
}

bool all_finite(const Tensor& x) {
  detail::check_defined(x, "all_finite");
  if (!is_floating(x.dtype())) return true;
  return detail::dispatch_float(x.dtype(), "all_finite", [&](auto z) {
    using T = decltype(z);
    const Tensor c = x.contiguous();
    return cpu::all_finite(c.data<T>(), c.numel());
  });
}

}  // namespace tg
