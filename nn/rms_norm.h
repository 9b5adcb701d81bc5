#pragma once
#include <optional>

#include "nn/layer.h"

namespace tg::nn {

/// RMSNorm's options, PyTorch's names.
struct RMSNormOptions {
  Shape normalized_shape;  ///< the trailing dims normalised over, e.g. {D} or {S, D}
  /// Added to mean(x²); nullopt = the machine epsilon of the input's dtype (PyTorch's eps=None).
  std::optional<double> eps;
  bool elementwise_affine = true;  ///< learn "weight" (normalized_shape, 1 at start)
  DType dtype = f32;               ///< of the weight
};

/// RMS normalisation (Zhang & Sennrich 2019), PyTorch 2.4's nn.RMSNorm: x (..., *normalized_shape) ->
/// the same shape, x / √(mean(x²) + eps) · weight over the normalised dims; no centring, no bias.
/// ValueError for an empty normalized_shape or a size < 1, or eps <= 0; forward: ShapeError when x does not
/// end in normalized_shape.
class RMSNorm : public Layer {
 public:
  /// ValueError as above.
  explicit RMSNorm(const RMSNormOptions& options);
  Variable forward(const Variable& x) override;
  std::string type_name() const override { return "RMSNorm"; }
  const RMSNormOptions& options() const { return options_; }  ///< as constructed
  /// The scale (undefined without elementwise_affine); copy_ into it to set weights.
  Variable weight() const { return weight_; }

 private:
  RMSNormOptions options_;
  Variable weight_;  // normalized_shape; undefined without elementwise_affine
};

}  // namespace tg::nn
