// Weight initialisation: the fan and gain formulas of torch.nn.init, and fills that draw a fresh tensor
// from core/random and copy it into the target's storage (which may be a strided view).
#include "nn/init.h"

#include <cmath>

#include "core/error.h"
#include "core/ops.h"

namespace tg::nn::init {
namespace {

// The checks every fill shares; returns false for an empty tensor (nothing to fill, as PyTorch).
bool fillable(const Tensor& t, const char* op) {
  check<ValueError>(t.defined(), "init::{}: undefined tensor", op);
  check<DTypeError>(is_floating(t.dtype()), "init::{}: tensor must be f32 or f64, got {}", op, t.dtype());
  return t.numel() > 0;
}

Tensor fill_from(const Tensor& t, const Tensor& values) {
  Tensor out = t;
  out.copy_(values);
  return out;
}

}  // namespace

Fans compute_fans(const Shape& shape) {
  check<ValueError>(shape.size() >= 2, "init: fan in and fan out need at least 2 dims, got {}", shape);
  int64_t receptive = 1;
  for (size_t d = 2; d < shape.size(); ++d) receptive *= shape[d];
  return {.fan_in = shape[1] * receptive, .fan_out = shape[0] * receptive};
}

double calculate_gain(Nonlinearity nonlinearity, double negative_slope) {
  switch (nonlinearity) {
    case Nonlinearity::linear:
    case Nonlinearity::sigmoid: return 1.0;
    case Nonlinearity::tanh: return 5.0 / 3.0;
    case Nonlinearity::relu: return std::sqrt(2.0);
    case Nonlinearity::leaky_relu: return std::sqrt(2.0 / (1.0 + negative_slope * negative_slope));
  }
  return 1.0;
}

Tensor uniform(const Tensor& t, double low, double high, Generator* gen) {
  check<ValueError>(low <= high, "init::uniform: low {} > high {}", low, high);
  if (!fillable(t, "uniform")) return t;
  return fill_from(t, rand(t.shape(), t.dtype(), gen, low, high));
}

Tensor normal(const Tensor& t, double mean, double std, Generator* gen) {
  check<ValueError>(std >= 0, "init::normal: std must be >= 0, got {}", std);
  if (!fillable(t, "normal")) return t;
  return fill_from(t, randn(t.shape(), t.dtype(), gen) * std + mean);
}

Tensor zeros(const Tensor& t) {
  if (!fillable(t, "zeros")) return t;
  Tensor out = t;
  return out.zero_();
}

Tensor ones(const Tensor& t) {
  if (!fillable(t, "ones")) return t;
  Tensor out = t;
  return out.fill_(1.0);
}

Tensor xavier_uniform(const Tensor& t, const XavierOptions& o) {
  if (!fillable(t, "xavier_uniform")) return t;
  const Fans f = compute_fans(t.shape());
  const double a = o.gain * std::sqrt(6.0 / double(f.fan_in + f.fan_out));
  return uniform(t, -a, a, o.gen);
}

Tensor xavier_normal(const Tensor& t, const XavierOptions& o) {
  if (!fillable(t, "xavier_normal")) return t;
  const Fans f = compute_fans(t.shape());
  return normal(t, 0.0, o.gain * std::sqrt(2.0 / double(f.fan_in + f.fan_out)), o.gen);
}

namespace {

// gain / √fan for Kaiming: the std of the normal, and √3 times it the bound of the uniform.
double kaiming_std(const Tensor& t, const KaimingOptions& o) {
  const Fans f = compute_fans(t.shape());
  const int64_t fan = o.mode == FanMode::fan_in ? f.fan_in : f.fan_out;
  return calculate_gain(o.nonlinearity, o.a) / std::sqrt(double(fan));
}

}  // namespace

Tensor kaiming_uniform(const Tensor& t, const KaimingOptions& o) {
  if (!fillable(t, "kaiming_uniform")) return t;
  const double bound = std::sqrt(3.0) * kaiming_std(t, o);
  return uniform(t, -bound, bound, o.gen);
}

Tensor kaiming_normal(const Tensor& t, const KaimingOptions& o) {
  if (!fillable(t, "kaiming_normal")) return t;
  return normal(t, 0.0, kaiming_std(t, o), o.gen);
}

}  // namespace tg::nn::init
