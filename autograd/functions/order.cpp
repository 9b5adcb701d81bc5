// Ordering along one dim with gradients for the values: sort and topk. Their values are x gathered at the
// indices core's sort chose, so the gradient goes back to the positions they came from (gather's backward,
// scatter_add into zeros: each position at most once). argsort, argmax and argmin are indices: no gradient.
#include "autograd/functions.h"

namespace tg {
namespace {

VariableIndices gathered(const Variable& x, int64_t dim, const Tensor& indices) {
  return {gather(x, dim, indices), indices};
}

}  // namespace

// y = x at the sorted indices i along dim.  dx[i] = dy.
VariableIndices sort(const Variable& x, int64_t dim, bool descending) {
  return gathered(x, dim, tg::sort(x.value(), dim, descending).indices);
}

// y = x at the first k sorted indices i along dim.  dx[i] = dy, 0 elsewhere.
VariableIndices topk(const Variable& x, int64_t k, int64_t dim, bool largest) {
  return gathered(x, dim, tg::topk(x.value(), k, dim, largest).indices);
}

Tensor argsort(const Variable& x, int64_t dim, bool descending) { return tg::argsort(x.value(), dim, descending); }
Tensor argmax(const Variable& x, int64_t dim, bool keepdim) { return tg::argmax(x.value(), dim, keepdim); }
Tensor argmin(const Variable& x, int64_t dim, bool keepdim) { return tg::argmin(x.value(), dim, keepdim); }

}  // namespace tg
