// Binary elementwise kernels with NumPy broadcasting and PyTorch's type promotion: arithmetic, comparisons,
// logical ops, where.
// One template (binary) serves them all: a flat, threaded loop when both operands are contiguous with the
// output's shape (or one is a scalar or a repeated row), the strided visit otherwise: binary picks the layout, the
// loops are the kernel room's (core/cpu/loops.h); the flat f32 and f64 add, sub, mul and div run its Highway lines.
#include <cmath>
#include <optional>

#include "core/cpu/loops.h"
#include "core/kernel_util.h"
#include "core/ops.h"

namespace tg {
namespace {

// PyTorch's c10::combine_categories: the dtype of `higher` (a tier of operands: tensors with dims over 0-dim
// ones, those over scalars) unless `lower` is of a higher category (bool < integer < float), then their
// promote_types. An absent higher tier leaves lower's dtype.
DType combine_categories(std::optional<DType> higher, DType lower) {
  if (!higher) return lower;
  if (is_floating(*higher)) return *higher;
  if (*higher == boolean || is_floating(lower)) return promote_types(*higher, lower);
  return *higher;
}

// fn(a, b) with both operands in their common dtype (result_type; f32 for a true division of integers or bools):
// a converted copy only of an operand of another dtype, else the operand itself, not even a handle's copy
// (small ops, e.g. a backward's on 4x4 tensors, are dominated by such costs).
template <class Fn>
Tensor with_promoted(const Tensor& a, const Tensor& b, const char* op, bool true_division, Fn fn) {
  detail::check_defined(a, op, "an operand");
  detail::check_defined(b, op, "an operand");
  // One dtype is its own result type (most calls: skip result_type's tiers).
  if (a.dtype() == b.dtype() && (!true_division || is_floating(a.dtype()))) return fn(a, b);
  DType t = result_type(a, b);
  if (true_division && !is_floating(t)) t = f32;
  return fn(a.dtype() == t ? a : a.to(t), b.dtype() == t ? b : b.to(t));
}

// Whether a contiguous tensor of shape `s` broadcast to `full` repeats along the leading dims only: s without
// its leading 1s is a suffix of full (a bias (C) or (1, C) against (B, S, C)).
bool repeats_rows(const Shape& s, const Shape& full) {
  size_t lead = 0;
  while (lead < s.size() && s[lead] == 1) ++lead;
  const size_t k = s.size() - lead;
  if (k > full.size()) return false;
  for (size_t d = 0; d < k; ++d)
    if (s[lead + d] != full[full.size() - k + d]) return false;
  return true;
}

// out[i] = f(a[i], b[i]) over the broadcast shape; Out is the output element type.
template <class Out, class T, class F>
Tensor binary(const Tensor& a, const Tensor& b, DType out_dtype, const char* op, F f,
              std::optional<cpu::Arith> k = std::nullopt) {
  // Equal shapes (most calls, and all of a backward's on small tensors) need no broadcasting.
  const bool same = a.shape() == b.shape();
  Shape shape = same ? a.shape() : broadcast_shapes(a.shape(), b.shape(), op);
  Tensor out = empty(shape, out_dtype);
  const T* pa = a.data<T>();
  const T* pb = b.data<T>();
  Out* po = out.data<Out>();
  const bool a_full = (same || a.shape() == shape) && a.is_contiguous();
  if (a_full && (same || b.shape() == shape) && b.is_contiguous()) {
    cpu::binary_flat(k, f, pa, false, pb, false, po, out.numel());
  } else if (a_full && b.numel() == 1) {
    cpu::binary_flat(k, f, pa, false, pb, true, po, out.numel());
  } else if (a.numel() == 1 && b.shape() == shape && b.is_contiguous()) {
    cpu::binary_flat(k, f, pa, true, pb, false, po, out.numel());
  } else if (const Tensor& row = a_full ? b : a;
             (a_full || (b.shape() == shape && b.is_contiguous())) && row.numel() > 0 && row.is_contiguous() &&
             repeats_rows(row.shape(), shape)) {
    // One operand full, the other a row of m repeated (a bias): row by row, no index arithmetic per element.
    const int64_t m = row.numel();
    cpu::binary_rows_flat(k, f, a_full ? pa : pb, a_full ? pb : pa, !a_full, po, out.numel() / m, m);
  } else {  // the strided walk; a b of one element (attention's q / √d) walks a alone
    const bool b_one = b.numel() == 1;
    cpu::binary_strided<Out>(f, shape, pa, detail::broadcast_strides(a, shape), pb,
                             b_one ? Strides{} : detail::broadcast_strides(b, shape), b_one, po);
  }
  return out;
}

// Arithmetic: the promoted dtype in and out (f32, f64, i64).
// k names the kernel room's line for the op, where it has one.
template <class F>
Tensor arith(const Tensor& a, const Tensor& b, const char* op, F f, std::optional<cpu::Arith> k = std::nullopt) {
  return with_promoted(a, b, op, false, [&](const Tensor& pa, const Tensor& pb) {
    return detail::dispatch_arith(pa.dtype(), op, [&](auto z) {
      using T = decltype(z);
      return binary<T, T>(pa, pb, pa.dtype(), op, [&](T x, T y) { return T(f(x, y)); }, k);
    });
  });
}

// Floating ops: f32 or f64 in and out (DTypeError naming op otherwise); with true_division, integer and bool
// operands compute in f32.
template <class F>
Tensor floating(const Tensor& a, const Tensor& b, const char* op, F f, std::optional<cpu::Arith> k = std::nullopt,
                bool true_division = false) {
  return with_promoted(a, b, op, true_division, [&](const Tensor& pa, const Tensor& pb) {
    return detail::dispatch_float(pa.dtype(), op, [&](auto z) {
      using T = decltype(z);
      return binary<T, T>(pa, pb, pa.dtype(), op, [&](T x, T y) { return T(f(x, y)); }, k);
    });
  });
}

// Comparisons: the operands in their promoted dtype, a bool out.
template <class F>
Tensor compare(const Tensor& a, const Tensor& b, const char* op, F f) {
  return with_promoted(a, b, op, false, [&](const Tensor& pa, const Tensor& pb) {
    return detail::dispatch(pa.dtype(), [&](auto z) {
      using T = decltype(z);
      return binary<bool, T>(pa, pb, boolean, op, [&](T x, T y) { return bool(f(x, y)); });
    });
  });
}

// Logical ops on two bool masks (DTypeError naming op for any other dtype).
template <class F>
Tensor logical(const Tensor& a, const Tensor& b, const char* op, F f) {
  detail::check_defined(a, op, "an operand");
  detail::check_defined(b, op, "an operand");
  check<DTypeError>(a.dtype() == boolean && b.dtype() == boolean, "{}: expected bool masks, got {} and {}", op,
                    a.dtype(), b.dtype());
  return binary<bool, bool>(a, b, boolean, op, f);
}

// a ** b in i64 as PyTorch's powi: by squaring, wrapping around on overflow (two's complement, as its int64
// products); a negative b gives 1 / a^|b| truncated toward zero: 1 for a = 1, ±1 for a = -1 (by b's parity), else 0.
int64_t integer_pow(int64_t a, int64_t b) {
  if (b < 0) return a == 1 ? 1 : a == -1 ? (b % 2 == 0 ? 1 : -1) : 0;
  uint64_t result = 1, base = uint64_t(a);
  for (uint64_t e = uint64_t(b); e != 0; e >>= 1, base *= base)
    if (e & 1) result *= base;
  return int64_t(result);
}

// A scalar v is an int when it is an exact int64 (not 0.5, 1e30, inf or NaN), a float otherwise.
bool is_integral(double v) { return v >= -0x1p63 && v < 0x1p63 && v == std::trunc(v); }

// op(t, v), or op(v, t) when `scalar_first`, with the scalar v as a 0-dim tensor of result_type(t, v): as
// that is t's dtype or above it, op's own promotion then gives result_type(t, v) too.
using BinaryOp = Tensor (*)(const Tensor&, const Tensor&);
Tensor with_scalar(BinaryOp op, const Tensor& t, double v, bool scalar_first = false) {
  const Tensor s = scalar_tensor(v, result_type(t, v));
  return scalar_first ? op(s, t) : op(t, s);
}

}  // namespace

DType result_type(const Tensor& a, const Tensor& b) {
  std::optional<DType> dims, zero_dim;  // the promote_types of each tier
  for (const Tensor* t : {&a, &b}) {
    std::optional<DType>& tier = t->dim() == 0 ? zero_dim : dims;
    tier = tier ? promote_types(*tier, t->dtype()) : t->dtype();
  }
  return zero_dim ? combine_categories(dims, *zero_dim) : *dims;
}
DType result_type(const Tensor& t, double v) {
  return combine_categories(t.dtype(), is_integral(v) ? i64 : f32);
}

Tensor add(const Tensor& a, const Tensor& b) {
  return arith(a, b, "add", [](auto x, auto y) { return x + y; }, cpu::Arith::add);
}
// PyTorch refuses a bool operand of `-`, whatever the other: it is not the inverse of a mask.
Tensor sub(const Tensor& a, const Tensor& b) {
  check<DTypeError>(a.dtype() != boolean && b.dtype() != boolean,
                    "sub: not defined for bool tensors (use logical_not), got {} and {}", a.dtype(), b.dtype());
  return arith(a, b, "sub", [](auto x, auto y) { return x - y; }, cpu::Arith::sub);
}
Tensor mul(const Tensor& a, const Tensor& b) {
  return arith(a, b, "mul", [](auto x, auto y) { return x * y; }, cpu::Arith::mul);
}
Tensor div(const Tensor& a, const Tensor& b) {
  return floating(a, b, "div", [](auto x, auto y) { return x / y; }, cpu::Arith::div, true);
}
Tensor pow(const Tensor& a, const Tensor& b) {
  detail::check_defined(a, "pow", "an operand");
  detail::check_defined(b, "pow", "an operand");
  if (is_floating(result_type(a, b))) return floating(a, b, "pow", [](auto x, auto y) { return std::pow(x, y); });
  check<DTypeError>(a.dtype() != boolean || b.dtype() != boolean, "pow: not defined for two bool operands (as PyTorch)");
  return arith(a, b, "pow", [](auto x, auto y) { return integer_pow(int64_t(x), int64_t(y)); });
}
Tensor pow(const Tensor& a, double e) {
  detail::check_defined(a, "pow", "an operand");
  if (e == 2.0 && is_floating(a.dtype()))
    return floating(a, a, "pow", [](auto x, auto y) { return x * y; }, cpu::Arith::mul);
  check<DTypeError>(is_floating(result_type(a, e)) || e >= 0,
                    "pow: integers to negative integer powers are not allowed ({} tensor ** {}; as PyTorch), convert "
                    "the tensor to a float dtype first", a.dtype(), e);
  return with_scalar(pow, a, e);
}
// NaN propagates through minimum/maximum, as in PyTorch.
Tensor minimum(const Tensor& a, const Tensor& b) {
  return arith(a, b, "minimum", [](auto x, auto y) { return (x != x || x < y) ? x : y; });
}
Tensor maximum(const Tensor& a, const Tensor& b) {
  return arith(a, b, "maximum", [](auto x, auto y) { return (x != x || x > y) ? x : y; });
}

Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
Tensor operator+(const Tensor& a, double b) { return with_scalar(add, a, b); }
Tensor operator-(const Tensor& a, double b) { return with_scalar(sub, a, b); }
Tensor operator*(const Tensor& a, double b) { return with_scalar(mul, a, b); }
Tensor operator/(const Tensor& a, double b) { return with_scalar(div, a, b); }
Tensor operator+(double a, const Tensor& b) { return with_scalar(add, b, a, true); }
Tensor operator-(double a, const Tensor& b) { return with_scalar(sub, b, a, true); }
Tensor operator*(double a, const Tensor& b) { return with_scalar(mul, b, a, true); }
Tensor operator/(double a, const Tensor& b) { return with_scalar(div, b, a, true); }
Tensor operator-(const Tensor& a) { return neg(a); }

Tensor eq(const Tensor& a, const Tensor& b) { return compare(a, b, "eq", [](auto x, auto y) { return x == y; }); }
Tensor ne(const Tensor& a, const Tensor& b) { return compare(a, b, "ne", [](auto x, auto y) { return x != y; }); }
Tensor lt(const Tensor& a, const Tensor& b) { return compare(a, b, "lt", [](auto x, auto y) { return x < y; }); }
Tensor le(const Tensor& a, const Tensor& b) { return compare(a, b, "le", [](auto x, auto y) { return x <= y; }); }
Tensor gt(const Tensor& a, const Tensor& b) { return compare(a, b, "gt", [](auto x, auto y) { return x > y; }); }
Tensor ge(const Tensor& a, const Tensor& b) { return compare(a, b, "ge", [](auto x, auto y) { return x >= y; }); }
Tensor eq(const Tensor& a, double b) { return with_scalar(eq, a, b); }
Tensor ne(const Tensor& a, double b) { return with_scalar(ne, a, b); }
Tensor lt(const Tensor& a, double b) { return with_scalar(lt, a, b); }
Tensor le(const Tensor& a, double b) { return with_scalar(le, a, b); }
Tensor gt(const Tensor& a, double b) { return with_scalar(gt, a, b); }
Tensor ge(const Tensor& a, double b) { return with_scalar(ge, a, b); }

Tensor logical_and(const Tensor& a, const Tensor& b) {
  return logical(a, b, "logical_and", [](bool x, bool y) { return x && y; });
}
Tensor logical_or(const Tensor& a, const Tensor& b) {
  return logical(a, b, "logical_or", [](bool x, bool y) { return x || y; });
}
Tensor logical_not(const Tensor& m) { return logical(m, m, "logical_not", [](bool x, bool) { return !x; }); }

Tensor where(const Tensor& cond, const Tensor& a_in, const Tensor& b_in) {
  detail::check_defined(cond, "where", "the condition");
  check<DTypeError>(cond.dtype() == boolean, "where: condition must be bool, got {}", cond.dtype());
  return with_promoted(a_in, b_in, "where", false, [&](const Tensor& a, const Tensor& b) {
    Shape shape = broadcast_shapes(broadcast_shapes(cond.shape(), a.shape(), "where"), b.shape(), "where");
    Tensor out = empty(shape, a.dtype());
    detail::dispatch(a.dtype(), [&](auto z) {
      using T = decltype(z);
      const bool* pc = cond.data<bool>();
      const T *pa = a.data<T>(), *pb = b.data<T>();
      T* po = out.data<T>();
      // Flat when cond is laid out as the output and a and b are too or are one element (relu's backward).
      auto full = [&](const Tensor& t) { return t.shape() == shape && t.is_contiguous(); };
      if (full(cond) && (full(a) || a.numel() == 1) && (full(b) || b.numel() == 1))
        return cpu::select_flat(pc, pa, full(a), pb, full(b), po, out.numel());
      cpu::select_strided(shape, pc, detail::broadcast_strides(cond, shape), pa, detail::broadcast_strides(a, shape), pb,
                          detail::broadcast_strides(b, shape), po);
    });
    return out;
  });
}

Tensor masked_fill(const Tensor& x, const Tensor& mask, double value) {
  detail::check_defined(x, "masked_fill");
  detail::check_defined(mask, "masked_fill", "the mask");
  check<ShapeError>(broadcast_shapes(x.shape(), mask.shape(), "masked_fill") == x.shape(),
                    "masked_fill: mask of shape {} does not broadcast to input shape {}", mask.shape(), x.shape());
  check<DTypeError>(mask.dtype() == boolean, "masked_fill: mask must be bool, got {}", mask.dtype());
  // A copy of x, then the mask walked beside it (both innermost-contiguous in the common case) writes value
  // where it is true: two flat passes instead of where's three-operand strided walk.
  Tensor out = x.clone(), fill = scalar_tensor(value, x.dtype());
  detail::dispatch(x.dtype(), [&](auto z) {
    using T = decltype(z);
    cpu::fill_where(out.shape(), out.data<T>(), out.strides(), mask.data<bool>(),
                    detail::broadcast_strides(mask, out.shape()), fill.data<T>()[0]);
  });
  return out;
}

}  // namespace tg
