#pragma once
#include <optional>

#include "nn/layer.h"

namespace tg::nn {

/// The options of BatchNorm1d and BatchNorm2d, PyTorch's names and defaults.
struct BatchNormOptions {
  int64_t num_features = 0;  ///< C
  double eps = 1e-5;         ///< added to the variance
  /// The weight of each batch in the running statistics; nullopt = a cumulative average (1/num_batches_tracked).
  std::optional<double> momentum = 0.1;
  bool affine = true;               ///< learn a per-channel weight (1 at start) and bias (0)
  bool track_running_stats = true;  ///< keep running statistics for eval(); without them eval() uses the batch's
  DType dtype = f32;                ///< of the parameters and running statistics
};

/// Batch normalisation (Ioffe & Szegedy 2015), PyTorch's _BatchNorm: per channel, (x - μ)/√(σ² + eps)·weight
/// + bias. In training μ and the biased σ² come from the batch and the buffers running_mean (C, zeros at start),
/// running_var (C, ones; updated with the unbiased σ²) and num_batches_tracked (i64 scalar) are updated; in
/// eval the running statistics are used. Parameters "weight", "bias" (C) when affine; the buffers only with
/// track_running_stats (as PyTorch's state_dict). ValueError for num_features < 1, eps <= 0 or momentum
/// outside [0, 1]; forward: ShapeError for a wrong rank or channel count, ValueError for a training batch of
/// one value per channel. Use BatchNorm1d or BatchNorm2d.
class BatchNorm : public Layer {
 public:
  Variable forward(const Variable& x) override;
  /// Running statistics back to mean 0, variance 1 and no batch tracked.
  void reset_running_stats();
  /// The buffers (undefined without track_running_stats); they share storage with the layer.
  const Tensor& running_mean() const { return running_mean_; }
  const Tensor& running_var() const { return running_var_; }  ///< (C), ones at start
  /// I64 scalar, the batches seen in training.
  const Tensor& num_batches_tracked() const { return num_batches_tracked_; }
  const BatchNormOptions& options() const { return options_; }  ///< as constructed
  /// The parameters (undefined without affine); copy_ into them to set weights.
  Variable weight() const { return weight_; }
  Variable bias() const { return bias_; }  ///< (C), zeros at start

 protected:
  /// `name`: the subclass's type_name() (for the constructor's errors); `ranks`: the input ranks it
  /// accepts, described in errors as `expected`.
  BatchNorm(const BatchNormOptions& options, const char* name, std::vector<int64_t> ranks, const char* expected);

 private:
  BatchNormOptions options_;
  std::vector<int64_t> ranks_;
  const char* expected_;
  Variable weight_, bias_;                                  // (C), undefined unless affine
  Tensor running_mean_, running_var_, num_batches_tracked_;  // (C), (C), () i64
};

/// BatchNorm over x (N, C) or (N, C, L): statistics per channel over N (and L).
class BatchNorm1d : public BatchNorm {
 public:
  /// ValueError as BatchNorm.
  explicit BatchNorm1d(const BatchNormOptions& options) : BatchNorm(options, "BatchNorm1d", {2, 3}, "(N, C) or (N, C, L)") {}
  std::string type_name() const override { return "BatchNorm1d"; }
};

/// BatchNorm over x (N, C, H, W): statistics per channel over N, H and W.
class BatchNorm2d : public BatchNorm {
 public:
  /// ValueError as BatchNorm.
  explicit BatchNorm2d(const BatchNormOptions& options) : BatchNorm(options, "BatchNorm2d", {4}, "(N, C, H, W)") {}
  std::string type_name() const override { return "BatchNorm2d"; }
};

}  // namespace tg::nn
