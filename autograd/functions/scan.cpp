// Differentiable running sums and products. Their backwards are written with cumsum, flip and where, so that
// create_graph can differentiate them again.
#include "autograd/functions.h"

namespace tg {
namespace {

// Σ_{i≥k} v_i along dim: the running sum from the end.
Variable reverse_cumsum(const Variable& v, int64_t dim) { return flip(cumsum(flip(v, {dim}), dim), {dim}); }

// dx_k = Σ_{i≥k} dy_i·Π_{j≤i, j≠k} x_j as products: for every k at once, x with x_k read as 1, its running
// product, masked to i ≥ k. Lines of n (dim moved last) become (n, n) blocks: O(n²) memory, as PyTorch's form.
Variable cumprod_with_ones(const Variable& x, const Variable& dy, int64_t dim) {
  const Variable xt = transpose(x, dim, -1), dyt = transpose(dy, dim, -1);  // (..., n)
  const int64_t n = xt.shape().back();
  const Tensor diagonal = eye(n, boolean), later = triu(ones({n, n}, boolean));  // (k, i): i == k, i >= k
  const Variable one(scalar_tensor(1, x.dtype())), nothing(scalar_tensor(0, x.dtype()));
  const Variable products = cumprod(where(diagonal, one, unsqueeze(xt, -2)), -1);  // (..., k, i)
  return transpose(sum(where(later, products * unsqueeze(dyt, -2), nothing), {-1}), dim, -1);
}

}  // namespace

// y_i = Σ_{j≤i} x_j.  dx_j = Σ_{i≥j} dy_i.
Variable cumsum(const Variable& x, int64_t dim) {
  return record("cumsum", tg::cumsum(x.value(), dim), {x},
                [dim](const Variable& dy, const Variable&) -> Grads { return {reverse_cumsum(dy, dim)}; });
}

// y_i = Π_{j≤i} x_j.  dx_k = Σ_{i≥k} dy_i·Π_{j≤i, j≠k} x_j (PyTorch's cumprod_backward, FunctionsManual.cpp).
// Before the first zero z of a line that is Σ_{i≥k} dy_i·y_i / x_k (y_i = 0 from z on); at z it is
// Σ_{i≥z} dy_i·y'_i with y' the running product of x with x_z read as 1; after z every product holds x_z = 0.
// Under create_graph a line with zeros takes the O(n²) form (cumprod_with_ones), whose derivatives are exact:
// the masked form's 0 after the first zero is a constant, though the products there do depend on x. So does an
// x holding ±inf (or NaN), where Σ dy_i·y_i / x_k would be inf/inf: the products leave x_k out instead.
Variable cumprod(const Variable& x, int64_t dim) {
  return record("cumprod", tg::cumprod(x.value(), dim), {x}, [x, dim](const Variable& dy, const Variable& y) -> Grads {
    if (x.dim() && !all_finite(x.value())) return {cumprod_with_ones(x, dy, dim)};
    const Tensor zero = eq(x.value(), 0.0);
    if (tg::sum(zero).item() == 0) return {reverse_cumsum(dy * y, dim) / x};
    if (x.dim() && is_recorded({dy, x})) return {cumprod_with_ones(x, dy, dim)};
    const Tensor seen = tg::cumsum(zero, dim);  // zeros up to and including each place
    const Tensor before = eq(seen, 0.0), first = logical_and(zero, eq(seen, 1.0));
    const Variable one(scalar_tensor(1, x.dtype())), nothing(scalar_tensor(0, x.dtype()));
    const Variable at_first = reverse_cumsum(dy * cumprod(where(first, one, x), dim), dim);
    return {where(before, reverse_cumsum(dy * y, dim) / where(before, x, one), where(first, at_first, nothing))};
  }, true);
}

}  // namespace tg
