// The normalisations of nn's BatchNorm, GroupNorm and RMSNorm, as compositions of differentiable ops (mean,
// rsqrt, layer_norm, ...): no op of their own, so no backward of their own; create_graph works through them.
// batch_norm also updates the running statistics in place, as PyTorch's F.batch_norm does.
#include <algorithm>
#include <cmath>
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

// ValueError naming the first line of `lines` (R, n), line i being the `what` i of input `shape`, that holds
// ±inf and no NaN: its statistics are not finite and normalising it gives NaN (inf·0, inf - inf), so it is
// refused as layer_norm refuses such a row. Lines holding NaN pass (NaN in, NaN out). Called only when some
// statistic is not finite, so the fast path pays nothing.
void refuse_inf_lines(const char* op, const char* what, const Tensor& lines, const Shape& shape) {
  const int64_t n = lines.size(1);
  const std::vector<double> v = lines.to_vector<double>();
  for (int64_t i = 0; i < lines.size(0); ++i) {
    const auto first = v.begin() + i * n, last = first + n;
    if (std::any_of(first, last, [](double e) { return std::isnan(e); })) continue;
    check<ValueError>(std::all_of(first, last, [](double e) { return std::isfinite(e); }),
                      "{}: {} {} of {} holds ±inf: its statistics are not finite", op, what, i, shape);
  }
}

// The largest |v| over dims (kept), 1 where it is 0: the constant that scales a line whose squares overflow
// (|v| above 1.8e19 in f32, 1.3e154 in f64) back into range, as tg::vector_norm does.
Variable line_scale(const Tensor& v, const std::vector<int64_t>& dims) {
  const Tensor s = amax(abs(v), dims, true);
  return Variable(where(eq(s, 0.0), full({}, 1.0, s.dtype()), s));
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
  Variable mu = mean(x, dims, true), centered = x - mu;
  Variable var = mean(centered * centered, dims, true);  // biased, two-pass
  Variable y;
  if (all_finite(var.value())) {
    y = centered * rsqrt(var + eps);
  } else {  // a channel holding ±inf is refused; in finite ones whose sum, squares or x - μ overflow (values near
            // ±1.8e308 of both signs), x is scaled by s = max|x| (a constant) first
    refuse_inf_lines("batch_norm", "channel", x.value().transpose(0, 1).reshape({C, -1}), x.shape());
    const Variable s = line_scale(x.value(), dims), scaled = x / s, mu_s = mean(scaled, dims, true);
    const Variable centered_s = scaled - mu_s, var_s = mean(centered_s * centered_s, dims, true);  // var/s²
    y = centered_s * rsqrt(var_s + Variable(eps / s.value() / s.value()));
    mu = mu_s * s, var = var_s * s * s;  // the running variance: inf where it exceeds the dtype's range
  }
  if (running_mean.defined()) {
    update_running(running_mean, mu.value().reshape({C}), momentum);
    update_running(running_var, var.value().reshape({C}) * (double(n) / double(n - 1)), momentum);
  }
  return channel_affine(y, weight, bias, c);
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
  const Variable ms = mean(x * x, dims, true);
  Variable y;
  if (all_finite(ms.value())) {
    y = x * rsqrt(ms + e);
  } else {  // a row holding ±inf is refused; a finite one whose squares overflow is scaled by s (a constant)
    refuse_inf_lines("rms_norm", "row", x.value().reshape({-1, rows.numel()}), x.shape());
    const Variable s = line_scale(x.value(), dims), scaled = x / s;  // y = x·rsqrt(mean(x²) + e) as below
    y = scaled * rsqrt(mean(scaled * scaled, dims, true) + Variable(e / s.value() / s.value()));
  }
  return weight ? y * weight : y;
}

}  // namespace tg
