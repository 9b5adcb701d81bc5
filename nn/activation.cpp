// The activation layers whose forward is more than one call, and those whose options need checking.
#include "nn/activation.h"

#include <cmath>

#include "nn/registry.h"

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

NLOHMANN_JSON_SERIALIZE_ENUM(GELUOptions::Approximate, {{GELUOptions::Approximate::none, "none"},
                                                       {GELUOptions::Approximate::tanh, "tanh"}})
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(GELUOptions, approximate)
static const LayerRegistration<ReLU> relu_registration("ReLU");
static const LayerRegistration<GELU> gelu_registration("GELU");
static const LayerRegistration<Tanh> tanh_registration("Tanh");
static const LayerRegistration<Sigmoid> sigmoid_registration("Sigmoid");
static const LayerRegistration<SiLU> silu_registration("SiLU");
static const LayerRegistration<Softmax> softmax_registration(
    "Softmax", [](const Softmax& s) { return nlohmann::json{{"dim", s.dim()}}; },
    [](const nlohmann::json& j) { return std::make_unique<Softmax>(j.at("dim").get<int64_t>()); });

}  // namespace tg::nn
