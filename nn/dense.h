#pragma once
#include "nn/layer.h"

namespace tg::nn {

struct DenseOptions {
  int64_t in_features = 0;
  int64_t out_features = 0;
  bool bias = true;
  DType dtype = f32;
};

/// y = x Wᵀ + b.  x: (..., in_features) -> (..., out_features). Weights (out, in) and bias (out) start
/// uniform in ±1/√in_features, as PyTorch's Linear. ValueError for non-positive sizes.
class Dense : public Layer {
 public:
  explicit Dense(const DenseOptions& options);
  Variable forward(const Variable& x) override;
  std::string type_name() const override { return "Dense"; }
  const Variable& weight() const { return weight_; }
  const DenseOptions& options() const { return options_; }
  const Variable& bias() const { return bias_; }

 private:
  DenseOptions options_;
  Variable weight_, bias_;  // (out, in) and (out); bias_ undefined without bias
};

}  // namespace tg::nn
