#pragma once
// Internal to core's .cpp files and the ops' (core/cpu/ops/): the checks and dtype dispatch of the public ops
// (templates stay out of public headers). The loops they dispatch to are in the kernel room (core/cpu/kernels.h).
#include <cstdint>

#include "core/error.h"
#include "core/tensor.h"

namespace tg::detail {

/// DTypeError "<op>: <what> is undefined (a default-constructed Tensor)" unless `t` is defined. Ops call it
/// before they read a shape: an undefined tensor looks 0-d and empty, which gave misleading messages
/// ("reshape: shape (2, 3) is invalid for input of shape ()").
inline void check_defined(const Tensor& t, const char* op, const char* what = "the input") {
  check<DTypeError>(t.defined(), "{}: {} is undefined (a default-constructed Tensor)", op, what);
}

/// shape.numel(), its ValueError for a negative size or an element count past int64 prefixed with `op`
/// ("randn: shape (1, -1): negative size -1"), so that a factory's message names the function called.
int64_t numel_for(const Shape& shape, const char* op);
/// tg::empty for the factory `op`: its errors (the sizes above, a byte count past int64, out of memory)
/// name `op`.
Tensor empty_for(const Shape& shape, DType dtype, const char* op);

/// Calls f(T{}) with T the C++ type of `t`.
template <class F>
decltype(auto) dispatch(DType t, F&& f) {
  switch (t) {
    case DType::f32: return f(float{});
    case DType::f64: return f(double{});
    case DType::i64: return f(int64_t{});
    case DType::boolean: return f(bool{});
  }
  throw DTypeError("unknown dtype");
}

/// Like dispatch, for f32/f64 only; DTypeError naming `op` otherwise.
template <class F>
decltype(auto) dispatch_float(DType t, const char* op, F&& f) {
  check<DTypeError>(is_floating(t), "{}: expected a floating dtype (f32 or f64), got {}", op, t);
  return t == DType::f32 ? f(float{}) : f(double{});
}

/// Like dispatch, for f32/f64/i64 (arithmetic); DTypeError naming `op` for bool.
template <class F>
decltype(auto) dispatch_arith(DType t, const char* op, F&& f) {
  check<DTypeError>(t != DType::boolean, "{}: not defined for bool tensors (convert with to())", op);
  return t == DType::f32 ? f(float{}) : t == DType::f64 ? f(double{}) : f(int64_t{});
}

/// Strides of `t` seen as broadcast to `shape` (0 on broadcast or missing leading dims).
Strides broadcast_strides(const Tensor& t, const Shape& shape);

}  // namespace tg::detail
