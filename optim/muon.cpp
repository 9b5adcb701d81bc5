// Muon: momentum, then the update orthogonalised by quintic Newton–Schulz steps, in torch.optim.Muon's
// (PyTorch 2.9) order of operations.
#include "optim/muon.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/ops.h"
#include "optim/adam.h"

namespace tg::optim {

Tensor zeropower_via_newton_schulz(const Tensor& x, const std::array<double, 3>& coefficients, int64_t ns_steps,
                                   double eps) {
  check<ShapeError>(x.dim() == 2, "zeropower_via_newton_schulz: expected a 2-D matrix, got shape {}", x.shape());
  const auto [a, b, c] = coefficients;
  const bool tall = x.size(0) > x.size(1);
  Tensor X = tall ? x.mT().contiguous() : x.contiguous();
  X = X / std::max(std::sqrt(sum(X * X).item()), eps);  // ‖X‖_F ≥ its spectral norm: singular values ≤ 1
  for (int64_t k = 0; k < ns_steps; ++k) {
    const Tensor A = matmul(X, X.mT());
    const Tensor B = A * b + matmul(A, A) * c;
    X = X * a + matmul(B, X);
  }
  return tall ? X.mT().contiguous() : X;
}

Muon::Muon(std::vector<Variable> params, const MuonOptions& options)
    : Muon(std::vector<ParamGroup>{ParamGroup{.params = std::move(params)}}, options) {}

Muon::Muon(std::vector<ParamGroup> groups, const MuonOptions& options)
    : Optimizer("Muon", std::move(groups), options.lr, options.weight_decay), options_(options) {
  check_option("momentum", options_.momentum, /*below_one=*/true);
  check_option("eps", options_.eps);
  check<ValueError>(options_.eps > 0, "Muon: invalid eps: 0 (expected > 0: a zero update would be divided by 0)");
  check<ValueError>(options_.ns_steps >= 1 && options_.ns_steps <= 99, "Muon: invalid ns_steps: {} (expected 1 to 99)",
                    options_.ns_steps);
  for (double v : options_.ns_coefficients)
    check<ValueError>(std::isfinite(v), "Muon: invalid ns_coefficients: ({}, {}, {}) (expected finite values)",
                      options_.ns_coefficients[0], options_.ns_coefficients[1], options_.ns_coefficients[2]);
  for (size_t i = 0; i < params_.size(); ++i)
    check<ShapeError>(params_[i].dim() == 2,
                      "Muon: parameter {} has shape {}; Muon takes 2-D weights only (give biases, norms and "
                      "embeddings to AdamW)", i, params_[i].shape());
  register_state("momentum_buffer", momentum_buffer_);
  register_option("momentum", options_.momentum, true);
  register_option("eps", options_.eps);
  register_flag("nesterov", options_.nesterov);
}

void muon_update(Tensor p, const Tensor& g, Tensor& buf, double lr, double wd, const MuonOptions& o) {
  const double mu = o.momentum;
  if (!buf.defined()) buf = zeros_like(p);
  buf.mul_(mu).add_(g, 1 - mu);                                    // b ← μ·b + (1 − μ)·g
  const Tensor u = o.nesterov ? (g * (1 - mu)).add_(buf, mu) : buf;
  const Tensor O = zeropower_via_newton_schulz(u, o.ns_coefficients, o.ns_steps, o.eps);
  const double A = double(p.size(0)), B = double(p.size(1));
  const double adjusted = o.adjust_lr == MuonLrAdjust::original ? lr * std::sqrt(std::max(1.0, A / B))
                                                                : lr * 0.2 * std::sqrt(std::max(A, B));
  p.mul_(1 - lr * wd);                                             // decoupled weight decay
  p.add_(O, -adjusted);
}

void Muon::step() {
  NoGradGuard no_grad;
  for (size_t i = 0; i < params_.size(); ++i) {
    const Tensor g = params_[i].grad();
    if (!g.defined()) continue;  // not reached by this backward: no update
    muon_update(params_[i].value(), g, momentum_buffer_[i], *groups_[group_of_[i]].lr,
                *groups_[group_of_[i]].weight_decay, options_);
  }
}

namespace {

// The groups of both optimizers, each group's unset lr and weight decay taken from its own optimizer's options.
std::vector<ParamGroup> both(std::vector<ParamGroup> muon_groups, const MuonOptions& muon,
                             const std::vector<ParamGroup>& adamw_groups, const AdamWOptions& adamw) {
  for (ParamGroup& g : muon_groups) g.lr = g.lr.value_or(muon.lr), g.weight_decay = g.weight_decay.value_or(muon.weight_decay);
  for (ParamGroup g : adamw_groups) {
    g.lr = g.lr.value_or(adamw.lr), g.weight_decay = g.weight_decay.value_or(adamw.weight_decay);
    muon_groups.push_back(std::move(g));
  }
  return muon_groups;
}

size_t count_params(const std::vector<ParamGroup>& groups) {
  size_t n = 0;
  for (const ParamGroup& g : groups) n += g.params.size();
  return n;
}

}  // namespace

MuonWithAdamW::MuonWithAdamW(std::vector<ParamGroup> muon_groups, const MuonOptions& muon,
                             std::vector<ParamGroup> adamw_groups, const AdamWOptions& adamw)
    : Optimizer("MuonWithAdamW", both(muon_groups, muon, adamw_groups, adamw), muon.lr, muon.weight_decay),
      muon_(muon),
      adamw_{.lr = adamw.lr, .betas = adamw.betas, .eps = adamw.eps, .weight_decay = adamw.weight_decay,
             .amsgrad = adamw.amsgrad},
      muon_count_(count_params(muon_groups)) {
  // Each part checks its own options and parameters, with its own name in the message.
  if (muon_count_ > 0) Muon(std::move(muon_groups), muon);
  if (muon_count_ < params_.size()) AdamW(std::move(adamw_groups), adamw);
  register_state("momentum_buffer", momentum_buffer_);
  register_state("step", steps_);
  register_state("exp_avg", exp_avg_);
  register_state("exp_avg_sq", exp_avg_sq_);
  register_state("max_exp_avg_sq", max_exp_avg_sq_);
  register_option("momentum", muon_.momentum, true);
  register_option("muon.eps", muon_.eps);
  register_option("betas.0", adamw_.betas.first, true);
  register_option("betas.1", adamw_.betas.second, true);
  register_option("adamw.eps", adamw_.eps);
  register_flag("nesterov", muon_.nesterov);
  register_flag("amsgrad", adamw_.amsgrad);
}

void MuonWithAdamW::step() {
  NoGradGuard no_grad;
  for (size_t i = 0; i < params_.size(); ++i) {
    const Tensor g = params_[i].grad();
    if (!g.defined()) continue;  // not reached by this backward: no update, no step count
    const double lr = *groups_[group_of_[i]].lr, wd = *groups_[group_of_[i]].weight_decay;
    if (i < muon_count_) muon_update(params_[i].value(), g, momentum_buffer_[i], lr, wd, muon_);
    else
      adam_update(params_[i].value(), g, exp_avg_[i], exp_avg_sq_[i], adamw_.amsgrad ? &max_exp_avg_sq_[i] : nullptr,
                  ++steps_[i], lr, wd, adamw_, /*decoupled=*/true);
  }
}

}  // namespace tg::optim
