#pragma once
// Convolution layers: Conv1d, Conv2d and ConvTranspose2d, with PyTorch's parameter names, shapes and
// default initialisation, so that a PyTorch state_dict loads into them.
#include "nn/layer.h"

namespace tg::nn {

struct Conv2dOptions {
  int64_t in_channels = 0;
  int64_t out_channels = 0;
  Size2 kernel_size;  ///< `3` or `{3, 5}`
  Size2 stride = 1;
  Padding2d padding = 0;  ///< sizes, or PaddingMode::same / valid
  Size2 dilation = 1;
  int64_t groups = 1;
  bool bias = true;
  DType dtype = f32;
};

/// 2-D convolution (tg::conv2d): x (N, C_in, H, W) or (C_in, H, W) -> (N, C_out, H_out, W_out) with
/// H_out = ⌊(H + 2·padding - dilation·(kH - 1) - 1) / stride⌋ + 1 (likewise W_out). weight
/// (C_out, C_in / groups, kH, kW) and bias (C_out) start as PyTorch's: kaiming_uniform(a = √5), i.e. uniform
/// in ±1/√fan_in with fan_in = C_in / groups·kH·kW, and the bias in the same bound. ValueError for sizes < 1,
/// channels not divisible by groups, negative padding, or 'same' with a stride (as PyTorch); forward throws
/// as conv2d.
class Conv2d : public Layer {
 public:
  explicit Conv2d(const Conv2dOptions& options);
  Variable forward(const Variable& x) override;
  std::string type_name() const override { return "Conv2d"; }
  const Conv2dOptions& options() const { return options_; }
  Variable weight() const { return weight_; }
  Variable bias() const { return bias_; }

 private:
  Conv2dOptions options_;
  Variable weight_, bias_;  // (C_out, C_in / groups, kH, kW) and (C_out); bias_ undefined without bias
};

struct Conv1dOptions {
  int64_t in_channels = 0;
  int64_t out_channels = 0;
  int64_t kernel_size = 0;
  int64_t stride = 1;
  Padding1d padding = 0;
  int64_t dilation = 1;
  int64_t groups = 1;
  bool bias = true;
  DType dtype = f32;
};

/// 1-D convolution (tg::conv1d): x (N, C_in, L) or (C_in, L) -> (N, C_out, L_out) with
/// L_out = ⌊(L + 2·padding - dilation·(k - 1) - 1) / stride⌋ + 1. weight (C_out, C_in / groups, k) and bias
/// (C_out), initialised and checked as Conv2d's.
class Conv1d : public Layer {
 public:
  explicit Conv1d(const Conv1dOptions& options);
  Variable forward(const Variable& x) override;
  std::string type_name() const override { return "Conv1d"; }
  const Conv1dOptions& options() const { return options_; }
  Variable weight() const { return weight_; }
  Variable bias() const { return bias_; }

 private:
  Conv1dOptions options_;
  Variable weight_, bias_;  // (C_out, C_in / groups, k) and (C_out)
};

struct ConvTranspose2dOptions {
  int64_t in_channels = 0;
  int64_t out_channels = 0;
  Size2 kernel_size;
  Size2 stride = 1;
  Size2 padding = 0;
  Size2 output_padding = 0;
  int64_t groups = 1;
  bool bias = true;
  Size2 dilation = 1;
  DType dtype = f32;
};

/// Transposed 2-D convolution (tg::conv_transpose2d), the adjoint of Conv2d in its input: x (N, C_in, H, W)
/// -> (N, C_out, H_out, W_out) with H_out = (H - 1)·stride - 2·padding + dilation·(kH - 1) + output_padding + 1.
/// weight (C_in, C_out / groups, kH, kW) and bias (C_out), initialised as PyTorch's (fan_in = C_out / groups·kH·kW).
/// ValueError as Conv2d's, and unless output_padding < stride or < dilation.
class ConvTranspose2d : public Layer {
 public:
  explicit ConvTranspose2d(const ConvTranspose2dOptions& options);
  Variable forward(const Variable& x) override;
  std::string type_name() const override { return "ConvTranspose2d"; }
  const ConvTranspose2dOptions& options() const { return options_; }
  Variable weight() const { return weight_; }
  Variable bias() const { return bias_; }

 private:
  ConvTranspose2dOptions options_;
  Variable weight_, bias_;  // (C_in, C_out / groups, kH, kW) and (C_out)
};

}  // namespace tg::nn
