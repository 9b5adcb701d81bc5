#pragma once
// Element-wise non-linearities and softmax as layers, for Sequential stacks; each is a thin wrapper over
// the differentiable function of the same name (autograd/functions.h). No parameters.
#include "nn/layer.h"

namespace tg::nn {

/// max(x, 0).  Any shape.
class ReLU : public Layer {
 public:
  Variable forward(const Variable& x) override { return relu(x); }
  std::string type_name() const override { return "ReLU"; }
};

struct GELUOptions {
  enum class Approximate { none, tanh };
  Approximate approximate = Approximate::none;  ///< none: x·Φ(x) with erf; tanh: the tanh approximation
};

/// GELU (Hendrycks & Gimpel 2016), as torch.nn.GELU(approximate=...).  Any shape.
class GELU : public Layer {
 public:
  explicit GELU(const GELUOptions& options = {}) : options_(options) {}
  Variable forward(const Variable& x) override;
  std::string type_name() const override { return "GELU"; }

 private:
  GELUOptions options_;
};

/// tanh(x).  Any shape.
class Tanh : public Layer {
 public:
  Variable forward(const Variable& x) override { return tanh(x); }
  std::string type_name() const override { return "Tanh"; }
};

/// 1 / (1 + e^-x).  Any shape.
class Sigmoid : public Layer {
 public:
  Variable forward(const Variable& x) override { return sigmoid(x); }
  std::string type_name() const override { return "Sigmoid"; }
};

/// x·σ(x) (SiLU, Elfwing et al. 2017), as torch.nn.SiLU.  Any shape.
class SiLU : public Layer {
 public:
  Variable forward(const Variable& x) override { return silu(x); }
  std::string type_name() const override { return "SiLU"; }
};

/// Softmax along `dim` (negative counts from the end); IndexError from forward when dim is out of range.
class Softmax : public Layer {
 public:
  explicit Softmax(int64_t dim) : dim_(dim) {}
  Variable forward(const Variable& x) override { return softmax(x, dim_); }
  std::string type_name() const override { return "Softmax"; }
  int64_t dim() const { return dim_; }

 private:
  int64_t dim_;
};

}  // namespace tg::nn
