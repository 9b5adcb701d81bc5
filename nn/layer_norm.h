#pragma once
#include "nn/layer.h"

namespace tg::nn {

struct LayerNormOptions {
  int64_t normalized_shape = 0;  ///< size of the last dim
  double eps = 1e-5;
  bool elementwise_affine = true;
  DType dtype = f32;
};

/// Layer normalisation (Ba et al. 2016) over the last dim: (x - mean) / √(var + eps) · weight + bias,
/// biased variance, weight 1 and bias 0 at start. x: (..., normalized_shape).
class LayerNorm : public Layer {
 public:
  explicit LayerNorm(const LayerNormOptions& options);
  Variable forward(const Variable& x) override;
  std::string type_name() const override { return "LayerNorm"; }
  const LayerNormOptions& options() const { return options_; }

 private:
  LayerNormOptions options_;
  Variable weight_, bias_;  // (normalized_shape); undefined without elementwise_affine
};

}  // namespace tg::nn
