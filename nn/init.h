#pragma once
// Weight initialisation, with PyTorch's formulas and fan computation (torch.nn.init). Each function fills
// the elements of `t` in place (through the shared storage, so `init::zeros(layer.weight().value())`
// re-initialises a parameter) and returns the same tensor. Draws come from `gen`, or from the default
// generator when null. Float tensors only (DTypeError); a tensor with no elements is left as it is.
#include "core/random.h"
#include "core/tensor.h"

namespace tg::nn::init {

/// fan_in = size(1)·receptive, fan_out = size(0)·receptive, receptive = Π shape[2:] (PyTorch's
/// _calculate_fan_in_and_fan_out). ValueError for fewer than 2 dims.
struct Fans {
  int64_t fan_in = 0;   ///< size(1)·receptive
  int64_t fan_out = 0;  ///< size(0)·receptive
};
Fans compute_fans(const Shape& shape);

enum class FanMode { fan_in, fan_out };
enum class Nonlinearity { linear, sigmoid, tanh, relu, leaky_relu };

/// PyTorch's calculate_gain: linear, sigmoid 1; tanh 5/3; relu √2; leaky_relu √(2/(1 + slope²)).
double calculate_gain(Nonlinearity nonlinearity, double negative_slope = 0.01);

/// U(low, high). ValueError when low > high.
Tensor uniform(const Tensor& t, double low = 0.0, double high = 1.0, Generator* gen = nullptr);
/// N(mean, std²). ValueError when std < 0.
Tensor normal(const Tensor& t, double mean = 0.0, double std = 1.0, Generator* gen = nullptr);
Tensor zeros(const Tensor& t);
Tensor ones(const Tensor& t);

/// xavier_uniform's and xavier_normal's options.
struct XavierOptions {
  double gain = 1.0;         ///< the scale, e.g. calculate_gain(...)
  Generator* gen = nullptr;  ///< draws from the default generator when null
};
/// Glorot & Bengio 2010: U(±a), a = gain·√(6 / (fan_in + fan_out)).
Tensor xavier_uniform(const Tensor& t, const XavierOptions& options = {});
/// Glorot & Bengio 2010: N(0, std²), std = gain·√(2 / (fan_in + fan_out)).
Tensor xavier_normal(const Tensor& t, const XavierOptions& options = {});

/// kaiming_uniform's and kaiming_normal's options.
struct KaimingOptions {
  double a = 0.0;  ///< negative slope of the leaky_relu that follows (used only for leaky_relu)
  FanMode mode = FanMode::fan_in;  ///< fan_in keeps the forward's variance, fan_out the backward's
  Nonlinearity nonlinearity = Nonlinearity::leaky_relu;  ///< the activation after the layer, for its gain
  Generator* gen = nullptr;  ///< draws from the default generator when null
};
/// He et al. 2015: U(±bound), bound = gain·√(3 / fan), gain = calculate_gain(nonlinearity, a).
Tensor kaiming_uniform(const Tensor& t, const KaimingOptions& options = {});
/// He et al. 2015: N(0, std²), std = gain / √fan.
Tensor kaiming_normal(const Tensor& t, const KaimingOptions& options = {});

}  // namespace tg::nn::init
