// Adam and AdamW. step() follows torch 1.13's _single_tensor_adam/_single_tensor_adamw operation by
// operation (bias corrections as scalars, eps added after dividing √v by √(1 − β2ᵗ)), so that float64
// trajectories agree with PyTorch to rounding.
#include "optim/adam.h"

#include <cmath>

#include "core/ops.h"

namespace tg::optim {

Adam::Adam(std::vector<Variable> params, const AdamOptions& options)
    : Adam("Adam", {ParamGroup{.params = std::move(params)}}, options, false) {}
Adam::Adam(std::vector<ParamGroup> groups, const AdamOptions& options)
    : Adam("Adam", std::move(groups), options, false) {}

Adam::Adam(std::string name, std::vector<ParamGroup> groups, const AdamOptions& options, bool decoupled)
    : Optimizer(std::move(name), std::move(groups), options.lr, options.weight_decay),
      options_(options),
      decoupled_(decoupled) {
  check_option("betas[0]", options_.betas.first, /*below_one=*/true);
  check_option("betas[1]", options_.betas.second, /*below_one=*/true);
  check_option("eps", options_.eps);
  register_state("step", steps_);
  register_state("exp_avg", exp_avg_);
  register_state("exp_avg_sq", exp_avg_sq_);
  register_state("max_exp_avg_sq", max_exp_avg_sq_);
  register_option("betas.0", options_.betas.first, true);
  register_option("betas.1", options_.betas.second, true);
  register_option("eps", options_.eps);
  register_flag("amsgrad", options_.amsgrad);
}

void Adam::step() {
  NoGradGuard no_grad;
  const auto [beta1, beta2] = options_.betas;
  for (size_t i = 0; i < params_.size(); ++i) {
    Tensor g = params_[i].grad(), p = params_[i].value();
    if (!g.defined()) continue;  // not reached by this backward: no update, no step count
    const double lr = *groups_[group_of_[i]].lr, wd = *groups_[group_of_[i]].weight_decay;
    Tensor &m = exp_avg_[i], &v = exp_avg_sq_[i];
    if (!m.defined()) {
      m = zeros_like(p);
      v = zeros_like(p);
    }
    if (options_.amsgrad && !max_exp_avg_sq_[i].defined()) max_exp_avg_sq_[i] = zeros_like(p);
    const double t = double(++steps_[i]);

    if (decoupled_) p.mul_(1 - lr * wd);        // AdamW: p ← p·(1 − lr·λ)
    else if (wd != 0) g = g.clone().add_(p, wd);  // Adam: L2, g ← g + λ·p
    m.mul_(beta1).add_(g, 1 - beta1);           // m ← β1·m + (1 − β1)·g
    v.mul_(beta2).addcmul_(g, g, 1 - beta2);    // v ← β2·v + (1 − β2)·g²
    const double bias_correction1 = 1 - std::pow(beta1, t), bias_correction2 = 1 - std::pow(beta2, t);
    const double step_size = lr / bias_correction1;  // lr / (1 − β1ᵗ): m̂ = m / (1 − β1ᵗ) folded in
    if (options_.amsgrad) max_exp_avg_sq_[i].copy_(maximum(max_exp_avg_sq_[i], v));  // v_max ← max(v_max, v)
    const Tensor& v_used = options_.amsgrad ? max_exp_avg_sq_[i] : v;
    Tensor denom = sqrt(v_used) / std::sqrt(bias_correction2) + options_.eps;  // √v̂ + ε
    p.addcdiv_(m, denom, -step_size);                                          // p ← p − lr·m̂ / (√v̂ + ε)
  }
}

namespace {
AdamOptions as_adam(const AdamWOptions& o) {
  return {.lr = o.lr, .betas = o.betas, .eps = o.eps, .weight_decay = o.weight_decay, .amsgrad = o.amsgrad};
}
}  // namespace

AdamW::AdamW(std::vector<Variable> params, const AdamWOptions& options)
    : Adam("AdamW", {ParamGroup{.params = std::move(params)}}, as_adam(options), true) {}
AdamW::AdamW(std::vector<ParamGroup> groups, const AdamWOptions& options)
    : Adam("AdamW", std::move(groups), as_adam(options), true) {}

}  // namespace tg::optim
