// SGD with momentum, dampening, Nesterov and L2 weight decay, in torch 1.13's _single_tensor_sgd order.
#include "optim/sgd.h"

#include "core/error.h"

namespace tg::optim {

SGD::SGD(std::vector<Variable> params, const SGDOptions& options)
    : SGD(std::vector<ParamGroup>{ParamGroup{.params = std::move(params)}}, options) {}

SGD::SGD(std::vector<ParamGroup> groups, const SGDOptions& options)
    : Optimizer("SGD", std::move(groups), options.lr, options.weight_decay), options_(options) {
  check_option("momentum", options_.momentum);
  check_option("dampening", options_.dampening);
  check<ValueError>(!options_.nesterov || (options_.momentum > 0 && options_.dampening == 0),
                    "SGD: nesterov needs momentum > 0 and dampening 0, got momentum {} and dampening {}",
                    options_.momentum, options_.dampening);
  register_state("momentum_buffer", momentum_buffer_);
  register_option("momentum", options_.momentum);
  register_option("dampening", options_.dampening);
  register_flag("nesterov", options_.nesterov);
}

void SGD::step() {
  NoGradGuard no_grad;
  const double mu = options_.momentum, dampening = options_.dampening;
  for (size_t i = 0; i < params_.size(); ++i) {
    Tensor g = params_[i].grad(), p = params_[i].value();
    if (!g.defined()) continue;  // not reached by this backward: no update
    const double lr = *groups_[group_of_[i]].lr, wd = *groups_[group_of_[i]].weight_decay;

    if (wd != 0) g = g.clone().add_(p, wd);                // g ← g + λ·p
    if (mu != 0) {
      Tensor& b = momentum_buffer_[i];
      if (!b.defined()) b = g.clone();                     // first step: b ← g, no dampening
      else b.mul_(mu).add_(g, 1 - dampening);              // b ← μ·b + (1 − τ)·g
      g = options_.nesterov ? g.clone().add_(b, mu) : b;   // Nesterov: g + μ·b
    }
    p.add_(g, -lr);                                        // p ← p − lr·g
  }
}

}  // namespace tg::optim
