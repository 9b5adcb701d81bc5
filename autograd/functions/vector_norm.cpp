// The differentiable vector norm: one recorded op for every ord, its value from tg::vector_norm (scaled, so no
// overflow), its gradient written with differentiable functions of x and the norm.
#include <cmath>

#include "autograd/functions.h"

namespace tg {
namespace {

// d‖x‖/dx for the norm n of each line of x (n kept in x's rank), as vector_norm's doc comment states it.
Variable norm_gradient(const Variable& x, const Variable& n, double ord, const std::vector<int64_t>& dims) {
  const Tensor sign = tg::sign(x.value());
  if (std::isinf(ord)) {  // sign(x) on the entries that reach the norm, shared among them
    const Tensor hit = eq(abs(x.value()), n.value()).to(x.dtype());
    return Variable(sign * hit / sum(hit, dims, true));
  }
  if (ord == 1) return Variable(sign);
  const Variable one(scalar_tensor(1, x.dtype()));
  const Tensor infinite = eq(n.value(), INFINITY);
  // a zero norm has x = 0 throughout: gradient 0; an infinite one is replaced below
  const Variable safe_n = where(logical_or(eq(n.value(), 0.0), infinite), one, n);
  Variable g;
  if (ord == 2) {
    g = x / safe_n;
  } else {  // sign(x)·(|x|/n)^(p-1), with |x| = 0 read as 1 inside the power (p < 1 would give 0·inf there)
    const Variable r = where(eq(x.value(), 0.0), one, abs(x) / safe_n);
    g = Variable(sign) * pow(r, ord - 1);
  }
  if (all_finite(n.value())) return g;
  // a line holding k entries of ±inf (and no NaN): the limit as they grow together, sign(x)·k^(1/p - 1) on
  // them and 0 on the finite entries (x/‖x‖ would be inf/inf = NaN there)
  const Tensor hit = eq(abs(x.value()), INFINITY).to(x.dtype());
  return where(infinite, Variable(sign * hit * pow(sum(hit, dims, true), 1 / ord - 1)), g);
}

}  // namespace

Variable vector_norm(const Variable& x, double ord, const std::vector<int64_t>& dims, bool keepdim) {
  const Variable n = record("vector_norm", tg::vector_norm(x.value(), ord, dims, true), {x},
                            [x, ord, dims](const Variable& dy, const Variable& y) -> Grads {
                              if (ord == 0) return {Variable()};
                              return {dy * norm_gradient(x, y, ord, dims)};
                            }, true);
  return keepdim ? n : sum(n, dims, false);  // drops the size-1 dims
}

}  // namespace tg
