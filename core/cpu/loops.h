#pragma once
// The loops of core's elementwise and in-place ops, templates on the op's element function so that it is
// inlined: flat lines (through the Highway arithmetic lines of binary.cpp where they have the op), threaded over
// the pool, and the strided walk (visit.h). core/ picks which one a layout takes; these only loop.
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

/// binary_line over [0, n) in chunks on the pool; an operand that is one element (a_one, b_one) stays put.
template <class Out, class T, class F>
void binary_flat(std::optional<Arith> k, F f, const T* a, bool a_one, const T* b, bool b_one, Out* o, int64_t n) {
  parallel_for(n, kGrainElements, [&](int64_t lo, int64_t hi) {
    binary_line(k, f, a_one ? a : a + lo, a_one, b_one ? b : b + lo, b_one, o + lo, hi - lo);
  });
}

/// binary_rows over the `rows` rows of m of full and o, in chunks of rows on the pool.
template <class Out, class T, class F>
void binary_rows_flat(std::optional<Arith> k, F f, const T* full, const T* row, bool row_first, Out* o, int64_t rows,
                      int64_t m) {
  parallel_for(rows, std::max<int64_t>(1, kGrainElements / m), [&](int64_t lo, int64_t hi) {
    binary_rows(k, f, full + lo * m, row, row_first, o + lo * m, hi - lo, m);
  });
}

/// o[i] = f(a, b) for the elements of `shape` in row-major order into a contiguous o, a read at strides sa and b
/// at sb; with b_one, b[0] for every element (a strided view times a scalar: a walked alone).
template <class Out, class T, class F>
void binary_strided(F f, const Shape& shape, const T* a, const Strides& sa, const T* b, const Strides& sb, bool b_one,
                    Out* o) {
  int64_t i = 0;
  if (b_one) {
    const T s = b[0];
    visit<1>(shape, {sa}, [&](const std::array<int64_t, 1>& p) { o[i++] = f(a[p[0]], s); });
  } else {
    visit<2>(shape, {sa, sb}, [&](const std::array<int64_t, 2>& p) { o[i++] = f(a[p[0]], b[p[1]]); });
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

/// o[i] = c[i] ? a[i] : b[i] for i < n, flat: a (b) one element for every i unless a_full (b_full), each step a
/// compile-time constant (with_steps) so that the select vectorises.
template <class T>
void select_flat(const bool* c, const T* a, bool a_full, const T* b, bool b_full, T* o, int64_t n) {
  with_steps(a_full, b_full, [&](auto a_step, auto b_step) {
    for (int64_t i = 0; i < n; ++i) {
      const T x = a[i * a_step], y = b[i * b_step];
      o[i] = c[i] ? x : y;
    }
  });
}

/// o[i] = c ? a : b over `shape` in row-major order into a contiguous o, c, a and b read at strides sc, sa, sb.
template <class T>
void select_strided(const Shape& shape, const bool* c, const Strides& sc, const T* a, const Strides& sa, const T* b,
                    const Strides& sb, T* o) {
  int64_t i = 0;
  visit<3>(shape, {sc, sa, sb}, [&](const std::array<int64_t, 3>& p) { o[i++] = c[p[0]] ? a[p[1]] : b[p[2]]; });
}

/// o = v where the mask m is true, over `shape`, o at strides so and m at sm (masked_fill on a copy).
template <class T>
void fill_where(const Shape& shape, T* o, const Strides& so, const bool* m, const Strides& sm, T v) {
  visit<2>(shape, {so, sm}, [&](const std::array<int64_t, 2>& p) { o[p[0]] = m[p[1]] ? v : o[p[0]]; });
}

/// d[i] = f(d[i], a[i], b[i]) for i < n in chunks on the pool, flat: a (b) one element for every i unless a_full
/// (b_full), the steps compile-time constants (with_steps) so that the loop vectorises.
template <class T, class F>
void update_flat(T* d, const T* a, bool a_full, const T* b, bool b_full, int64_t n, F f) {
  with_steps(a_full, b_full, [&](auto a_step, auto b_step) {
    parallel_for(n, kGrainElements, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) d[i] = f(d[i], a[i * a_step], b[i * b_step]);
    });
  });
}

/// d = f(d, a, b) over `shape`, d, a and b read at strides sd, sa, sb (0 where they broadcast).
template <class T, class F>
void update_strided(const Shape& shape, T* d, const Strides& sd, const T* a, const Strides& sa, const T* b,
                    const Strides& sb, F f) {
  visit<3>(shape, {sd, sa, sb}, [&](const std::array<int64_t, 3>& p) { d[p[0]] = f(d[p[0]], a[p[1]], b[p[2]]); });
}

/// d[i] = D(s[i]) for i < n, over the pool (C++'s conversion; the caller rules out what is undefined, NaN to an
/// integer).
template <class D, class S>
void convert(const S* s, D* d, int64_t n) {
  parallel_for(n, kGrainElements, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) d[i] = D(s[i]);
  });
}

/// d = D(s) over `shape`, d at strides sd and s at ss (0 where s broadcasts), over the pool (parallel_visit).
template <class D, class S>
void convert_strided(const Shape& shape, D* d, const Strides& sd, const S* s, const Strides& ss) {
  parallel_visit<2>(shape, {sd, ss}, [&](const std::array<int64_t, 2>& p) { d[p[0]] = D(s[p[1]]); });
}

/// p[i] = v for i < n, over the pool.
template <class T>
void fill_flat(T* p, int64_t n, T v) {
  parallel_for(n, kGrainElements, [&](int64_t lo, int64_t hi) { std::fill(p + lo, p + hi, v); });
}

/// p = v at every element of `shape` under strides st, over the pool (parallel_visit).
template <class T>
void fill_strided(const Shape& shape, T* p, const Strides& st, T v) {
  parallel_visit<1>(shape, {st}, [&](const std::array<int64_t, 1>& o) { p[o[0]] = v; });
}

}  // namespace tg::cpu
