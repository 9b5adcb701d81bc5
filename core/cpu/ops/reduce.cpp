// Reductions. Every reduction first lays the input out as contiguous rows (the reduced dims permuted to
// the end; a copy only when the layout needs one), then reduces each row on its own in the kernel room
// (core/cpu/reduce_rows.cpp). Float sums accumulate in double, so f32 results are as accurate as f32 can hold.
#include <algorithm>

#include "core/cpu/kernels.h"
#include "core/kernel_util.h"
#include "core/ops.h"

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

// Σ over each row (or block of rows) / divisor.
Tensor summed(const Rows& r, DType dtype, const char* op, double divisor) {
  return detail::dispatch_float(dtype, op, [&](auto z) {
    using T = decltype(z);
    Tensor out = empty(r.out_shape, dtype);
    if (r.inner > 1) cpu::sum_blocks(r.data.data<T>(), r.rows / r.inner, r.len, r.inner, divisor, out.data<T>());
    else cpu::sum_rows(r.data.data<T>(), r.rows, r.len, divisor, out.data<T>());
    return out;
  });
}

// One value per row of a float dtype: kernel(rows pointer, rows, len, out pointer).
template <class F>
Tensor per_row(const Rows& r, DType dtype, const char* op, F kernel) {
  return detail::dispatch_float(dtype, op, [&](auto z) {
    using T = decltype(z);
    Tensor out = empty(r.out_shape, dtype);
    kernel(r.data.data<T>(), r.rows, r.len, out.data<T>());
    return out;
  });
}

// The rows' extremes, and their indices unless values_only (amax, amin: then left empty).
ValuesIndices extreme(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim, const char* op, bool largest,
                      bool values_only = false) {
  Rows r = to_rows(x, dims, keepdim, op);
  check<IndexError>(r.len > 0 || r.rows == 0, "{}: cannot reduce over an empty dim (input shape {})", op, x.shape());
  return detail::dispatch_arith(x.dtype(), op, [&](auto z) {
    using T = decltype(z);
    ValuesIndices out{empty(r.out_shape, x.dtype()), values_only ? Tensor() : empty(r.out_shape, i64)};
    cpu::extreme_rows(r.data.data<T>(), r.rows, r.len, largest, out.values.data<T>(),
                      values_only ? nullptr : out.indices.data<int64_t>());
    return out;
  });
}

}  // namespace

Tensor sum(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  Rows r = to_rows(x, dims, keepdim, "sum", is_floating(x.dtype()));
  if (is_floating(x.dtype())) return summed(r, x.dtype(), "sum", 1.0);
  Tensor out = empty(r.out_shape, i64);  // wrapping around on overflow, as PyTorch's does
  if (x.dtype() == i64) cpu::wrapping_sum_rows(r.data.data<int64_t>(), r.rows, r.len, out.data<int64_t>());
  else cpu::wrapping_sum_rows(r.data.data<bool>(), r.rows, r.len, out.data<int64_t>());
  return out;
}

Tensor mean(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  Rows r = to_rows(x, dims, keepdim, "mean", true);
  check<ValueError>(r.len > 0 || r.out_shape.numel() == 0, "mean: no elements to average over dims ({}) of shape {}",
                    fmt::join(dims, ", "), x.shape());
  return summed(r, x.dtype(), "mean", double(r.len));
}

Tensor var(const Tensor& x, const std::vector<int64_t>& dims, int64_t correction, bool keepdim) {
  Rows r = to_rows(x, dims, keepdim, "var");
  check<ValueError>(r.len > correction || r.out_shape.numel() == 0,
                    "var: {} elements over dims ({}) of shape {} leave no degrees of freedom with correction {}",
                    r.len, fmt::join(dims, ", "), x.shape(), correction);
  return per_row(r, x.dtype(), "var", [correction](const auto* p, int64_t rows, int64_t len, auto* out) {
    cpu::var_rows(p, rows, len, correction, out);
  });
}

Tensor logsumexp(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  return per_row(to_rows(x, dims, keepdim, "logsumexp"), x.dtype(), "logsumexp", [](const auto* p, int64_t rows, int64_t len, auto* out) {
    cpu::logsumexp_rows(p, rows, len, out);
  });
}

Tensor amax(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  return extreme(x, dims, keepdim, "amax", true, true).values;
}
Tensor amin(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  return extreme(x, dims, keepdim, "amin", false, true).values;
}
ValuesIndices max(const Tensor& x, int64_t dim, bool keepdim) { return extreme(x, {dim}, keepdim, "max", true); }
ValuesIndices min(const Tensor& x, int64_t dim, bool keepdim) { return extreme(x, {dim}, keepdim, "min", false); }
Tensor argmax(const Tensor& x, int64_t dim, bool keepdim) {
  return extreme(x, {dim}, keepdim, "argmax", true).indices;
}
Tensor argmin(const Tensor& x, int64_t dim, bool keepdim) {
  return extreme(x, {dim}, keepdim, "argmin", false).indices;
}

}  // namespace tg
