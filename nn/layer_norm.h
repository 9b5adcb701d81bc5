#pragma once
#include "nn/layer.h"

namespace tg::nn {

/// LayerNorm's options, PyTorch's names.
struct LayerNormOptions {
  Shape normalized_shape;          ///< the trailing dims normalised over, as PyTorch's: {D} or {S, D}
  double eps = 1e-5;               ///< added to the variance
  bool elementwise_affine = true;  ///< learn "weight" (1 at start) and "bias" (0) of normalized_shape
  DType dtype = f32;               ///< of the parameters
};

/// Layer normalisation (Ba et al. 2016) over the trailing dims normalized_shape, as PyTorch's nn.LayerNorm:
/// (x - mean) / √(var + eps) · weight + bias, biased variance, weight 1 and bias 0 (normalized_shape) at start.
/// x: (..., *normalized_shape). ValueError for an empty normalized_shape, a size < 1 or eps < 0; forward:
/// ShapeError naming both shapes when x does not end in normalized_shape.
class LayerNorm : public Layer {
 public:
  /// ValueError as above.
  explicit LayerNorm(const LayerNormOptions& options);
  Variable forward(const Variable& x) override;
  std::string type_name() const override { return "LayerNorm"; }
  const LayerNormOptions& options() const { return options_; }  ///< as constructed
  /// The parameters (undefined without elementwise_affine); copy_ into them to set weights.
  Variable weight() const { return weight_; }
  Variable bias() const { return bias_; }  ///< (normalized_shape)

 private:
  LayerNormOptions options_;
  Variable weight_, bias_;  // normalized_shape; undefined without elementwise_affine
};

}  // namespace tg::nn
