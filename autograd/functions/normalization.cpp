// The normalisations of nn's BatchNorm, GroupNorm and RMSNorm, as compositions of differentiable ops (mean,
// rsqrt, layer_norm, ...): no op of their own, so no backward of their own; create_graph works through them.
// batch_norm also updates the running statistics in place, as PyTorch's F.batch_norm does.
#include <limits>

#include "autograd/functions.h"

namespace tg {
namespace {

void check_eps(const char* op, double eps) { check<ValueError>(eps > 0, "{}: eps must be > 0, got {}", op, eps); }

// ShapeError unless x is (N, C, *); returns C.
int64_t channels_of(const char* op, const Variable& x) {
  check<ShapeError>(x.dim() >= 2, "{}: input must be (N, C, *), got {}", op, x.shape());
  return x.size(1);
}

// ShapeError / DTypeError unless t (a weight, bias or running statistic, when defined) holds one value per
// channel of x in x's dtype.
void check_per_channel(const char* op, const char* what, const Tensor& t, const Variable& x) {
  if (!t.defined()) return;
  const Shape c{x.size(1)};
  check<ShapeError>(t.shape() == c, "{}: {} must be {} for input {}, got {}", op, what, c, x.shape(), t.shape());
  check<DTypeError>(t.dtype() == x.dtype(), "{}: {} is {} but the input is {}", op, what, t.dtype(), x.dtype());
}

// The shape (C, 1, ..., 1) that broadcasts a per-channel vector against x (N, C, *).
Shape channel_shape(const Variable& x) {
  Shape s(size_t(x.dim() - 1), 1);
  s[0] = x.size(1);
  return s;
}

// y·weight + bias with per-channel weight and bias (either undefined).
Variable channel_affine(const Variable& y, const Variable& weight, const Variable& bias, const Shape& c) {
  const Variable scaled = weight ? y * weight.reshape(c) : y;
  return bias ? scaled + bias.reshape(c) : scaled;
}

// r = (1 - momentum)·r + momentum·s, in place.
void update_running(Tensor r, const Tensor& s, double momentum) { r.mul_(1.0 - momentum).add_(s, momentum); }

}  // namespace

// Training: μ, σ² (biased) over N and *; y = (x - μ)/√(σ² + eps)·w + b, and the running statistics move
// toward μ and the unbiased σ²·n/(n-1). Evaluation: y = x·α + β with α = w/√(r_var + eps), β = b - r_mean·α
// (per channel, so two passes over x instead of four).
Variable batch_norm(const Variable& x, Tensor running_mean, Tensor running_var, const Variable& weight,
                    const Variable& bias, bool training, double momentum, double eps) {
  const int64_t C = channels_of("batch_norm", x);
  check_per_channel("batch_norm", "weight", weight.value(), x);
  check_per_channel("batch_norm", "bias", bias.value(), x);
  check_per_channel("batch_norm", "running_mean", running_mean, x);
  check_per_channel("batch_norm", "running_var", running_var, x);
  check<ValueError>(running_mean.defined() == running_var.defined(),
                    "batch_norm: running_mean and running_var must be both defined or both undefined");
  check<ValueError>(momentum >= 0 && momentum <= 1, "batch_norm: momentum must be in [0, 1], got {}", momentum);
  check_eps("batch_norm", eps);
  const Shape c = channel_shape(x);
  if (!training) {
    check<ValueError>(running_mean.defined(), "batch_norm: evaluation (training = false) needs running statistics");
    const Variable inv_std(rsqrt(running_var + eps).reshape(c));
    const Variable alpha = weight ? inv_std * weight.reshape(c) : inv_std;
    Variable beta = -(Variable(running_mean.reshape(c)) * alpha);
    if (bias) beta = beta + bias.reshape(c);
    return x * alpha + beta;
  }
  const int64_t n = x.numel() / C;
  check<ValueError>(n > 1, "batch_norm: expected more than 1 value per channel when training, got input {}", x.shape());
  std::vector<int64_t> dims{0};
  for (int64_t d = 2; d < x.dim(); ++d) dims.push_back(d);
  const Variable mu = mean(x, dims, true), centered = x - mu;
  const Variable var = mean(centered * centered, dims, true);  // biased, two-pass
  if (running_mean.defined()) {
    update_running(running_mean, mu.value().reshape({C}), momentum);
    update_running(running_var, var.value().reshape({C}) * (double(n) / double(n - 1)), momentum);
  }
  return channel_affine(centered * rsqrt(var + eps), weight, bias, c);
}

// x (N, C, *) seen as (N, G, C/G·*): each row normalised as layer_norm does (fused, two-pass statistics),
// then the per-channel affine.
Variable group_norm(const Variable& x, int64_t num_groups, const Variable& weight, const Variable& bias, double eps) {
  const int64_t C = channels_of("group_norm", x);
  check<ValueError>(num_groups > 0 && C % num_groups == 0,
                    "group_norm: {} channels of input {} are not divisible by num_groups {}", C, x.shape(), num_groups);
  check_per_channel("group_norm", "weight", weight.value(), x);
  check_per_channel("group_norm", "bias", bias.value(), x);
  check_eps("group_norm", eps);
  const Variable groups = x.reshape({x.size(0), num_groups, -1});  // (N, G, C/G·spatial)
  const Variable y = layer_norm(groups, {groups.size(-1)}, eps);
  return channel_affine(y.reshape(x.shape()), weight, bias, channel_shape(x));
}

// y = x·rsqrt(mean(x²) + eps)·w over the last k dims, in PyTorch 2.4's order of operations.
Variable rms_norm(const Variable& x, int64_t normalized_ndim, const Variable& weight, std::optional<double> eps) {
  const int64_t k = normalized_ndim;
  check<ShapeError>(k >= 1 && k <= x.dim(), "rms_norm: cannot normalise the last {} dims of a tensor of shape {}", k,
                    x.shape());
  const Shape rows(x.shape().end() - k, x.shape().end());
  check<ShapeError>(!weight || weight.shape() == rows, "rms_norm: weight must be {} for input {}, got {}", rows,
                    x.shape(), weight.shape());
  const double e = eps ? *eps
                       : (x.dtype() == f32 ? double(std::numeric_limits<float>::epsilon())
                                           : std::numeric_limits<double>::epsilon());
  check_eps("rms_norm", e);
  std::vector<int64_t> dims;
  for (int64_t d = x.dim() - k; d < x.dim(); ++d) dims.push_back(d);
  const Variable y = x * rsqrt(mean(x * x, dims, true) + e);
  return weight ? y * weight : y;
}

}  // namespace tg
