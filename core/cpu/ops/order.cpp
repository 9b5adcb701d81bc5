// Ordering along one dim: sort, argsort and topk. The dim is moved last and each line sorted on its own in the
// kernel room (core/cpu/sort.cpp), by value and then index, so ties keep their order (a stable sort) and NaN
// counts as the largest value, as in PyTorch.
#include "core/cpu/kernels.h"
#include "core/kernel_util.h"
#include "core/ops.h"

namespace tg {
namespace {

// The first k of each line of x along dim, in order; a 0-d x is one line of one.
ValuesIndices sorted_lines(const Tensor& x, int64_t dim, int64_t k, bool descending, const char* op) {
  const int64_t last = x.dim() ? x.dim() - 1 : 0;
  Tensor lines = x.dim() ? x.transpose(dim, last).contiguous() : x.reshape({1});
  const int64_t len = lines.size(-1), rows = len ? lines.numel() / len : 0;
  Shape shape = lines.shape();
  shape.back() = k;
  ValuesIndices out{empty(shape, x.dtype()), empty(shape, i64)};
  detail::dispatch_arith(x.dtype(), op, [&](auto z) {
    using T = decltype(z);
    cpu::sort_rows(lines.data<T>(), rows, len, k, descending, out.values.data<T>(), out.indices.data<int64_t>());
  });
  if (!x.dim()) return {out.values.reshape({}), out.indices.reshape({})};
  return {out.values.transpose(dim, last).contiguous(), out.indices.transpose(dim, last).contiguous()};
}

}  // namespace

ValuesIndices sort(const Tensor& x, int64_t dim, bool descending) {
  detail::check_defined(x, "sort");
  dim = normalize_dim(dim, x.dim(), "sort");
  return sorted_lines(x, dim, x.dim() ? x.size(dim) : 1, descending, "sort");
}

Tensor argsort(const Tensor& x, int64_t dim, bool descending) {
  detail::check_defined(x, "argsort");
  dim = normalize_dim(dim, x.dim(), "argsort");
  return sorted_lines(x, dim, x.dim() ? x.size(dim) : 1, descending, "argsort").indices;
}

ValuesIndices topk(const Tensor& x, int64_t k, int64_t dim, bool largest) {
  detail::check_defined(x, "topk");
  dim = normalize_dim(dim, x.dim(), "topk");
  const int64_t len = x.dim() ? x.size(dim) : 1;
  check<IndexError>(k >= 0 && k <= len, "topk: k = {} is out of range [0, {}] for dim {} of shape {}", k, len, dim,
                    x.shape());
  return sorted_lines(x, dim, k, largest, "topk");
}

}  // namespace tg
