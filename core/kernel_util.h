#pragma once
// Internal to core's .cpp files: dtype dispatch (templates stay out of public headers) and the strided
// loop every general-case kernel runs on.
#include <array>
#include <cstdint>
#include <vector>

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

/// Visits every index of `shape` in row-major order, calling f(offsets) where offsets[k] is the element
/// offset of operand k under strides st[k]. Size-1 dims are dropped and neighbouring dims that every operand
/// steps through as one (st[d-1] = st[d]·shape[d]) are merged first, so the innermost loop is as long as the
/// layouts allow; when it has stride 1 in every operand it is a plain indexed loop the compiler vectorises.
template <size_t N, class F>
void visit(const Shape& shape_in, const std::array<Strides, N>& st_in, F&& f) {
  if (shape_in.numel() == 0) return;
  Shape shape;
  std::array<Strides, N> st;
  for (size_t d = 0; d < shape_in.size(); ++d) {
    if (shape_in[d] == 1) continue;
    bool merge = !shape.empty();
    for (size_t k = 0; k < N && merge; ++k) merge = st[k].back() == st_in[k][d] * shape_in[d];
    if (merge) {
      shape.back() *= shape_in[d];
      for (size_t k = 0; k < N; ++k) st[k].back() = st_in[k][d];
    } else {
      shape.push_back(shape_in[d]);
      for (size_t k = 0; k < N; ++k) st[k].push_back(st_in[k][d]);
    }
  }
  std::array<int64_t, N> off{};
  const int64_t nd = int64_t(shape.size());
  if (nd == 0) {
    f(off);
    return;
  }
  std::vector<int64_t> idx(nd, 0);
  const int64_t inner = shape[nd - 1];
  std::array<int64_t, N> inner_stride;
  bool unit = true;
  for (size_t k = 0; k < N; ++k) inner_stride[k] = st[k][nd - 1], unit &= inner_stride[k] == 1;
  for (;;) {
    std::array<int64_t, N> o = off;
    if (unit) {
      for (int64_t i = 0; i < inner; ++i) {
        for (size_t k = 0; k < N; ++k) o[k] = off[k] + i;
        f(o);
      }
    } else {
      for (int64_t i = 0; i < inner; ++i) {
        f(o);
        for (size_t k = 0; k < N; ++k) o[k] += inner_stride[k];
      }
    }
    int64_t d = nd - 2;
    for (; d >= 0; --d) {
      for (size_t k = 0; k < N; ++k) off[k] += st[k][d];
      if (++idx[d] < shape[d]) break;
      for (size_t k = 0; k < N; ++k) off[k] -= st[k][d] * shape[d];
      idx[d] = 0;
    }
    if (d < 0) return;
  }
}

/// Splits a contiguous tensor around `dim` into (outer, n, inner) so that element (o, j, i) sits at
/// o·n·inner + j·inner + i.
struct Around {
  int64_t outer = 1, n = 1, inner = 1;
};
Around around(const Shape& shape, int64_t dim);

}  // namespace tg::detail
