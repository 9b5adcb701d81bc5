// Differentiable views and joins. Views share storage with their input; their backward maps dy back to
// the input's layout (inverse permutation, scatter of a slice, sum over expanded dims by the engine).
#include <algorithm>

#include "autograd/functions.h"

namespace tg {
namespace {

// The adjoint of slice: zeros of `shape` with dy written at [start:end:step] along dim. Recorded itself,
// so that create_graph can differentiate a slice's backward (its own backward is the slice again).
Variable slice_backward(const Variable& dy, const Shape& shape, int64_t dim, int64_t start, int64_t end, int64_t step) {
  Tensor out = zeros(shape, dy.dtype());
  out.slice(dim, start, end, step).copy_(dy.value());
  return record("slice_backward", out, {dy}, [dim, start, end, step](const Variable& d, const Variable&) -> Grads {
    return {slice(d, dim, start, end, step)};
  });
}

}  // namespace

Variable reshape(const Variable& x, const Shape& shape) {
  Shape in = x.shape();
  return record("reshape", x.value().reshape(shape), {x},
                [in](const Variable& dy, const Variable&) -> Grads { return {dy.reshape(in)}; });
}
Variable flatten(const Variable& x, int64_t start, int64_t end) { return reshape(x, x.value().flatten(start, end).shape()); }

Variable transpose(const Variable& x, int64_t d0, int64_t d1) {
  return record("transpose", x.value().transpose(d0, d1), {x},
                [d0, d1](const Variable& dy, const Variable&) -> Grads { return {transpose(dy, d0, d1)}; });
}
// dx = dy permuted by the inverse permutation.
Variable permute(const Variable& x, const std::vector<int64_t>& dims) {
  Tensor y = x.value().permute(dims);
  std::vector<int64_t> inverse(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) inverse[normalize_dim(dims[i], x.dim(), "permute")] = int64_t(i);
  return record("permute", y, {x}, [inverse](const Variable& dy, const Variable&) -> Grads {
    return {permute(dy, inverse)};
  });
}
Variable slice(const Variable& x, int64_t dim, int64_t start, int64_t end, int64_t step) {
  Tensor y = x.value().slice(dim, start, end, step);
  // Store the resolved bounds, so the backward writes exactly where the forward read.
  int64_t d = normalize_dim(dim, x.dim(), "slice"), n = x.shape()[d];
  int64_t s = std::clamp<int64_t>(start < 0 ? start + n : start, 0, n);
  int64_t e = std::clamp<int64_t>(end < 0 ? end + n : end, s, n);
  Shape shape = x.shape();
  return record("slice", y, {x}, [shape, d, s, e, step](const Variable& dy, const Variable&) -> Grads {
    return {slice_backward(dy, shape, d, s, e, step)};
  });
}
Variable select(const Variable& x, int64_t dim, int64_t index) {
  x.value().select(dim, index);  // validates dim and index with select's own message
  int64_t d = normalize_dim(dim, x.dim(), "select"), i = index < 0 ? index + x.shape()[d] : index;
  return slice(x, d, i, i + 1).squeeze(d);
}
Variable unsqueeze(const Variable& x, int64_t dim) { return reshape(x, x.value().unsqueeze(dim).shape()); }
Variable squeeze(const Variable& x, int64_t dim) { return reshape(x, x.value().squeeze(dim).shape()); }
// A stride-0 view; the engine sums dy over the expanded dims back to x's shape.
Variable expand(const Variable& x, const Shape& shape) {
  return record("expand", x.value().expand(shape), {x}, [](const Variable& dy, const Variable&) -> Grads { return {dy}; });
}
// dx_i = the slice of dy that x_i filled.
Variable cat(const std::vector<Variable>& xs, int64_t dim) {
  std::vector<Tensor> values;
  for (const Variable& x : xs) values.push_back(x.value());
  Tensor y = tg::cat(values, dim);
  int64_t d = normalize_dim(dim, y.dim(), "cat");
  std::vector<int64_t> sizes;
  for (const Variable& x : xs) sizes.push_back(x.shape()[d]);
  return record("cat", y, xs, [d, sizes](const Variable& dy, const Variable&) -> Grads {
    Grads g;
    int64_t at = 0;
    for (int64_t n : sizes) g.push_back(slice(dy, d, at, at + n)), at += n;
    return g;
  });
}
// Pieces of x along dim as views. Their gradients are joined into x's by one cat, where a slice per piece
// would give each a zero tensor of x's shape to be summed. Each piece's backward leaves its dy in a slot the
// pieces share; the first of them also sends a stride-0 zero to the joint (x recorded once more, so that it
// runs after every piece), whose backward cats the slots (zeros where no gradient came) and empties them.
std::vector<Variable> split(const Variable& x, const std::vector<int64_t>& sizes, int64_t dim) {
  const int64_t d = normalize_dim(dim, x.dim(), "split");
  int64_t total = 0;
  for (int64_t n : sizes) {
    check<ShapeError>(n >= 0, "split: sizes must be >= 0, got {} for {}", n, x.shape());
    total += n;
  }
  check<ShapeError>(total == x.shape()[d], "split: sizes add up to {}, dim {} of {} has {}", total, d, x.shape(),
                    x.shape()[d]);
  auto slots = std::make_shared<std::vector<Variable>>(sizes.size());
  auto join = [slots, sizes, d](const Variable& wake, const Variable&) -> Grads {
    std::vector<Variable> dys(sizes.size());
    std::swap(dys, *slots);
    Shape shape = wake.shape();
    for (size_t i = 0; i < dys.size(); ++i)
      if (!dys[i]) shape[d] = sizes[i], dys[i] = Variable(zeros(shape, wake.dtype()));
    return {cat(dys, d)};
  };
  const Variable joint = record("split", x.value(), {x}, join);
  std::vector<Variable> pieces;
  int64_t at = 0;
  for (size_t i = 0; i < sizes.size(); at += sizes[i++]) {
    auto leave = [slots, i, shape = x.shape()](const Variable& dy, const Variable&) -> Grads {
      const bool first = std::none_of(slots->begin(), slots->end(), [](const Variable& s) { return s.defined(); });
      (*slots)[i] = dy;
      return {first ? Variable(scalar_tensor(0, dy.dtype()).expand(shape)) : Variable()};
    };
    pieces.push_back(record("split_piece", joint.value().slice(d, at, at + sizes[i]), {joint}, leave));
  }
  return pieces;
}
Variable stack(const std::vector<Variable>& xs, int64_t dim) {
  check<ValueError>(!xs.empty(), "stack: expected at least one tensor");
  int64_t d = normalize_dim(dim, xs[0].dim() + 1, "stack");
  std::vector<Variable> us;
  for (const Variable& x : xs) {
    check<ShapeError>(x.shape() == xs[0].shape(), "stack: shapes differ: {} vs {}", xs[0].shape(), x.shape());
    us.push_back(unsqueeze(x, d));
  }
  return cat(us, d);
}

}  // namespace tg
