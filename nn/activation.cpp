// The activation layers whose forward is more than one call, and those whose options need checking.
#include "nn/activation.h"

#include <cmath>

namespace tg::nn {

Variable GELU::forward(const Variable& x) { return gelu(x, options_.approximate == GELUOptions::Approximate::tanh); }

// The functions check these too, but a bad option should fail where the layer is built, not at its first use.
Softplus::Softplus(const SoftplusOptions& options) : options_(options) {
  check<ValueError>(options.beta != 0 && std::isfinite(options.beta),
                    "Softplus: beta must be finite and nonzero, got {}", options.beta);
}

Hardtanh::Hardtanh(const HardtanhOptions& options) : options_(options) {
  check<ValueError>(options.min_val <= options.max_val, "Hardtanh: min_val {} is greater than max_val {}",
                    options.min_val, options.max_val);
}

}  // namespace tg::nn
