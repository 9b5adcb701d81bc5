// The losses that are not fused ops: each is a few differentiable functions, so gradients (and second
// derivatives) come from the autograd functions they are made of.
#include "nn/loss.h"

namespace tg::nn {
namespace {

Variable reduce(const Variable& per_element, Reduction r) {
  if (r == Reduction::none) return per_element;
  return r == Reduction::sum ? sum(per_element) : mean(per_element);
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
  Variable per = -picked * Variable(wt);  // (N)
  if (o.reduction == Reduction::none) return per.reshape(target.shape());
  Variable total = sum(per);
  return o.reduction == Reduction::sum ? total : total / tg::sum(wt).item();
}

Variable mse_loss(const Variable& input, const Variable& target, const MSELossOptions& o) {
  check<ShapeError>(input.shape() == target.shape(), "mse_loss: input and target shapes differ: {} vs {}",
                    input.shape(), target.shape());
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

}  // namespace tg::nn
