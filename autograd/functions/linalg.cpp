// Differentiable matrix product.
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

}  // namespace tg
