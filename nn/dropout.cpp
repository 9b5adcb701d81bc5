// Dropout: tg::dropout, active only while the layer is in training mode.
#include "nn/dropout.h"

#include "nn/registry.h"

namespace tg::nn {

Dropout::Dropout(double p, Generator* gen) : p_(p), gen_(gen) {
  check<ValueError>(p >= 0 && p <= 1, "Dropout: probability must be in [0, 1], got {}", p);
}

Variable Dropout::forward(const Variable& x) { return dropout(x, p_, is_training(), gen_); }

Variable Dropout::forward_relu(const Variable& x) {
  if (has_forward_hooks()) return (*this)(relu(x));  // a hook sees relu(x), its input unfused
  return relu_dropout(x, p_, is_training(), gen_);
}

// The generator is not saved: a loaded Dropout draws from the default one.
static const LayerRegistration<Dropout> registration(
    "Dropout", [](const Dropout& d) { return nlohmann::json{{"p", d.p()}}; },
    [](const nlohmann::json& j) { return std::make_unique<Dropout>(j.at("p").get<double>()); });

}  // namespace tg::nn
