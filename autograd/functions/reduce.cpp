// Differentiable reductions. Each backward first restores the reduced dims of dy (size 1) and lets
// broadcasting spread it back over the input.
#include "autograd/functions.h"

namespace tg {
namespace {

// x's shape with every reduced dim set to 1 (all dims when `dims` is empty).
Shape kept_shape(const Shape& shape, const std::vector<int64_t>& dims) {
  Shape k = shape;
  if (dims.empty()) std::fill(k.begin(), k.end(), 1);
  for (int64_t d : dims) k[normalize_dim(d, int64_t(shape.size()), "reduce")] = 1;
  return k;
}

// dy (reduced, with or without keepdim) reshaped so that it broadcasts against the input.
Variable restore(const Variable& dy, const Shape& kept) { return dy.shape() == kept ? dy : dy.reshape(kept); }

int64_t reduced_count(const Shape& shape, const Shape& kept) { return shape.numel() / std::max<int64_t>(kept.numel(), 1); }

// softmax of x over `dims` together (all when empty): the reduced dims moved last and flattened into one.
Variable softmax_over(const Variable& x, const std::vector<int64_t>& dims) {
  const int64_t nd = x.dim();
  std::vector<bool> reduced(size_t(nd), dims.empty());
  for (int64_t d : dims) reduced[size_t(normalize_dim(d, nd, "logsumexp"))] = true;
  std::vector<int64_t> perm, back(static_cast<size_t>(nd));
  Shape lines;
  int64_t len = 1;
  for (int64_t d = 0; d < nd; ++d)
    if (!reduced[size_t(d)]) perm.push_back(d), lines.push_back(x.shape()[d]);
  for (int64_t d = 0; d < nd; ++d)
    if (reduced[size_t(d)]) perm.push_back(d), len *= x.shape()[d];
  for (size_t i = 0; i < perm.size(); ++i) back[size_t(perm[i])] = int64_t(i);
  const Variable p = permute(x, perm);
  lines.push_back(len);
  return permute(reshape(softmax(reshape(p, lines), -1), p.shape()), back);
}

}  // namespace

// y = Σ x.  dx = dy broadcast.
Variable sum(const Variable& x, const std::vector<int64_t>& dims, bool keepdim) {
  Shape kept = kept_shape(x.shape(), dims), shape = x.shape();
  return record("sum", tg::sum(x.value(), dims, keepdim), {x}, [kept, shape](const Variable& dy, const Variable&) -> Grads {
    return {expand(restore(dy, kept), shape)};
  });
}
// y = Σ x / N.  dx = dy / N broadcast.
Variable mean(const Variable& x, const std::vector<int64_t>& dims, bool keepdim) {
  Shape kept = kept_shape(x.shape(), dims), shape = x.shape();
  double n = double(reduced_count(shape, kept));
  return record("mean", tg::mean(x.value(), dims, keepdim), {x}, [kept, shape, n](const Variable& dy,
                                                                                  const Variable&) -> Grads {
    return {expand(restore(dy, kept) / n, shape)};
  });
}
// y = Σ(x - x̄)² / (N - c).  dx = dy·2(x - x̄) / (N - c).
Variable var(const Variable& x, const std::vector<int64_t>& dims, int64_t correction, bool keepdim) {
  Shape kept = kept_shape(x.shape(), dims);
  double denom = double(std::max<int64_t>(reduced_count(x.shape(), kept) - correction, 0));
  return record("var", tg::var(x.value(), dims, correction, keepdim), {x},
                [x, dims, kept, denom](const Variable& dy, const Variable& y) -> Grads {
                  // A variance of +inf from a line holding ±inf has no finite gradient (x - mean would be
                  // inf - inf); one from finite values beyond the dtype's range (f32 |x| > 1.8e19) has.
                  check<ValueError>(all_finite(y.value()) || tg::sum(eq(y.value(), INFINITY)).item() == 0 ||
                                        tg::sum(eq(abs(x.value()), INFINITY)).item() == 0,
                                    "var: no gradient through a variance of +inf (a line of shape {} holds ±inf)",
                                    x.shape());
                  return {restore(dy, kept) * 2.0 * (x - mean(x, dims, true)) / denom};
                }, true);
}
// y = log Σ eˣ.  dx = dy·e^(x - y) = dy·softmax(x) over dims: softmax's limits, so an all -inf line gets 0
// (not e^(-inf + inf)) and k entries of +inf get 1/k each.
Variable logsumexp(const Variable& x, const std::vector<int64_t>& dims, bool keepdim) {
  Shape kept = kept_shape(x.shape(), dims);
  return record("logsumexp", tg::logsumexp(x.value(), dims, keepdim), {x},
                [x, dims, kept](const Variable& dy, const Variable&) -> Grads {
                  return {restore(dy, kept) * softmax_over(x, dims)};
                });
}

// y = max x (or min).  dx = dy / (number of ties) at every position equal to y.
static Variable extreme(const char* name, Tensor value, const Variable& x, const std::vector<int64_t>& dims) {
  Shape kept = kept_shape(x.shape(), dims);
  return record(name, std::move(value), {x}, [x, dims, kept](const Variable& dy, const Variable& y) -> Grads {
    Tensor hit = eq(x.value(), y.value().reshape(kept)).to(x.dtype());
    Tensor share = hit / tg::sum(hit, dims, true);
    return {restore(dy, kept) * Variable(share)};
  }, true);
}
Variable amax(const Variable& x, const std::vector<int64_t>& dims, bool keepdim) {
  return extreme("amax", tg::amax(x.value(), dims, keepdim), x, dims);
}
Variable amin(const Variable& x, const std::vector<int64_t>& dims, bool keepdim) {
  return extreme("amin", tg::amin(x.value(), dims, keepdim), x, dims);
}

// y = max (or min) along dim, i its first index (torch.max(x, dim)).  dx = dy at i, 0 elsewhere: one
// entry takes the whole gradient even among ties, as PyTorch does. Only the indices are kept.
static VariableIndices indexed_extreme(const char* name, ValuesIndices vi, const Variable& x, int64_t dim,
                                       bool keepdim) {
  const int64_t d = normalize_dim(dim, x.dim(), name);
  const Shape shape = x.shape();
  Tensor at = keepdim ? vi.indices : vi.indices.unsqueeze(d);  // x's shape with size 1 at d
  Variable values = record(name, vi.values, {x}, [shape, d, at, keepdim](const Variable& dy, const Variable&) -> Grads {
    Tensor onehot = scatter_add(zeros(shape, dy.dtype()), d, at, ones(at.shape(), dy.dtype()));
    return {(keepdim ? dy : dy.unsqueeze(d)) * Variable(onehot)};
  });
  return {values, vi.indices};
}
VariableIndices max(const Variable& x, int64_t dim, bool keepdim) {
  return indexed_extreme("max", tg::max(x.value(), dim, keepdim), x, dim, keepdim);
}
VariableIndices min(const Variable& x, int64_t dim, bool keepdim) {
  return indexed_extreme("min", tg::min(x.value(), dim, keepdim), x, dim, keepdim);
}

}  // namespace tg
