#pragma once
#include <utility>

#include "optim/optimizer.h"

namespace tg::optim {

/// Adam's options, PyTorch's names and defaults.
struct AdamOptions {
  double lr = 1e-3;  ///< the learning rate
  /// Β₁, β₂: the decay of the first and second moment averages, each in [0, 1).
  std::pair<double, double> betas = {0.9, 0.999};
  double eps = 1e-8;        ///< added to √v̂ in the denominator (> 0)
  double weight_decay = 0;  ///< L2 penalty: λ·p is added to the gradient
  bool amsgrad = false;     ///< normalise by the running maximum of the second moment (Reddi et al. 2018)
};

/// Adam (Kingma & Ba 2015, Algorithm 1) with PyTorch's operation order, so f64 results match torch 1.13.
/// ValueError for lr or weight_decay negative or non-finite, eps not finite and > 0, or a beta outside [0, 1).
class Adam : public Optimizer {
 public:
  /// One group of `params`; ValueError as above.
  explicit Adam(std::vector<Variable> params, const AdamOptions& options = {});
  /// Groups with their own lr and weight_decay; ValueError as above.
  Adam(std::vector<ParamGroup> groups, const AdamOptions& options = {});
  void step() override;
  const AdamOptions& options() const { return options_; }  ///< as constructed

 protected:
  /// `decoupled`: weight decay as p ← p·(1 − lr·λ) before the update (AdamW) instead of L2.
  Adam(std::string name, std::vector<ParamGroup> groups, const AdamOptions& options, bool decoupled);

 private:
  AdamOptions options_;
  bool decoupled_ = false;
  std::vector<int64_t> steps_;                                // t, per parameter
  std::vector<Tensor> exp_avg_, exp_avg_sq_, max_exp_avg_sq_;  // m, v, max v (amsgrad); parameter shapes
};

/// One Adam update of parameter p (any shape) with gradient g at step t (1 for the first), creating its state
/// m, v (and v_max when given, amsgrad) as zeros on first use; `decoupled`: AdamW's weight decay. Adam::step's
/// body, shared with optimizers that update some parameters by Adam (MuonWithAdamW).
void adam_update(Tensor p, const Tensor& g, Tensor& m, Tensor& v, Tensor* v_max, int64_t t, double lr, double wd,
                 const AdamOptions& o, bool decoupled);

/// AdamW's options, PyTorch's names and defaults.
struct AdamWOptions {
  double lr = 1e-3;  ///< the learning rate
  /// Β₁, β₂: the decay of the first and second moment averages, each in [0, 1).
  std::pair<double, double> betas = {0.9, 0.999};
  double eps = 1e-8;           ///< added to √v̂ in the denominator (> 0)
  double weight_decay = 1e-2;  ///< decoupled: p ← p·(1 − lr·λ) before each update
  bool amsgrad = false;        ///< normalise by the running maximum of the second moment (Reddi et al. 2018)
};

/// AdamW (Loshchilov & Hutter 2019): Adam with weight decay decoupled from the gradient.
class AdamW : public Adam {
 public:
  /// One group of `params`; ValueError as Adam.
  explicit AdamW(std::vector<Variable> params, const AdamWOptions& options = {});
  /// Groups with their own lr and weight_decay; ValueError as Adam.
  AdamW(std::vector<ParamGroup> groups, const AdamWOptions& options = {});
};

}  // namespace tg::optim
