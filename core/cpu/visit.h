#pragma once
// The strided walk that every general-case elementwise loop runs on, and the (outer, n, inner) split of a
// contiguous tensor around one dim: templates, so that core's ops pass their element functions in (through
// kernels.h, the room's door).
#include <array>
#include <cstdint>
#include <vector>

#include "core/shape.h"

namespace tg::cpu {

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

/// A contiguous tensor split around `dim` into (outer, n, inner), so that element (o, j, i) sits at
/// o·n·inner + j·inner + i: the lines along `dim` start at o·n·inner + i, their elements inner apart.
struct Around {
  int64_t outer = 1, n = 1, inner = 1;
};
inline Around around(const Shape& shape, int64_t dim) {
  Around a;
  for (int64_t d = 0; d < int64_t(shape.size()); ++d) (d < dim ? a.outer : d == dim ? a.n : a.inner) *= shape[d];
  return a;
}

}  // namespace tg::cpu
