// BatchNorm: the options' checks, the buffers, and the bookkeeping of PyTorch's _BatchNorm.forward around
// tg::batch_norm (which normalises and moves the running statistics).
#include "nn/batch_norm.h"

#include <algorithm>

namespace tg::nn {

BatchNorm::BatchNorm(const BatchNormOptions& o, const char* name, std::vector<int64_t> ranks, const char* expected)
    : options_(o), ranks_(std::move(ranks)), expected_(expected) {
  check<ValueError>(o.num_features > 0, "{}: num_features must be > 0, got {}", name, o.num_features);
  check<ValueError>(o.eps > 0, "{}: eps must be > 0, got {}", name, o.eps);
  check<ValueError>(!o.momentum || (*o.momentum >= 0 && *o.momentum <= 1), "{}: momentum must be in [0, 1], got {}",
                    name, o.momentum.value_or(0));
  check<DTypeError>(is_floating(o.dtype), "{}: dtype must be f32 or f64, got {}", name, o.dtype);
  if (o.affine) {
    weight_ = register_parameter("weight", ones({o.num_features}, o.dtype));
    bias_ = register_parameter("bias", zeros({o.num_features}, o.dtype));
  }
  if (o.track_running_stats) {
    running_mean_ = register_buffer("running_mean", zeros({o.num_features}, o.dtype));
    running_var_ = register_buffer("running_var", ones({o.num_features}, o.dtype));
    num_batches_tracked_ = register_buffer("num_batches_tracked", scalar_tensor(0, i64));
  }
}

void BatchNorm::reset_running_stats() {
  if (!options_.track_running_stats) return;
  running_mean_.zero_();
  running_var_.fill_(1);
  num_batches_tracked_.zero_();
}

// As PyTorch: batch statistics in training, or in eval without running ones; the running statistics move
// only in training, by momentum or, without one, by 1/(batches tracked so far, this one included).
Variable BatchNorm::forward(const Variable& x) {
  check<ShapeError>(std::find(ranks_.begin(), ranks_.end(), x.dim()) != ranks_.end(), "{}: input must be {}, got {}",
                    type_name(), expected_, x.shape());
  check<ShapeError>(x.size(1) == options_.num_features, "{}: input {} has {} channels (dim 1), expected {}",
                    type_name(), x.shape(), x.size(1), options_.num_features);
  const bool track = options_.track_running_stats, update = is_training() && track;
  const double tracked = track ? num_batches_tracked_.item() : 0;
  const double momentum = update ? options_.momentum.value_or(1.0 / (tracked + 1)) : 0.0;
  Variable y = batch_norm(x, running_mean_, running_var_, weight_, bias_, is_training() || !track, momentum,
                          options_.eps);
  if (update) num_batches_tracked_.fill_(tracked + 1);
  return y;
}

}  // namespace tg::nn
