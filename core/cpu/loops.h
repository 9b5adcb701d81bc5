#pragma once
// The loops of core's elementwise ops, templates on the op's element function so that it is inlined: flat lines
// (through the Highway arithmetic lines of binary.cpp where they have the op), and the strided walk (visit.h).
#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <type_traits>

#include "core/cpu/kernels.h"

namespace tg::cpu {

/// out[i] = f(a[i], b[i]) for i < n, a[0] (b[0]) for every i where a_one (b_one): through arith_f32 or arith_f64
/// for op k where they have it (f32 and f64 add, sub, mul, div), else a loop (i64, comparisons, logical ops, ...).
template <class Out, class T, class F>
void binary_line(std::optional<Arith> k, F f, const T* a, bool a_one, const T* b, bool b_one, Out* o, int64_t n) {
  if constexpr (std::is_same_v<Out, T> && (std::is_same_v<T, float> || std::is_same_v<T, double>)) {
    if (k) {
      if constexpr (std::is_same_v<T, float>) arith_f32(*k, a, a_one, b, b_one, o, n);
      else arith_f64(*k, a, a_one, b, b_one, o, n);
      return;
    }
  }
  if (a_one)
    for (int64_t i = 0; i < n; ++i) o[i] = f(a[0], b[i]);
  else if (b_one)
    for (int64_t i = 0; i < n; ++i) o[i] = f(a[i], b[0]);
  else
    for (int64_t i = 0; i < n; ++i) o[i] = f(a[i], b[i]);
}

/// The repeated row (a bias): rows × m of out = full f row (row f full where row_first), by binary_line's rules.
template <class Out, class T, class F>
void binary_rows(std::optional<Arith> k, F f, const T* full, const T* row, bool row_first, Out* o, int64_t rows,
                 int64_t m) {
  if constexpr (std::is_same_v<Out, T> && (std::is_same_v<T, float> || std::is_same_v<T, double>)) {
    if (k) {
      if constexpr (std::is_same_v<T, float>) arith_rows_f32(*k, full, row, row_first, o, rows, m);
      else arith_rows_f64(*k, full, row, row_first, o, rows, m);
      return;
    }
  }
  for (int64_t r = 0; r < rows; ++r) {
    if (row_first) binary_line(k, f, row, false, full + r * m, false, o + r * m, m);
    else binary_line(k, f, full + r * m, false, row, false, o + r * m, m);
  }
}

/// y[i] = f(x[i]) for the elements of x (of `shape`, read at `strides`) in row-major order into a contiguous y:
/// over the pool in flat chunks where x is contiguous, else the strided walk.
template <class T, class F>
void unary_map(const T* x, const Shape& shape, const Strides& strides, bool contiguous, T* y, F f) {
  if (contiguous) {
    parallel_for(shape.numel(), kGrainElements, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) y[i] = f(x[i]);
    });
  } else {
    int64_t i = 0;
    visit<1>(shape, {strides}, [&](const std::array<int64_t, 1>& o) { y[i++] = f(x[o[0]]); });
  }
}

/// visit<N>(shape, st, f) over the pool: the outermost dim of more than one index is split into runs of whole
/// sub-tensors of kGrainElements elements or more, one run a thread. f must write only its own element
/// (copy_, fill_): which thread visits an index changes no result.
template <size_t N, class F>
void parallel_visit(const Shape& shape, const std::array<Strides, N>& st, F f) {
  size_t d0 = 0;
  while (d0 + 1 < shape.size() && shape[d0] == 1) ++d0;
  if (shape.empty() || shape.numel() < 2 * kGrainElements) return visit<N>(shape, st, f);
  const int64_t rest = shape.numel() / shape[d0];
  parallel_for(shape[d0], std::max<int64_t>(1, kGrainElements / rest), [&](int64_t lo, int64_t hi) {
    Shape part = shape;
    part[d0] = hi - lo;
    std::array<int64_t, N> base;
    for (size_t k = 0; k < N; ++k) base[k] = lo * st[k][d0];
    visit<N>(part, st, [&](std::array<int64_t, N> o) {
      for (size_t k = 0; k < N; ++k) o[k] += base[k];
      f(o);
    });
  });
}

/// Calls loop(a_step, b_step), a step std::integral_constant 1 where its operand is full and 0 where one element
/// repeats: a step known at compile time lets the loop vectorise.
template <class F>
void with_steps(bool a_full, bool b_full, F loop) {
  const std::integral_constant<int64_t, 0> zero;
  const std::integral_constant<int64_t, 1> one;
  if (a_full) b_full ? loop(one, one) : loop(one, zero);
  else b_full ? loop(zero, one) : loop(zero, zero);
}

}  // namespace tg::cpu
