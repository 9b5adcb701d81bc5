// Fused cross-entropy: log_softmax and the negative log-likelihood in one op, so that no probability is
// ever formed in the forward (stable for logits of any size), with ignore_index, label smoothing and
// class weights (as torch.nn.functional.cross_entropy).
#include "autograd/functions.h"

namespace tg {
namespace {

// Logits (C), (B, C) or (B, C, d...) as rows (N, C) with the class dim last, after checking target's shape.
Variable logits_as_rows(const Variable& logits, const Tensor& target) {
  Variable z = logits.dim() == 1 ? logits.unsqueeze(0) : logits;
  check<ShapeError>(z.dim() >= 2, "cross_entropy: logits must be (C), (B, C) or (B, C, d...), got {}", logits.shape());
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
  return z.reshape({-1, z.size(-1)});
}

// The class weights (C), all ones when none are given.
Tensor class_weights(const CrossEntropyOptions& o, int64_t C, DType dtype) {
  if (!o.weight.defined()) return ones({C}, dtype);
  check<ShapeError>(o.weight.shape() == Shape{C}, "cross_entropy: weight must be ({},) for {} classes, got {}", C, C,
                    o.weight.shape());
  check<DTypeError>(o.weight.dtype() == dtype, "cross_entropy: weight dtype {} vs logits {}", o.weight.dtype(), dtype);
  return o.weight.contiguous();
}

}  // namespace

// With weights w, smoothing ε and valid_i = [t_i != ignore_index], each row's target distribution is
//   a_ic = valid_i·((1-ε)·w[t_i]·onehot(t_i)_c + (ε/C)·w[c]) / D,   loss_i = -Σ_c a_ic·log p_ic,
// D = Σ_i valid_i·w[t_i] under mean (the non-ignored count without weights), else 1; p = softmax(z_i).
// dz_i = (p_i·Σ_c a_ic - a_i)·dy (which is p_i - a_i when the row of a sums to 1).
Variable cross_entropy(const Variable& logits, const Tensor& target, const CrossEntropyOptions& o) {
  using Reduction = CrossEntropyOptions::Reduction;
  check<DTypeError>(target.dtype() == i64, "cross_entropy: target must hold i64 class indices, got {}", target.dtype());
  check<ValueError>(o.label_smoothing >= 0 && o.label_smoothing <= 1,
                    "cross_entropy: label_smoothing must be in [0, 1], got {}", o.label_smoothing);
  const Variable z = logits_as_rows(logits, target);
  const int64_t N = z.size(0), C = z.size(1);
  const Tensor t = target.reshape({-1});
  for (int64_t v : t.to_vector<int64_t>())
    check<IndexError>(v == o.ignore_index || (v >= 0 && v < C),
                      "cross_entropy: target {} is out of range for {} classes", v, C);
  const Tensor w = class_weights(o, C, z.dtype());
  const Tensor valid = ne(t, scalar_tensor(double(o.ignore_index), i64)).to(z.dtype());  // (N)
  const Tensor safe = tg::where(gt(valid, 0.0), t, scalar_tensor(0, i64)).unsqueeze(1);  // (N, 1)
  const Tensor wt = tg::index_select(w, 0, safe.squeeze(1)) * valid;                     // (N) w[t_i]
  const double eps = o.label_smoothing, D = o.reduction == Reduction::mean ? tg::sum(wt).item() : 1.0;
  Tensor logp = tg::log_softmax(z.value(), 1);                          // (N, C)
  Tensor per = tg::gather(logp, 1, safe).squeeze(1) * wt * -(1 - eps);  // gathered: a -inf logit elsewhere stays out
  if (eps > 0) per = per - tg::sum(logp * w, {1}) * valid * (eps / double(C));
  per = per / D;
  Tensor loss = o.reduction == Reduction::none ? per.reshape(target.shape()) : tg::sum(per);
  // The mean over no rows is 0/0, NaN, as PyTorch's and nll_loss's are; the sum of no terms above was 0.
  if (N == 0 && o.reduction == Reduction::mean) loss = full({}, NAN, z.dtype());
  // Σ_c a_ic, without forming a: valid_i·(ε/C)·Σ w / D + (1-ε)·w[t_i] / D.
  const Tensor a_sum = (valid * (eps / double(C) / D * tg::sum(w).item()) + wt * ((1 - eps) / D)).unsqueeze(1);
  const bool none = o.reduction == Reduction::none;
  return record("cross_entropy", loss, {z}, [z, w, valid, safe, wt, a_sum, eps, C, D, none, N](const Variable& dy,
                                                                                             const Variable&) -> Grads {
    const Variable g = none ? dy.reshape({N, 1}) : dy;  // (N, 1) or a scalar
    const double uniform = eps / double(C) / D, onehot = (1 - eps) / D;
    if (grad_mode_enabled()) {  // recorded (create_graph): the composition, with a formed densely
      const Tensor a = scatter_add(w.unsqueeze(0) * valid.unsqueeze(1) * uniform, 1, safe, (wt * onehot).unsqueeze(1));
      return {(softmax(z, 1) * Variable(a_sum) - Variable(a)) * g};
    }
    // dz = p·(a_sum·g) - g·valid·(ε/C/D)·w - g·(1-ε)/D·w[t]·onehot(t): one softmax, in-place updates and a
    // scatter of one value per row, instead of an (N, C) target matrix and four passes over it.
    Tensor dz = tg::softmax(z.value(), 1);
    dz.mul_(a_sum * g.value());
    if (eps > 0) dz.addcmul_(w.unsqueeze(0), valid.unsqueeze(1) * g.value(), -uniform);
    return {Variable(scatter_add(dz, 1, safe, wt.unsqueeze(1) * g.value() * -onehot))};
  });
}

}  // namespace tg
