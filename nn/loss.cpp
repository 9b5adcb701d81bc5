// The losses that are not fused ops: each is a few differentiable functions, so gradients (and second
// derivatives) come from the autograd functions they are made of.
#include "nn/loss.h"

#include <cmath>

namespace tg::nn {
namespace {

Variable reduce(const Variable& per_element, Reduction r) {
  if (r == Reduction::none) return per_element;
  return r == Reduction::sum ? sum(per_element) : mean(per_element);
}

void check_same_shape(const char* op, const Variable& input, const Variable& target) {
  check<ShapeError>(input.shape() == target.shape(), "{}: input and target shapes differ: {} vs {}", op,
                    input.shape(), target.shape());
}

// Weights scale losses; a negative one would reward a mistake. `what` names an entry: "class" or "element".
void check_nonnegative(const char* op, const Tensor& weight, const char* what) {
  const std::vector<double> w = weight.to_vector<double>();
  for (size_t i = 0; i < w.size(); ++i)
    check<ValueError>(w[i] >= 0, "{}: weight must be >= 0, got {} for {} {}", op, w[i], what, i);
}

// ½d² where |d| < δ, δ·(|d| - ½δ) elsewhere: PyTorch's huber_loss, whose gradient is ±δ at |d| = δ from both
// sides and 0 at d = 0. δ > 0.
Variable huber(const Variable& d, double delta) {
  const Variable a = abs(d);
  return where(lt(a.value(), delta), 0.5 * d * d, delta * (a - 0.5 * delta));
}

// log_probs (B, C, d...) -> (N, C) with the class dim last; (B, C) stays as it is.
Variable classes_last(const Variable& x) {
  if (x.dim() == 2) return x;
  std::vector<int64_t> perm{0};
  for (int64_t d = 2; d < x.dim(); ++d) perm.push_back(d);
  perm.push_back(1);
  return x.permute(perm).reshape({-1, x.size(1)});
}

}  // namespace

// loss_i = -w[t_i]·logp[i, t_i]: logp flattened to (N·C) and picked at i·C + t_i (ignored rows pick
// entry i·C and weigh 0), so no other entry, possibly -inf, is touched.
Variable nll_loss(const Variable& log_probs, const Tensor& target, const NLLLossOptions& o) {
  check<DTypeError>(target.dtype() == i64, "nll_loss: target must hold i64 class indices, got {}", target.dtype());
  check<ShapeError>(log_probs.dim() >= 2, "nll_loss: log_probs must be (B, C) or (B, C, d...), got {}",
                    log_probs.shape());
  Shape want = log_probs.shape();
  want.erase(want.begin() + 1);
  check<ShapeError>(target.shape() == want, "nll_loss: target shape {} does not match log_probs {}: expected {}",
                    target.shape(), log_probs.shape(), want);
  const int64_t C = log_probs.size(1);
  const Tensor w = o.weight.defined() ? o.weight : ones({C}, log_probs.dtype());
  check<ShapeError>(w.shape() == Shape{C}, "nll_loss: weight must be ({},) for {} classes, got {}", C, C, w.shape());
  check_nonnegative("nll_loss", w, "class");
  std::vector<int64_t> flat_index;
  std::vector<double> weights;
  const std::vector<double> wv = w.to_vector<double>();
  int64_t row = 0;
  for (int64_t t : target.reshape({-1}).to_vector<int64_t>()) {
    const bool ignored = t == o.ignore_index;
    check<IndexError>(ignored || (t >= 0 && t < C), "nll_loss: target {} is out of range for {} classes", t, C);
    flat_index.push_back(row++ * C + (ignored ? 0 : t));
    weights.push_back(ignored ? 0.0 : wv[size_t(t)]);
  }
  const int64_t N = row;
  Tensor wt = tensor(weights, {N}, log_probs.dtype());
  Variable picked = index_select(classes_last(log_probs).reshape({-1}), 0, index_tensor(flat_index, {N}));
  // A row of weight 0 (ignored) adds 0 even where it picks -inf, not 0·(-inf) = NaN.
  Variable per = where(eq(wt, 0.0), Variable(zeros({}, wt.dtype())), -picked * Variable(wt));  // (N)
  if (o.reduction == Reduction::none) return per.reshape(target.shape());
  Variable total = sum(per);
  // The mean over no counted targets is 0/0: NaN as PyTorch's, with gradient 0 (not dy/0·0).
  const double total_weight = tg::sum(wt).item();
  return o.reduction == Reduction::sum ? total : total_weight > 0 ? total / total_weight : total * 0.0 + NAN;
}

Variable mse_loss(const Variable& input, const Variable& target, const MSELossOptions& o) {
  check_same_shape("mse_loss", input, target);
  Variable d = input - target;
  return reduce(d * d, o.reduction);
}

// max(x, 0) + log(1 + e^{-|x|}) is softplus(x) = log(e^0 + e^x), computed as a logsumexp over the pair
// (0, x): the same max-shifted stable value, and a gradient σ(x) that is right at x = 0 too (a relu + abs
// composition would give 0 there instead of 1/2).
Variable binary_cross_entropy_with_logits(const Variable& logits, const Variable& target,
                                          const BCEWithLogitsOptions& o) {
  check<ShapeError>(logits.shape() == target.shape(),
                    "binary_cross_entropy_with_logits: logits and target shapes differ: {} vs {}", logits.shape(),
                    target.shape());
  Variable zero(zeros_like(logits.value()));
  Variable softplus = logsumexp(stack({zero, logits}, -1), {-1});
  return reduce(softplus - logits * target, o.reduction);
}

Variable l1_loss(const Variable& input, const Variable& target, const L1LossOptions& o) {
  check_same_shape("l1_loss", input, target);
  return reduce(abs(input - target), o.reduction);
}

// PyTorch's smooth_l1_loss is huber_loss / β, and l1_loss at β = 0 (where ½d²/β has no limit to take).
Variable smooth_l1_loss(const Variable& input, const Variable& target, const SmoothL1LossOptions& o) {
  check_same_shape("smooth_l1_loss", input, target);
  check<ValueError>(o.beta >= 0, "smooth_l1_loss: beta must be >= 0, got {}", o.beta);
  const Variable d = input - target;
  return reduce(o.beta == 0 ? abs(d) : huber(d, o.beta) / o.beta, o.reduction);
}

Variable huber_loss(const Variable& input, const Variable& target, const HuberLossOptions& o) {
  check_same_shape("huber_loss", input, target);
  check<ValueError>(o.delta > 0, "huber_loss: delta must be > 0, got {}", o.delta);
  return reduce(huber(input - target, o.delta), o.reduction);
}

// PyTorch's kl_div: xlogy(t, t) - t·input, or e^t·(t - input) for log targets. xlogy's log sees 1 where t = 0,
// so no log 0 = -inf meets a zero gradient (0·inf = NaN); a negative t still gives NaN, as in PyTorch.
Variable kl_div(const Variable& input, const Variable& target, const KLDivLossOptions& o) {
  using R = KLDivLossOptions::Reduction;
  check_same_shape("kl_div", input, target);
  Variable pointwise;
  if (o.log_target) {
    pointwise = exp(target) * (target - input);
  } else {
    const Variable one(scalar_tensor(1.0, target.dtype()));
    pointwise = target * (log(where(eq(target.value(), 0.0), one, target)) - input);
  }
  if (o.reduction == R::none) return pointwise;
  if (o.reduction == R::mean) return mean(pointwise);
  Variable total = sum(pointwise);
  return o.reduction == R::batchmean && input.dim() > 0 ? total / double(input.size(0)) : total;
}

Variable binary_cross_entropy(const Variable& input, const Variable& target, const BCELossOptions& o) {
  Variable loss = tg::binary_cross_entropy(input, target);  // checks the shapes and the probabilities
  if (o.weight.defined()) {
    check<ShapeError>(broadcast_shapes(o.weight.shape(), input.shape(), "binary_cross_entropy") == input.shape(),
                      "binary_cross_entropy: weight {} does not broadcast to input {}", o.weight.shape(),
                      input.shape());
    check<DTypeError>(o.weight.dtype() == input.dtype(), "binary_cross_entropy: weight dtype {} vs input {}",
                      o.weight.dtype(), input.dtype());
    check_nonnegative("binary_cross_entropy", o.weight, "element");
    loss = loss * Variable(o.weight);
  }
  return reduce(loss, o.reduction);
}

}  // namespace tg::nn
