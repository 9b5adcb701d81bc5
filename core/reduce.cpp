// Reductions. Every reduction first lays the input out as contiguous rows (the reduced dims permuted to
// the end; a copy only when the layout needs one), then reduces each row on its own. Float sums
// accumulate in double, so f32 results are as accurate as f32 can hold.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "core/cpu/kernels.h"
#include "core/kernel_util.h"
#include "core/ops.h"
#include "core/parallel.h"

namespace tg {
namespace {

struct Rows {
  Tensor data;         // contiguous (rows, len), or (rows / inner, len, inner) when inner > 1
  int64_t rows, len;
  Shape out_shape;     // the result's shape, honouring keepdim
  int64_t inner = 1;
};

// With `blocks`, a contiguous x whose reduced dims are one block followed by kept dims is returned as it is,
// as (outer, len, inner) rows: sum and mean add its rows of `inner` elements instead of permuting and copying
// (the bias gradient sums (B, S, E) over B and S, mean pooling (B, S, D) over S).
Rows to_rows(const Tensor& x, const std::vector<int64_t>& dims_in, bool keepdim, const char* op,
             bool blocks = false) {
  detail::check_defined(x, op);
  const int64_t nd = x.dim();
  std::vector<bool> reduced(std::max<int64_t>(nd, 1), dims_in.empty());
  for (int64_t d : dims_in) {
    int64_t k = normalize_dim(d, nd, op);
    check<IndexError>(!reduced[k] || dims_in.empty(), "{}: dim {} appears more than once", op, d);
    reduced[k] = true;
  }
  std::vector<int64_t> perm;
  Shape out_shape;
  int64_t rows = 1, len = 1;
  for (int64_t d = 0; d < nd; ++d)
    if (!reduced[d]) perm.push_back(d), rows *= x.shape()[d];
  for (int64_t d = 0; d < nd; ++d)
    if (reduced[d]) perm.push_back(d), len *= x.shape()[d];
  for (int64_t d = 0; d < nd; ++d) {
    if (!reduced[d]) out_shape.push_back(x.shape()[d]);
    else if (keepdim) out_shape.push_back(1);
  }
  int64_t first = 0, last = nd - 1;  // the reduced block [first, last], if there is one
  while (first < nd && !reduced[first]) ++first;
  while (last >= 0 && !reduced[last]) --last;
  bool block = blocks && last < nd - 1 && x.is_contiguous() && x.numel() > 0;
  for (int64_t d = first; block && d <= last; ++d) block = reduced[d];
  if (block) {
    int64_t inner = 1;
    for (int64_t d = last + 1; d < nd; ++d) inner *= x.shape()[d];
    return {x, rows, len, out_shape, inner};
  }
  Tensor data = nd ? x.permute(perm).contiguous() : x.contiguous();
  return {data, rows, len, out_shape};
}

// out[r] = f(row r pointer, len) for each row; Out is the output element type.
template <class Out, class T, class F>
Tensor per_row(const Rows& r, DType out_dtype, F f) {
  Tensor out = empty(r.out_shape, out_dtype);
  const T* p = r.data.data<T>();
  Out* po = out.data<Out>();
  cpu::parallel_for(r.rows, std::max<int64_t>(1, cpu::kGrainElements / std::max<int64_t>(r.len, 1)), [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) po[i] = f(p + i * r.len, r.len);
  });
  return out;
}

// acc[i] += Σ_j src[j·stride + i] for i < m, the terms of each column in the order of j (cpu::add_columns_f32's
// order, which f32 runs).
template <class T>
void add_columns(const T* src, int64_t len, int64_t stride, int64_t m, double* acc) {
  for (int64_t j = 0; j < len; ++j)
    for (int64_t i = 0; i < m; ++i) acc[i] += double(src[j * stride + i]);
}

// out[o, i] = Σ_j x[o, j, i] / divisor over (outer, len, inner) blocks, accumulated in double row by row
// (the same order of additions for each element as a row sum), in parallel over o and chunks of i.
template <class T>
Tensor block_sum(const Rows& r, double divisor) {
  Tensor out = empty(r.out_shape, r.data.dtype());
  const T* p = r.data.data<T>();
  T* po = out.data<T>();
  const int64_t outer = r.rows / r.inner, chunk = 256, chunks = (r.inner + chunk - 1) / chunk;
  cpu::parallel_for(outer * chunks, std::max<int64_t>(1, cpu::kGrainElements / (r.len * chunk)), [&](int64_t lo, int64_t hi) {
    double acc[chunk];
    for (int64_t t = lo; t < hi; ++t) {
      const int64_t o = t / chunks, i0 = t % chunks * chunk, m = std::min(chunk, r.inner - i0);
      const T* src = p + o * r.len * r.inner + i0;
      std::fill(acc, acc + m, 0.0);
      if constexpr (std::is_same_v<T, float>) cpu::add_columns_f32(src, r.len, r.inner, m, acc);
      else add_columns(src, r.len, r.inner, m, acc);
      for (int64_t i = 0; i < m; ++i) po[o * r.inner + i0 + i] = T(acc[i] / divisor);
    }
  });
  return out;
}

template <class T>
double row_sum(const T* p, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += double(p[i]);
  return s;
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

template <class Better>
ValuesIndices extreme(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim, const char* op, Better better) {
  Rows r = to_rows(x, dims, keepdim, op);
  check<IndexError>(r.len > 0 || r.rows == 0, "{}: cannot reduce over an empty dim (input shape {})", op, x.shape());
  return detail::dispatch_arith(x.dtype(), op, [&](auto z) {
    using T = decltype(z);
    Tensor values = per_row<T, T>(r, x.dtype(), [&](const T* p, int64_t n) { return row_extreme(p, n, better).first; });
    Tensor idx = per_row<int64_t, T>(r, i64, [&](const T* p, int64_t n) { return row_extreme(p, n, better).second; });
    return ValuesIndices{values, idx};
  });
}

const auto greater = [](auto a, auto b) { return a > b; };
const auto less = [](auto a, auto b) { return a < b; };

}  // namespace

Tensor sum(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  Rows r = to_rows(x, dims, keepdim, "sum", is_floating(x.dtype()));
  if (!is_floating(x.dtype()))
    return detail::dispatch(x.dtype(), [&](auto z) {
      using T = decltype(z);
      // Wraps around on overflow, as PyTorch's does: summed in uint64_t, where wrapping is defined (in int64_t
      // it is undefined behaviour).
      return per_row<int64_t, T>(r, i64, [](const T* p, int64_t n) {
        uint64_t s = 0;
        for (int64_t i = 0; i < n; ++i) s += uint64_t(int64_t(p[i]));
        return int64_t(s);
      });
    });
  return detail::dispatch_float(x.dtype(), "sum", [&](auto z) {
    using T = decltype(z);
    if (r.inner > 1) return block_sum<T>(r, 1.0);
    return per_row<T, T>(r, x.dtype(), [](const T* p, int64_t n) { return T(row_sum(p, n)); });
  });
}

Tensor mean(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  Rows r = to_rows(x, dims, keepdim, "mean", true);
  return detail::dispatch_float(x.dtype(), "mean", [&](auto z) {
    using T = decltype(z);
    if (r.inner > 1) return block_sum<T>(r, double(r.len));
    return per_row<T, T>(r, x.dtype(), [](const T* p, int64_t n) { return T(row_sum(p, n) / double(n)); });
  });
}

Tensor var(const Tensor& x, const std::vector<int64_t>& dims, int64_t correction, bool keepdim) {
  Rows r = to_rows(x, dims, keepdim, "var");
  return detail::dispatch_float(x.dtype(), "var", [&](auto z) {
    using T = decltype(z);
    return per_row<T, T>(r, x.dtype(), [correction](const T* p, int64_t n) {
      double m = row_sum(p, n) / double(n), ss = 0;
      for (int64_t i = 0; i < n; ++i) ss += (double(p[i]) - m) * (double(p[i]) - m);
      return T(ss / double(std::max<int64_t>(n - correction, 0)));
    });
  });
}

Tensor logsumexp(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  Rows r = to_rows(x, dims, keepdim, "logsumexp");
  return detail::dispatch_float(x.dtype(), "logsumexp", [&](auto z) {
    using T = decltype(z);
    return per_row<T, T>(r, x.dtype(), [](const T* p, int64_t n) {
      double m = -std::numeric_limits<double>::infinity();
      for (int64_t i = 0; i < n; ++i) m = std::max(m, double(p[i]));
      if (!std::isfinite(m)) return T(m);  // all -inf gives -inf; +inf or NaN propagate
      double s = 0;
      for (int64_t i = 0; i < n; ++i) s += std::exp(double(p[i]) - m);
      return T(m + std::log(s));
    });
  });
}

Tensor amax(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  return extreme(x, dims, keepdim, "amax", greater).values;
}
Tensor amin(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  return extreme(x, dims, keepdim, "amin", less).values;
}
ValuesIndices max(const Tensor& x, int64_t dim, bool keepdim) { return extreme(x, {dim}, keepdim, "max", greater); }
ValuesIndices min(const Tensor& x, int64_t dim, bool keepdim) { return extreme(x, {dim}, keepdim, "min", less); }
Tensor argmax(const Tensor& x, int64_t dim, bool keepdim) {
  return extreme(x, {dim}, keepdim, "argmax", greater).indices;
}

}  // namespace tg
