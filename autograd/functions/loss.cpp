// Fused cross-entropy: log_softmax and the negative log-likelihood in one op, so that no probability is
// ever formed in the forward (stable for logits of any size), with ignore_index and label smoothing.
#include "autograd/functions.h"

namespace tg {

// loss_i = -(1-ε)·log p_i[t_i] - (ε/C)·Σ_c log p_i[c], p = softmax(z_i).  dz_i = (p_i - q_i)·w_i·dy with
// q = (1-ε)·onehot(t_i) + ε/C and w_i = 0 for ignored targets, 1/(non-ignored count) under mean.
Variable cross_entropy(const Variable& logits, const Tensor& target, const CrossEntropyOptions& o) {
  using Reduction = CrossEntropyOptions::Reduction;
  check<DTypeError>(target.dtype() == i64, "cross_entropy: target must hold i64 class indices, got {}", target.dtype());
  check<ValueError>(o.label_smoothing >= 0 && o.label_smoothing <= 1,
                    "cross_entropy: label_smoothing must be in [0, 1], got {}", o.label_smoothing);
  Variable z = logits.dim() == 1 ? logits.unsqueeze(0) : logits;
  check<ShapeError>(z.dim() >= 2, "cross_entropy: logits must be (C), (B, C) or (B, C, d...), got {}", logits.shape());
  const int64_t C = z.size(1);
  Shape want = z.shape();
  want.erase(want.begin() + 1);
  if (logits.dim() == 1) want.clear();
  check<ShapeError>(target.shape() == want, "cross_entropy: target shape {} does not match logits {}: expected {}",
                    target.shape(), logits.shape(), want);
  if (z.dim() > 2) {
    std::vector<int64_t> perm{0};
    for (int64_t d = 2; d < z.dim(); ++d) perm.push_back(d);
    perm.push_back(1);
    z = z.permute(perm);
  }
  z = z.reshape({-1, C});
  Tensor t = target.reshape({-1});
  const int64_t N = t.numel();
  int64_t count = 0;
  for (int64_t v : t.to_vector<int64_t>()) {
    if (v == o.ignore_index) continue;
    check<IndexError>(v >= 0 && v < C, "cross_entropy: target {} is out of range for {} classes", v, C);
    ++count;
  }
  Tensor valid = ne(t, scalar_tensor(double(o.ignore_index), i64));
  Tensor safe = tg::where(valid, t, scalar_tensor(0, i64)).unsqueeze(1);  // (N, 1)
  Tensor logp = tg::log_softmax(z.value(), 1);                           // (N, C)
  const double eps = o.label_smoothing;
  Tensor per = tg::gather(logp, 1, safe).squeeze(1) * -(1 - eps) - tg::sum(logp, {1}) * (eps / double(C));
  Tensor w = valid.to(z.dtype());
  per = tg::mul(per, w);  // ignored targets add nothing
  Tensor loss = o.reduction == Reduction::none ? per.reshape(target.shape())
              : o.reduction == Reduction::sum  ? tg::sum(per)
                                               : tg::div(tg::sum(per), scalar_tensor(double(count), z.dtype()));
  if (o.reduction == Reduction::mean) w = w / double(count);
  Tensor q = scatter_add(full({N, C}, eps / double(C), z.dtype()), 1, safe, full({N, 1}, 1 - eps, z.dtype()));
  const bool none = o.reduction == Reduction::none;
  return record("cross_entropy", loss, {z}, [z, q, w, none, N](const Variable& dy, const Variable&) -> Grads {
    Variable scale = Variable(w.unsqueeze(1)) * (none ? dy.reshape({N, 1}) : dy);
    return {(softmax(z, 1) - Variable(q)) * scale};
  });
}

}  // namespace tg
