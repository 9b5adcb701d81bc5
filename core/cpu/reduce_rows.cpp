// The reductions of ops/reduce.cpp over its contiguous rows (or (outer, len, inner) blocks), threaded over rows.
// Float sums accumulate in double in the order of the row, so f32 results are as accurate as f32 can hold and
// the same at any thread count; f32 block sums run add_columns_f32 (reduce.cpp), the same order.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "core/cpu/kernels.h"

namespace tg::cpu {
namespace {

// out[i] = f(row i, len) for each row, over the pool.
template <class T, class Out, class F>
void per_row(const T* x, int64_t rows, int64_t len, Out* out, F f) {
  parallel_for(rows, std::max<int64_t>(1, kGrainElements / std::max<int64_t>(len, 1)), [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) out[i] = f(x + i * len, len);
  });
}

template <class T>
double row_sum(const T* p, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += double(p[i]);
  return s;
}

template <class T>
bool has_nan(const T* p, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    if (std::isnan(p[i])) return true;
  return false;
}

// acc[i] += Σ_j src[j·stride + i] for i < m, the terms of each column in the order of j (add_columns_f32's
// order, which f32 runs).
template <class T>
void add_columns(const T* src, int64_t len, int64_t stride, int64_t m, double* acc) {
  if constexpr (std::is_same_v<T, float>) {
    add_columns_f32(src, len, stride, m, acc);
  } else {
    for (int64_t j = 0; j < len; ++j)
      for (int64_t i = 0; i < m; ++i) acc[i] += double(src[j * stride + i]);
  }
}

// Extremum of a row: value and first index; NaN wins (as in PyTorch).
template <class T, class Better>
std::pair<T, int64_t> row_extreme(const T* p, int64_t n, Better better) {
  T best = p[0];
  int64_t at = 0;
  for (int64_t i = 1; i < n && best == best; ++i)
    if (p[i] != p[i] || better(p[i], best)) best = p[i], at = i;
  return {best, at};
}

}  // namespace

template <class T>
void sum_rows(const T* x, int64_t rows, int64_t len, double divisor, T* out) {
  per_row(x, rows, len, out, [divisor](const T* p, int64_t n) { return T(row_sum(p, n) / divisor); });
}

// Summed in uint64_t, where wrapping is defined (in int64_t it is undefined behaviour).
template <class T>
void wrapping_sum_rows(const T* x, int64_t rows, int64_t len, int64_t* out) {
  per_row(x, rows, len, out, [](const T* p, int64_t n) {
    uint64_t s = 0;
    for (int64_t i = 0; i < n; ++i) s += uint64_t(int64_t(p[i]));
    return int64_t(s);
  });
}

// Row by row into double accumulators (the same order of additions for each element as a row sum), in parallel
// over o and chunks of 256 columns.
template <class T>
void sum_blocks(const T* x, int64_t outer, int64_t len, int64_t inner, double divisor, T* out) {
  const int64_t chunk = 256, chunks = (inner + chunk - 1) / chunk;
  parallel_for(outer * chunks, std::max<int64_t>(1, kGrainElements / (len * chunk)), [&](int64_t lo, int64_t hi) {
    double acc[chunk];
    for (int64_t t = lo; t < hi; ++t) {
      const int64_t o = t / chunks, i0 = t % chunks * chunk, m = std::min(chunk, inner - i0);
      std::fill(acc, acc + m, 0.0);
      add_columns(x + o * len * inner + i0, len, inner, m, acc);
      for (int64_t i = 0; i < m; ++i) out[o * inner + i0 + i] = T(acc[i] / divisor);
    }
  });
}

template <class T>
void var_rows(const T* x, int64_t rows, int64_t len, int64_t correction, T* out) {
  per_row(x, rows, len, out, [correction](const T* p, int64_t n) {
    double m = row_sum(p, n) / double(n), ss = 0;
    // A mean that is not finite comes from ±inf (or a double overflow): +inf, not inf - inf; NaN stays NaN.
    if (!std::isfinite(m)) return T(has_nan(p, n) ? m : std::numeric_limits<double>::infinity());
    for (int64_t i = 0; i < n; ++i) ss += (double(p[i]) - m) * (double(p[i]) - m);
    return T(ss / double(n - correction));
  });
}

template <class T>
void logsumexp_rows(const T* x, int64_t rows, int64_t len, T* out) {
  if constexpr (std::is_same_v<T, float>) return per_row(x, rows, len, out, logsumexp_f32);
  per_row(x, rows, len, out, [](const T* p, int64_t n) {
    double m = -std::numeric_limits<double>::infinity();
    for (int64_t i = 0; i < n; ++i) m = std::max(m, double(p[i]));
    // All -inf gives -inf, +inf gives +inf (never inf - inf); max passes NaNs over, so they are looked for.
    if (!std::isfinite(m)) return has_nan(p, n) ? std::numeric_limits<T>::quiet_NaN() : T(m);
    double s = 0;
    for (int64_t i = 0; i < n; ++i) s += std::exp(double(p[i]) - m);
    return T(m + std::log(s));
  });
}

template <class T>
void extreme_rows(const T* x, int64_t rows, int64_t len, bool largest, T* values, int64_t* indices) {
  if constexpr (std::is_same_v<T, float>) {
    if (!indices) return per_row(x, rows, len, values, [largest](const T* p, int64_t n) {
      return extreme_f32(p, n, largest);
    });
  }
  auto by = [&](auto better) {
    parallel_for(rows, std::max<int64_t>(1, kGrainElements / std::max<int64_t>(len, 1)), [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) {
        const std::pair<T, int64_t> e = row_extreme(x + i * len, len, better);
        values[i] = e.first;
        if (indices) indices[i] = e.second;
      }
    });
  };
  if (largest) by([](T a, T b) { return a > b; });
  else by([](T a, T b) { return a < b; });
}

template void sum_rows(const float*, int64_t, int64_t, double, float*);
template void sum_rows(const double*, int64_t, int64_t, double, double*);
template void wrapping_sum_rows(const int64_t*, int64_t, int64_t, int64_t*);
template void wrapping_sum_rows(const bool*, int64_t, int64_t, int64_t*);
template void sum_blocks(const float*, int64_t, int64_t, int64_t, double, float*);
template void sum_blocks(const double*, int64_t, int64_t, int64_t, double, double*);
template void var_rows(const float*, int64_t, int64_t, int64_t, float*);
template void var_rows(const double*, int64_t, int64_t, int64_t, double*);
template void logsumexp_rows(const float*, int64_t, int64_t, float*);
template void logsumexp_rows(const double*, int64_t, int64_t, double*);
template void extreme_rows(const float*, int64_t, int64_t, bool, float*, int64_t*);
template void extreme_rows(const double*, int64_t, int64_t, bool, double*, int64_t*);
template void extreme_rows(const int64_t*, int64_t, int64_t, bool, int64_t*, int64_t*);

}  // namespace tg::cpu
