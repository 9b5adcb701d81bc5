#pragma once
#include "nn/layer.h"

namespace tg::nn {

/// GroupNorm's options, PyTorch's names.
struct GroupNormOptions {
  int64_t num_groups = 0;    ///< G, the groups the channels are split into
  int64_t num_channels = 0;  ///< C, divisible by num_groups
  double eps = 1e-5;         ///< added to the variance
  bool affine = true;        ///< learn a per-channel weight (1 at start) and bias (0)
  DType dtype = f32;         ///< of the parameters
};

/// Group normalisation (Wu & He 2018), PyTorch's nn.GroupNorm: x (N, C, *) -> the same shape, each sample's
/// channels split into num_groups groups, each group normalised over its channels and * (biased variance),
/// then ·weight + bias per channel ("weight", "bias" (C) when affine). The same in training and eval.
/// ValueError when num_channels is not divisible by num_groups, for sizes < 1, or eps <= 0; forward:
/// ShapeError for x of fewer than 2 dims or another channel count.
class GroupNorm : public Layer {
 public:
  /// ValueError as above.
  explicit GroupNorm(const GroupNormOptions& options);
  Variable forward(const Variable& x) override;
  std::string type_name() const override { return "GroupNorm"; }
  const GroupNormOptions& options() const { return options_; }  ///< as constructed
  /// The parameters (undefined without affine); copy_ into them to set weights.
  Variable weight() const { return weight_; }
  Variable bias() const { return bias_; }  ///< (C)

 private:
  GroupNormOptions options_;
  Variable weight_, bias_;  // (C), undefined unless affine
};

}  // namespace tg::nn
