#pragma once
// Convolution layers: Conv1d, Conv2d and ConvTranspose2d, with PyTorch's parameter names, shapes and
// default initialisation, so that a PyTorch state_dict loads into them.
#include "nn/layer.h"

namespace tg::nn {

/// Conv2d's options, PyTorch's names and defaults.
struct Conv2dOptions {
  int64_t in_channels = 0;   ///< C_in
  int64_t out_channels = 0;  ///< C_out
  Size2 kernel_size;         ///< `3` or `{3, 5}`
  Size2 stride = 1;          ///< `1` or `{sH, sW}`
  Padding2d padding = 0;     ///< sizes, or PaddingMode::same / valid
  Size2 dilation = 1;        ///< spacing between kernel taps
  int64_t groups = 1;        ///< C_in and C_out in this many independent groups
  bool bias = true;          ///< whether there is a bias (C_out)
  DType dtype = f32;         ///< of the weight and bias
};

/// 2-D convolution (tg::conv2d): x (N, C_in, H, W) or (C_in, H, W) -> (N, C_out, H_out, W_out) with
/// H_out = ⌊(H + 2·padding - dilation·(kH - 1) - 1) / stride⌋ + 1 (likewise W_out). weight
/// (C_out, C_in / groups, kH, kW) and bias (C_out) start as PyTorch's: kaiming_uniform(a = √5), i.e. uniform
/// in ±1/√fan_in with fan_in = C_in / groups·kH·kW, and the bias in the same bound. ValueError for sizes < 1,
/// channels not divisible by groups, negative padding, or 'same' with a stride (as PyTorch); forward throws
/// as conv2d.
class Conv2d : public Layer {
 public:
  /// ValueError as above, naming the options.
  explicit Conv2d(const Conv2dOptions& options);
  Variable forward(const Variable& x) override;
  std::string type_name() const override { return "Conv2d"; }
  const Conv2dOptions& options() const { return options_; }  ///< as constructed
  Variable weight() const { return weight_; }                ///< (C_out, C_in / groups, kH, kW)
  Variable bias() const { return bias_; }                    ///< (C_out); undefined without bias

 private:
  Conv2dOptions options_;
  Variable weight_, bias_;  // (C_out, C_in / groups, kH, kW) and (C_out); bias_ undefined without bias
};

/// Conv1d's options, PyTorch's names and defaults.
struct Conv1dOptions {
  int64_t in_channels = 0;   ///< C_in
  int64_t out_channels = 0;  ///< C_out
  int64_t kernel_size = 0;   ///< k
  int64_t stride = 1;        ///< step between windows
  Padding1d padding = 0;     ///< sizes, or PaddingMode::same / valid
  int64_t dilation = 1;      ///< spacing between kernel taps
  int64_t groups = 1;        ///< C_in and C_out in this many independent groups
  bool bias = true;          ///< whether there is a bias (C_out)
  DType dtype = f32;         ///< of the weight and bias
};

/// 1-D convolution (tg::conv1d): x (N, C_in, L) or (C_in, L) -> (N, C_out, L_out) with
/// L_out = ⌊(L + 2·padding - dilation·(k - 1) - 1) / stride⌋ + 1. weight (C_out, C_in / groups, k) and bias
/// (C_out), initialised and checked as Conv2d's.
class Conv1d : public Layer {
 public:
  /// ValueError as Conv2d's, naming the options.
  explicit Conv1d(const Conv1dOptions& options);
  Variable forward(const Variable& x) override;
  std::string type_name() const override { return "Conv1d"; }
  const Conv1dOptions& options() const { return options_; }  ///< as constructed
  Variable weight() const { return weight_; }                ///< (C_out, C_in / groups, k)
  Variable bias() const { return bias_; }                    ///< (C_out); undefined without bias

 private:
  Conv1dOptions options_;
  Variable weight_, bias_;  // (C_out, C_in / groups, k) and (C_out)
};

/// ConvTranspose2d's options, PyTorch's names and defaults.
struct ConvTranspose2dOptions {
  int64_t in_channels = 0;   ///< C_in
  int64_t out_channels = 0;  ///< C_out
  Size2 kernel_size;         ///< `3` or `{3, 5}`
  Size2 stride = 1;          ///< `1` or `{sH, sW}`
  Size2 padding = 0;         ///< removed from each side of the output (the padding of the Conv2d it is the adjoint of)
  Size2 output_padding = 0;  ///< added to one side of the output, to choose among the sizes that stride rounds to one
  int64_t groups = 1;        ///< C_in and C_out in this many independent groups
  bool bias = true;          ///< whether there is a bias (C_out)
  Size2 dilation = 1;        ///< spacing between kernel taps
  DType dtype = f32;         ///< of the weight and bias
};

/// Transposed 2-D convolution (tg::conv_transpose2d), the adjoint of Conv2d in its input: x (N, C_in, H, W)
/// -> (N, C_out, H_out, W_out) with H_out = (H - 1)·stride - 2·padding + dilation·(kH - 1) + output_padding + 1.
/// weight (C_in, C_out / groups, kH, kW) and bias (C_out), initialised as PyTorch's (fan_in = C_out / groups·kH·kW).
/// ValueError as Conv2d's, and unless output_padding < stride or < dilation.
class ConvTranspose2d : public Layer {
 public:
  /// ValueError as above, naming the options.
  explicit ConvTranspose2d(const ConvTranspose2dOptions& options);
  Variable forward(const Variable& x) override;
  std::string type_name() const override { return "ConvTranspose2d"; }
  const ConvTranspose2dOptions& options() const { return options_; }  ///< as constructed
  Variable weight() const { return weight_; }                         ///< (C_in, C_out / groups, kH, kW)
  Variable bias() const { return bias_; }                             ///< (C_out); undefined without bias

 private:
  ConvTranspose2dOptions options_;
  Variable weight_, bias_;  // (C_in, C_out / groups, kH, kW) and (C_out)
};

}  // namespace tg::nn
