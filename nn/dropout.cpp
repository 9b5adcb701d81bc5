// Dropout: tg::dropout, active only while the layer is in training mode.
#include "nn/dropout.h"

namespace tg::nn {

Dropout::Dropout(double p, Generator* gen) : p_(p), gen_(gen) {
  check<ValueError>(p >= 0 && p <= 1, "Dropout: probability must be in [0, 1], got {}", p);
}

Variable Dropout::forward(const Variable& x) { return dropout(x, p_, is_training(), gen_); }

Variable Dropout::forward_relu(const Variable& x) {
  if (has_forward_hooks()) return (*this)(relu(x));  // a hook sees relu(x), its input unfused
  return relu_dropout(x, p_, is_training(), gen_);
}

}  // namespace tg::nn
