#pragma once
#include "optim/optimizer.h"

namespace tg::optim {

/// SGD's options, PyTorch's names and defaults.
struct SGDOptions {
  double lr = 1e-3;         ///< the learning rate
  double momentum = 0;      ///< μ: the buffer b ← μ·b + (1 − dampening)·g is the step's direction (0 = plain SGD)
  double dampening = 0;     ///< the fraction of the gradient left out of the momentum buffer
  double weight_decay = 0;  ///< L2 penalty: λ·p is added to the gradient before momentum
  bool nesterov = false;    ///< Sutskever et al. 2013, as PyTorch: g + μ·b
};

/// Stochastic gradient descent with momentum, as torch.optim.SGD: the first momentum buffer is a copy of
/// the gradient. ValueError for negative or non-finite options, or nesterov without momentum > 0 and
/// dampening 0.
class SGD : public Optimizer {
 public:
  /// One group of `params`; ValueError as above.
  explicit SGD(std::vector<Variable> params, const SGDOptions& options = {});
  /// Groups with their own lr and weight_decay; ValueError as above.
  SGD(std::vector<ParamGroup> groups, const SGDOptions& options = {});
  void step() override;
  const SGDOptions& options() const { return options_; }  ///< as constructed

 private:
  SGDOptions options_;
  std::vector<Tensor> momentum_buffer_;  // b per parameter, parameter shapes; undefined without momentum
};

}  // namespace tg::optim
