// Differentiable matrix products: matmul, and linear (a Dense layer's x·Wᵀ + b) as one op.
#include "autograd/functions.h"

namespace tg {

// C = A @ B, A: (..., M, K), B: (..., K, N).  dA = dC @ Bᵀ, dB = Aᵀ @ dC.  1-D operands are promoted to
// matrices for the backward and the added dim removed again; broadcast batch dims are summed back by the
// engine. A 2-D weight under a batched input gets its gradient from one GEMM over all rows.
Variable matmul(const Variable& a, const Variable& b) {
  return record("matmul", tg::matmul(a.value(), b.value()), {a, b}, [a, b](const Variable& dy, const Variable&) -> Grads {
    Variable A = a.dim() == 1 ? a.unsqueeze(0) : a, B = b.dim() == 1 ? b.unsqueeze(1) : b, G = dy;
    if (a.dim() == 1 && b.dim() == 1) G = dy.reshape({1, 1});
    else if (a.dim() == 1) G = dy.unsqueeze(-2);
    else if (b.dim() == 1) G = dy.unsqueeze(-1);
    Variable da, db;
    if (a.requires_grad()) da = matmul(G, B.mT());
    if (b.requires_grad() && B.dim() == 2 && A.dim() > 2)
      db = matmul(A.reshape({-1, A.size(-1)}).mT(), G.reshape({-1, G.size(-1)}));
    else if (b.requires_grad())
      db = matmul(A.mT(), G);
    if (da && a.dim() == 1) da = da.squeeze(-2);
    if (db && b.dim() == 1) db = db.squeeze(-1);
    return {da, db};
  });
}

// y = x·Wᵀ + b, x: (..., in), W: (out, in), b: (out).  dx = dy·W, dW = dyᵀ·x over all rows as one GEMM
// (contiguous, where matmul's gradient of the view Wᵀ was a transposed view that the leaf copied), and
// db = dy, which the engine sums over the rows as it did for add's broadcast bias.
Variable linear(const Variable& x, const Variable& weight, const Variable& bias) {
  Tensor y = tg::linear(x.value(), weight.value(), bias ? bias.value() : Tensor());
  return record("linear", y, {x, weight, bias}, [x, weight](const Variable& dy, const Variable&) -> Grads {
    Variable dx, dw;
    if (x.requires_grad()) dx = matmul(dy, weight);
    if (weight.requires_grad()) {  // rows spelled out: a -1 cannot be inferred when in or out is 0
      const int64_t rows = Shape(x.shape().begin(), x.shape().end() - 1).numel();
      dw = matmul(dy.reshape({rows, dy.size(-1)}).mT(), x.reshape({rows, x.size(-1)}));
    }
    return {dx, dw, dy};
  });
}

}  // namespace tg
