#pragma once
#include "nn/layer.h"

namespace tg::nn {

/// Inverted dropout (Srivastava et al. 2014): in training, zeroes each element with probability p and
/// scales the rest by 1/(1-p); identity in eval. ValueError unless 0 <= p <= 1. Draws from `gen`, or from
/// the default generator when null.
class Dropout : public Layer {
 public:
  /// ValueError unless 0 <= p <= 1.
  explicit Dropout(double p = 0.5, Generator* gen = nullptr);
  Variable forward(const Variable& x) override;
  /// forward(relu(x)) as one op (relu_dropout): the same values, draws and gradients in one pass each way.
  Variable forward_relu(const Variable& x);
  std::string type_name() const override { return "Dropout"; }
  double p() const { return p_; }  ///< the probability of zeroing an element

 private:
  double p_;
  Generator* gen_;
};

}  // namespace tg::nn
