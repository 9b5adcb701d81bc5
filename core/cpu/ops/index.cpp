// Indexing and joining: index_select / index_add (embedding lookup and its gradient), embedding bags (sums
// of looked-up rows and their gradient), gather / scatter / scatter_add (picking one logit per row and its gradient),
// cat and stack. Every index is checked here; the loops run in the kernel room (core/cpu/index.cpp).
#include "core/cpu/kernels.h"
#include "core/kernel_util.h"
#include "core/ops.h"

namespace tg {
namespace {

// Validated i64 indices as a vector; IndexError naming the op, the offending index and the size.
std::vector<int64_t> checked_indices(const Tensor& index, int64_t size, const char* op) {
  detail::check_defined(index, op, "the index");
  check<DTypeError>(index.dtype() == i64, "{}: indices must be i64, got {}", op, index.dtype());
  std::vector<int64_t> v = index.to_vector<int64_t>();
  for (int64_t i : v) check<IndexError>(i >= 0 && i < size, "{}: index {} is out of range [0, {})", op, i, size);
  return v;
}

}  // namespace

Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index) {
  detail::check_defined(x, "index_select");
  dim = normalize_dim(dim, x.dim(), "index_select");
  check<ShapeError>(index.dim() <= 1, "index_select: index must be 1-D, got shape {}", index.shape());
  std::vector<int64_t> idx = checked_indices(index, x.dim() ? x.shape()[dim] : 1, "index_select");
  check<IndexError>(x.dim() > 0 || idx.size() == 1, "index_select: a 0-d input takes exactly one index, got {}",
                    idx.size());
  Shape shape = x.shape();
  if (x.dim()) shape[dim] = int64_t(idx.size());
  Tensor c = x.contiguous(), out = empty(shape, x.dtype());
  std::vector<std::pair<int64_t, int64_t>> pairs;
  for (size_t j = 0; j < idx.size(); ++j) pairs.emplace_back(int64_t(j), idx[j]);
  detail::dispatch(x.dtype(), [&](auto z) {
    using T = decltype(z);
    cpu::move_slices(c.data<T>(), out.data<T>(), cpu::around(c.shape(), dim), cpu::around(shape, dim), pairs, false);
  });
  return out;
}

Tensor index_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& source) {
  detail::check_defined(x, "index_add");
  detail::check_defined(source, "index_add", "the source");
  dim = normalize_dim(dim, x.dim(), "index_add");
  check<DTypeError>(x.dtype() == source.dtype(), "index_add: dtypes differ: {} vs {}", x.dtype(), source.dtype());
  check<ShapeError>(index.dim() <= 1, "index_add: index must be 1-D, got shape {}", index.shape());
  std::vector<int64_t> idx = checked_indices(index, x.dim() ? x.shape()[dim] : 1, "index_add");
  check<IndexError>(x.dim() > 0 || idx.size() == 1, "index_add: a 0-d input takes exactly one index, got {}",
                    idx.size());
  Shape want = x.shape();
  if (x.dim()) want[dim] = int64_t(idx.size());
  check<ShapeError>(source.shape() == want, "index_add: source shape {} does not match {} (input {}, {} indices)",
                    source.shape(), want, x.shape(), idx.size());
  Tensor out = x.clone(), s = source.contiguous();
  std::vector<std::pair<int64_t, int64_t>> pairs;
  for (size_t j = 0; j < idx.size(); ++j) pairs.emplace_back(idx[j], int64_t(j));
  detail::dispatch_arith(x.dtype(), "index_add", [&](auto z) {
    using T = decltype(z);
    cpu::move_slices(s.data<T>(), out.data<T>(), cpu::around(want, dim), cpu::around(x.shape(), dim), pairs, true);
  });
  return out;
}

namespace {

// The contiguous index of gather, scatter and scatter_add, after checking it against x: i64, x's ndim, within x's
// shape outside `dim`, every entry in [0, x's size along dim) (IndexError naming the first that is not).
Tensor gather_index(const Tensor& x, int64_t dim, const Tensor& index, const char* op) {
  detail::check_defined(index, op, "the index");
  check<DTypeError>(index.dtype() == i64, "{}: indices must be i64, got {}", op, index.dtype());
  check<ShapeError>(index.dim() == x.dim(), "{}: index shape {} and input shape {} differ in ndim", op, index.shape(),
                    x.shape());
  for (int64_t d = 0; d < x.dim(); ++d)
    check<ShapeError>(d == dim || index.shape()[d] <= x.shape()[d], "{}: index shape {} exceeds input shape {} at dim {}",
                      op, index.shape(), x.shape(), d);
  Tensor ic = index.contiguous();
  const int64_t* pi = ic.data<int64_t>();
  const int64_t size = x.dim() ? x.shape()[dim] : 1;
  for (int64_t p = 0; p < ic.numel(); ++p)
    check<IndexError>(pi[p] >= 0 && pi[p] < size, "{}: index {} is out of range [0, {})", op, pi[p], size);
  return ic;
}

// Checks of an embedding bag's (M, N) index against V rows; its entries, row-major.
std::vector<int64_t> bag_indices(const Tensor& index, int64_t V, int64_t padding_idx, const char* op) {
  check<ShapeError>(index.dim() == 2, "{}: index must be (M, N), got {}", op, index.shape());
  check<IndexError>(padding_idx >= -1 && padding_idx < V, "{}: padding_idx {} is out of range for {} rows (-1 = none)",
                    op, padding_idx, V);
  return checked_indices(index, V, op);
}

}  // namespace

// A row added per (bag, entry) straight into the bag's output row: the (M, N, D) rows are never copied out,
// which for sub-word n-grams (N ~ 30) would be the largest activation of the model.
Tensor embedding_bag_sum(const Tensor& weight, const Tensor& index, int64_t padding_idx) {
  check<ShapeError>(weight.dim() == 2, "embedding_bag_sum: weight must be (V, D), got {}", weight.shape());
  const int64_t V = weight.size(0), D = weight.size(1);
  const std::vector<int64_t> idx = bag_indices(index, V, padding_idx, "embedding_bag_sum");
  const int64_t M = index.size(0), N = index.size(1);
  Tensor w = weight.contiguous(), out = zeros({M, D}, weight.dtype());
  detail::dispatch_arith(weight.dtype(), "embedding_bag_sum", [&](auto z) {
    using T = decltype(z);
    cpu::bag_sum(w.data<T>(), idx.data(), M, N, D, padding_idx, false, out.data<T>());
  });
  return out;
}

Tensor embedding_bag_sum_backward(const Tensor& dy, const Tensor& index, int64_t num_embeddings, int64_t padding_idx) {
  check<ShapeError>(dy.dim() == 2 && index.dim() == 2 && dy.size(0) == index.size(0),
                    "embedding_bag_sum_backward: dy must be (M, D) for index (M, N): {} vs {}", dy.shape(), index.shape());
  check<ValueError>(num_embeddings >= 1, "embedding_bag_sum_backward: num_embeddings must be >= 1, got {}",
                    num_embeddings);
  const std::vector<int64_t> idx = bag_indices(index, num_embeddings, padding_idx, "embedding_bag_sum_backward");
  const int64_t M = index.size(0), N = index.size(1), D = dy.size(1);
  Tensor g = dy.contiguous(), out = zeros({num_embeddings, D}, dy.dtype());
  detail::dispatch_arith(dy.dtype(), "embedding_bag_sum_backward", [&](auto z) {
    using T = decltype(z);
    cpu::bag_sum(g.data<T>(), idx.data(), M, N, D, padding_idx, true, out.data<T>());
  });
  return out;
}

Tensor gather(const Tensor& x, int64_t dim, const Tensor& index) {
  detail::check_defined(x, "gather");
  dim = normalize_dim(dim, x.dim(), "gather");
  Tensor c = x.contiguous(), out = empty(index.shape(), x.dtype());
  const Tensor ic = gather_index(x, dim, index, "gather");
  detail::dispatch(x.dtype(), [&](auto z) {
    using T = decltype(z);
    cpu::gather_along(c.data<T>(), c.shape(), ic.data<int64_t>(), ic.shape(), dim, out.data<T>());
  });
  return out;
}

namespace {

// The part of source that index addresses: its leading corner of index's shape (PyTorch lets source be larger).
Tensor source_corner(const Tensor& source, const Tensor& index, const char* op) {
  detail::check_defined(source, op, "the source");
  detail::check_defined(index, op, "the index");
  bool fits = source.dim() == index.dim();
  for (int64_t d = 0; fits && d < index.dim(); ++d) fits = index.size(d) <= source.size(d);
  check<ShapeError>(fits, "{}: index shape {} exceeds source shape {}", op, index.shape(), source.shape());
  Tensor s = source;
  for (int64_t d = 0; d < index.dim(); ++d) s = s.narrow(d, 0, index.size(d));
  return s.contiguous();
}

// A copy of x with the source's entries written (or with `add` added) where index points, in index's row-major
// order, so that among repeated positions the last write wins.
Tensor scattered(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& source, bool add, const char* op) {
  detail::check_defined(x, op);
  dim = normalize_dim(dim, x.dim(), op);
  Tensor s = source_corner(source, index, op);
  check<DTypeError>(x.dtype() == s.dtype(), "{}: dtypes differ: {} vs {}", op, x.dtype(), s.dtype());
  Tensor out = x.clone();
  const Tensor ic = gather_index(x, dim, index, op);
  detail::dispatch(x.dtype(), [&](auto z) {
    using T = decltype(z);
    cpu::scatter_along(s.data<T>(), ic.data<int64_t>(), ic.shape(), dim, out.shape(), add, out.data<T>());
  });
  return out;
}

}  // namespace

Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& source) {
  return scattered(x, dim, index, source, false, "scatter");
}

Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, double value) {
  detail::check_defined(x, "scatter");
  detail::check_defined(index, "scatter", "the index");
  return scattered(x, dim, index, full(index.shape(), value, x.dtype()), false, "scatter");
}

Tensor scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& source) {
  check<DTypeError>(x.dtype() != boolean, "scatter_add: not defined for bool tensors (convert with to())");
  return scattered(x, dim, index, source, true, "scatter_add");
}

Tensor cat(const std::vector<Tensor>& ts, int64_t dim) {
  check<ValueError>(!ts.empty(), "cat: expected at least one tensor");
  for (const Tensor& t : ts) detail::check_defined(t, "cat", "a tensor");
  const Tensor& t0 = ts[0];
  check<ShapeError>(t0.dim() > 0, "cat: zero-dimensional tensors cannot be concatenated");
  dim = normalize_dim(dim, t0.dim(), "cat");
  Shape shape = t0.shape();
  shape[dim] = 0;
  DType dtype = t0.dtype();  // promote_types of all (none is 0-dim), as PyTorch
  for (const Tensor& t : ts) {
    dtype = promote_types(dtype, t.dtype());
    bool same = t.dim() == t0.dim();
    for (int64_t d = 0; same && d < t.dim(); ++d) same = d == dim || t.shape()[d] == t0.shape()[d];
    check<ShapeError>(same, "cat: shapes {} and {} differ outside dim {}", t0.shape(), t.shape(), dim);
    shape[dim] += t.shape()[dim];
  }
  Tensor out = empty(shape, dtype);
  int64_t at = 0;
  for (const Tensor& t : ts) {
    out.narrow(dim, at, t.shape()[dim]).copy_(t);  // converting to dtype
    at += t.shape()[dim];
  }
  out.storage()->version = 0;
  return out;
}

Tensor stack(const std::vector<Tensor>& ts, int64_t dim) {
  check<ValueError>(!ts.empty(), "stack: expected at least one tensor");
  for (const Tensor& t : ts) detail::check_defined(t, "stack", "a tensor");
  dim = normalize_dim(dim, ts[0].dim() + 1, "stack");
  std::vector<Tensor> us;
  for (const Tensor& t : ts) {
    check<ShapeError>(t.shape() == ts[0].shape(), "stack: shapes differ: {} vs {}", ts[0].shape(), t.shape());
    us.push_back(t.unsqueeze(dim));
  }
  return cat(us, dim);
}

}  // namespace tg
