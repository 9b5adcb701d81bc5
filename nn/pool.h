#pragma once
// Pooling layers and Flatten: MaxPool1d/2d, AvgPool1d/2d, AdaptiveAvgPool1d/2d, as PyTorch's modules. They
// hold no parameters; each runs its tg:: function (autograd/functions/pool.cpp) with its options.
#include "nn/layer.h"

namespace tg::nn {

// The options are the functions' (as libtorch's MaxPool2dOptions and MaxPool2dFuncOptions are one type).
using MaxPool2dOptions = MaxPool2dFuncOptions;
using MaxPool1dOptions = MaxPool1dFuncOptions;
using AvgPool2dOptions = AvgPool2dFuncOptions;
using AvgPool1dOptions = AvgPool1dFuncOptions;

/// Max over each window (tg::max_pool2d): x (N, C, H, W) or (C, H, W) -> (N, C, H_out, W_out) with
/// H_out = ⌊(H + 2·padding - dilation·(kH - 1) - 1) / stride⌋ + 1 (⌈⌉ with ceil_mode; likewise W_out), stride
/// = kernel_size unless given. ValueError for sizes < 1, or a padding negative or above kernel_size / 2.
class MaxPool2d : public Layer {
 public:
  /// ValueError as above.
  explicit MaxPool2d(const MaxPool2dOptions& options);
  Variable forward(const Variable& x) override { return max_pool2d(x, options_); }
  std::string type_name() const override { return "MaxPool2d"; }
  const MaxPool2dOptions& options() const { return options_; }  ///< as constructed

 private:
  MaxPool2dOptions options_;
};

/// tg::max_pool1d: x (N, C, L) or (C, L) -> (N, C, L_out), L_out as MaxPool2d's H_out. Errors as MaxPool2d.
class MaxPool1d : public Layer {
 public:
  /// ValueError as MaxPool2d.
  explicit MaxPool1d(const MaxPool1dOptions& options);
  Variable forward(const Variable& x) override { return max_pool1d(x, options_); }
  std::string type_name() const override { return "MaxPool1d"; }
  const MaxPool1dOptions& options() const { return options_; }  ///< as constructed

 private:
  MaxPool1dOptions options_;
};

/// Mean over each window (tg::avg_pool2d), dividing by the window's size with padding (count_include_pad,
/// PyTorch's default) or without: (N, C, H, W) -> (N, C, H_out, W_out), sizes as MaxPool2d's without dilation.
/// Errors as MaxPool2d.
class AvgPool2d : public Layer {
 public:
  /// ValueError as MaxPool2d.
  explicit AvgPool2d(const AvgPool2dOptions& options);
  Variable forward(const Variable& x) override { return avg_pool2d(x, options_); }
  std::string type_name() const override { return "AvgPool2d"; }
  const AvgPool2dOptions& options() const { return options_; }  ///< as constructed

 private:
  AvgPool2dOptions options_;
};

/// tg::avg_pool1d: (N, C, L) -> (N, C, L_out). Errors as MaxPool2d.
class AvgPool1d : public Layer {
 public:
  /// ValueError as MaxPool2d.
  explicit AvgPool1d(const AvgPool1dOptions& options);
  Variable forward(const Variable& x) override { return avg_pool1d(x, options_); }
  std::string type_name() const override { return "AvgPool1d"; }
  const AvgPool1dOptions& options() const { return options_; }  ///< as constructed

 private:
  AvgPool1dOptions options_;
};

/// Mean over PyTorch's adaptive windows (tg::adaptive_avg_pool2d): (N, C, H, W) -> (N, C, output_size...);
/// output_size 1 is global average pooling. ValueError for an output size < 1.
class AdaptiveAvgPool2d : public Layer {
 public:
  /// ValueError for an output size < 1.
  explicit AdaptiveAvgPool2d(Size2 output_size);
  Variable forward(const Variable& x) override { return adaptive_avg_pool2d(x, output_size_); }
  std::string type_name() const override { return "AdaptiveAvgPool2d"; }
  Size2 output_size() const { return output_size_; }  ///< (H_out, W_out)

 private:
  Size2 output_size_;
};

/// tg::adaptive_avg_pool1d: (N, C, L) -> (N, C, output_size). ValueError for an output size < 1.
class AdaptiveAvgPool1d : public Layer {
 public:
  /// ValueError for an output size < 1.
  explicit AdaptiveAvgPool1d(int64_t output_size);
  Variable forward(const Variable& x) override { return adaptive_avg_pool1d(x, output_size_); }
  std::string type_name() const override { return "AdaptiveAvgPool1d"; }
  int64_t output_size() const { return output_size_; }  ///< L_out

 private:
  int64_t output_size_;
};

/// Flatten's options, PyTorch's defaults.
struct FlattenOptions {
  int64_t start_dim = 1;  ///< the first dim merged (negative counts from the end)
  int64_t end_dim = -1;   ///< the last dim merged (inclusive)
};

/// Dims start_dim..end_dim merged into one (tg::flatten), a view where the layout allows: (N, C, H, W) ->
/// (N, C·H·W) by default, as PyTorch's Flatten. IndexError (flatten's) for dims outside the input.
class Flatten : public Layer {
 public:
  /// Flattens dims start_dim..end_dim; checked at forward.
  explicit Flatten(const FlattenOptions& options = {}) : options_(options) {}
  Variable forward(const Variable& x) override { return flatten(x, options_.start_dim, options_.end_dim); }
  std::string type_name() const override { return "Flatten"; }
  const FlattenOptions& options() const { return options_; }  ///< as constructed

 private:
  FlattenOptions options_;
};

}  // namespace tg::nn
