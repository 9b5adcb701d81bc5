// Fused cross-entropy: log_softmax and the negative log-likelihood in one op, so that no probability is
// ever formed in the forward (stable for logits of any size), with ignore_index, label smoothing and
// class weights (as torch.nn.functional.cross_entropy); and binary cross-entropy on probabilities, elementwise.
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
  const std::vector<double> w = o.weight.to_vector<double>();
  for (size_t c = 0; c < w.size(); ++c)
    check<ValueError>(w[c] >= 0, "cross_entropy: weight must be >= 0, got {} for class {}", w[c], c);
  return o.weight.contiguous();
}

// The rows' target distributions a (see cross_entropy) without forming them:
// a_ic = valid_i·uniform·w[c] + onehot·w[t_i]·[c = t_i], with uniform = ε/C/D and onehot = (1-ε)/D.
struct Targets {
  Tensor w, valid, safe, wt, a_sum;  // (C), (N), (N, 1) t_i or 0 where ignored, (N) valid_i·w[t_i], (N, 1) Σ_c a_ic
  double eps, uniform, onehot;

  Tensor dense() const {  // (N, C)
    return scatter_add(w.unsqueeze(0) * valid.unsqueeze(1) * uniform, 1, safe, (wt * onehot).unsqueeze(1));
  }
};

// dz = (p·Σ_c a - a)·g with p = softmax(z), g (N, 1) or a scalar, as one op: one softmax, in-place updates and
// a scatter of one value per row, instead of an (N, C) target matrix and four passes over it. Its own
// derivative, with s = ddz·g·Σ_c a: d(g) = (p·Σ_c a - a)·ddz (summed to g's shape), d(z) = p·(s - Σ_c s·p).
Variable cross_entropy_backward(const Variable& g, const Variable& z, const Targets& a) {
  Tensor dz = tg::softmax(z.value(), 1);
  dz.mul_(a.a_sum * g.value());
  if (a.eps > 0) dz.addcmul_(a.w.unsqueeze(0), a.valid.unsqueeze(1) * g.value(), -a.uniform);
  dz = scatter_add(dz, 1, a.safe, a.wt.unsqueeze(1) * g.value() * -a.onehot);
  if (!is_recorded({g, z})) return record("cross_entropy_backward", std::move(dz), {g, z}, nullptr);  // as mul
  return record("cross_entropy_backward", dz, {g, z}, [g, z, a](const Variable& ddz, const Variable&) -> Grads {
    const Variable p = softmax(z, 1), a_sum(a.a_sum), s = ddz * g * a_sum;
    return {(p * a_sum - Variable(a.dense())) * ddz, p * (s - sum(s * p, {1}, true))};
  });
}

// logp·coef, with 0 wherever coef is 0: a term that does not count (an ignored row, a class of weight 0, the
// one-hot part under full smoothing) adds 0 even where log p is -inf, not 0·(-inf) = NaN.
Tensor times(const Tensor& logp, const Tensor& coef) {
  return tg::where(eq(coef, 0.0), zeros({}, logp.dtype()), logp * coef);
}

}  // namespace

// With weights w, smoothing ε and valid_i = [t_i != ignore_index], each row's target distribution is
//   a_ic = valid_i·((1-ε)·w[t_i]·onehot(t_i)_c + (ε/C)·w[c]) / D,   loss_i = -Σ_c a_ic·log p_ic,
// D = Σ_i valid_i·w[t_i] under mean (the non-ignored count without weights), else 1; p = softmax(z_i).
// dz_i = (p_i·Σ_c a_ic - a_i)·dy (which is p_i - a_i when the row of a sums to 1): cross_entropy_backward.
Variable cross_entropy(const Variable& logits, const Tensor& target, const CrossEntropyOptions& o) {
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
  const double eps = o.label_smoothing, total_weight = o.reduction == Reduction::mean ? tg::sum(wt).item() : 1.0;
  // The mean over no counted targets is 0/0: NaN as PyTorch's and nll_loss's, with gradient 0 (D = 1 below).
  const double D = total_weight > 0 ? total_weight : 1.0;
  Tensor logp = tg::log_softmax(z.value(), 1);                             // (N, C)
  Tensor per = times(tg::gather(logp, 1, safe).squeeze(1), wt * -(1 - eps));  // gathered: other -inf logits stay out
  if (eps > 0) per = per - times(tg::sum(times(logp, w), {1}), valid * (eps / double(C)));
  per = per / D;
  Tensor loss = o.reduction == Reduction::none ? per.reshape(target.shape()) : tg::sum(per);
  if (total_weight == 0 && o.reduction == Reduction::mean) loss = full({}, NAN, z.dtype());
  // A row whose logits are all -inf (fully masked) has loss +inf and, as softmax's masked lines, gradient 0:
  // it counts as ignored in the backward.
  const Tensor live = C > 0 ? valid * ne(tg::amax(z.value(), {1}), -INFINITY).to(z.dtype()) : valid;
  const double uniform = eps / double(C) / D, onehot = (1 - eps) / D;
  // Σ_c a_ic, without forming a: valid_i·(ε/C)·Σ w / D + (1-ε)·w[t_i] / D.
  const Tensor wt_live = wt * live, a_sum = (live * (uniform * tg::sum(w).item()) + wt_live * onehot).unsqueeze(1);
  const Targets a{w, live, safe, wt_live, a_sum, eps, uniform, onehot};
  const bool none = o.reduction == Reduction::none;
  return record("cross_entropy", loss, {z}, [z, a, none, N](const Variable& dy, const Variable&) -> Grads {
    return {cross_entropy_backward(none ? dy.reshape({N, 1}) : dy, z, a)};  // dy as (N, 1) or a scalar
  });
}

// PyTorch's kernel: (t - 1)·max(log1p(-x), -100) - t·max(log x, -100). The clamp makes a probability of exactly
// 0 or 1 cost 100, not inf, so one confident mistake does not make a batch's loss inf. The gradients are
// PyTorch's formulas, not those of the clamped logs: dx = dy·(x - t)/max(x(1-x), ε), with its ε = 1e-12 as a
// float (so an x of 0 or 1 gets a large finite gradient), and dt = dy·(log(1-x) - log x).
Variable binary_cross_entropy(const Variable& probs, const Variable& target) {
  check<ShapeError>(probs.shape() == target.shape(), "binary_cross_entropy: input and target shapes differ: {} vs {}",
                    probs.shape(), target.shape());
  const Tensor& x = probs.value();
  for (double v : x.to_vector<double>())
    check<ValueError>(v >= 0 && v <= 1, "binary_cross_entropy: input probabilities must be in [0, 1], got {}", v);
  const Tensor& t = target.value();
  const Tensor loss = (t - 1.0) * tg::clamp(tg::log1p(-x), -100.0, std::nullopt) -
                      t * tg::clamp(tg::log(x), -100.0, std::nullopt);
  return record("binary_cross_entropy", loss, {probs, target}, [probs, target](const Variable& dy,
                                                                               const Variable&) -> Grads {
    const double eps = double(1e-12f);
    Variable dx = dy * (probs - target) / clamp(probs * (1.0 - probs), eps, std::nullopt);
    return {dx, target.requires_grad() ? dy * (log(1.0 - probs) - log(probs)) : Variable()};
  });
}

}  // namespace tg
