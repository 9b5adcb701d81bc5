#pragma once
// The digits network: two blocks of Conv2d 3×3 → BatchNorm2d → ReLU → MaxPool2d 2×2 (8×8 → 4×4 → 2×2),
// then Dropout and a Dense layer to the 10 digits. A Sequential, so its parameters are named as PyTorch's
// nn.Sequential names them ("0.weight", "1.running_mean", ..., "10.bias").
#include <tensorgrad/tensorgrad.h>

#include "config.h"

namespace digits {

/// x (N, 1, 8, 8) -> logits (N, 10). ValueError (Conv2d's, Dropout's) for sizes check_config refuses.
class DigitsNet : public tg::nn::Sequential {
 public:
  explicit DigitsNet(const ModelConfig& config);
  /// The first convolution: its weight (channels1, 1, 3, 3) is what `filters.svg` draws.
  const tg::nn::Conv2d& conv1() const { return *conv1_; }
  std::string type_name() const override { return "DigitsNet"; }

 private:
  tg::nn::Conv2d* conv1_;
};

/// Softmax probabilities (N, 10) of `images` (N, 1, 8, 8) in eval mode without recording a graph, in
/// batches of 256; the model's mode is restored afterwards.
tg::Tensor predict_proba(DigitsNet& model, const tg::Tensor& images);

/// How many rows of `scores` (N, 10), logits or probabilities, have their largest value at `labels` (N).
int64_t count_correct(const tg::Tensor& scores, const tg::Tensor& labels);

}  // namespace digits
