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

/// GELU's options.
struct GELUOptions {
  /// The exact form (none) or the tanh approximation.
  enum class Approximate { none, tanh };
  Approximate approximate = Approximate::none;  ///< none: x·Φ(x) with erf; tanh: the tanh approximation
};

/// GELU (Hendrycks & Gimpel 2016), as torch.nn.GELU(approximate=...).  Any shape.
class GELU : public Layer {
 public:
  /// A GELU of the given form.
  explicit GELU(const GELUOptions& options = {}) : options_(options) {}
  Variable forward(const Variable& x) override;
  std::string type_name() const override { return "GELU"; }
  const GELUOptions& options() const { return options_; }  ///< as constructed

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

/// LeakyReLU's options.
struct LeakyReLUOptions {
  double negative_slope = 0.01;  ///< the slope for x < 0
};
/// x for x > 0, negative_slope·x otherwise, as torch.nn.LeakyReLU.  Any shape.
class LeakyReLU : public Layer {
 public:
  /// A LeakyReLU of the given slope.
  explicit LeakyReLU(const LeakyReLUOptions& options = {}) : options_(options) {}
  Variable forward(const Variable& x) override { return leaky_relu(x, options_.negative_slope); }
  std::string type_name() const override { return "LeakyReLU"; }
  const LeakyReLUOptions& options() const { return options_; }  ///< as constructed

 private:
  LeakyReLUOptions options_;
};

/// ELU's options.
struct ELUOptions {
  double alpha = 1.0;  ///< α, the value approached as x -> -∞ is -α
};
/// x for x > 0, α·(eˣ - 1) otherwise (Clevert et al. 2016), as torch.nn.ELU.  Any shape.
class ELU : public Layer {
 public:
  /// An ELU of the given α.
  explicit ELU(const ELUOptions& options = {}) : options_(options) {}
  Variable forward(const Variable& x) override { return elu(x, options_.alpha); }
  std::string type_name() const override { return "ELU"; }
  const ELUOptions& options() const { return options_; }  ///< as constructed

 private:
  ELUOptions options_;
};

/// scale·elu(x, α) with PyTorch's constants (Klambauer et al. 2017), as torch.nn.SELU.  Any shape.
class SELU : public Layer {
 public:
  Variable forward(const Variable& x) override { return selu(x); }
  std::string type_name() const override { return "SELU"; }
};

/// Softplus's options.
struct SoftplusOptions {
  double beta = 1.0;        ///< finite and nonzero
  double threshold = 20.0;  ///< x itself where beta·x > threshold
};
/// log(1 + e^{βx})/β, as torch.nn.Softplus.  Any shape.  ValueError from the constructor when beta is 0 or
/// not finite.
class Softplus : public Layer {
 public:
  /// ValueError when beta is 0 or not finite.
  explicit Softplus(const SoftplusOptions& options = {});
  Variable forward(const Variable& x) override { return softplus(x, options_.beta, options_.threshold); }
  std::string type_name() const override { return "Softplus"; }
  const SoftplusOptions& options() const { return options_; }  ///< as constructed

 private:
  SoftplusOptions options_;
};

/// Hardtanh's options.
struct HardtanhOptions {
  double min_val = -1.0;  ///< the lower limit
  double max_val = 1.0;   ///< the upper limit
};
/// x limited to [min_val, max_val], as torch.nn.Hardtanh.  Any shape.  ValueError from the constructor when
/// min_val > max_val.
class Hardtanh : public Layer {
 public:
  /// ValueError when min_val > max_val.
  explicit Hardtanh(const HardtanhOptions& options = {});
  Variable forward(const Variable& x) override { return hardtanh(x, options_.min_val, options_.max_val); }
  std::string type_name() const override { return "Hardtanh"; }
  const HardtanhOptions& options() const { return options_; }  ///< as constructed

 private:
  HardtanhOptions options_;
};

/// x·tanh(softplus(x)) (Misra 2019), as torch.nn.Mish.  Any shape.
class Mish : public Layer {
 public:
  Variable forward(const Variable& x) override { return mish(x); }
  std::string type_name() const override { return "Mish"; }
};

/// Softmax along `dim` (negative counts from the end); IndexError from forward when dim is out of range.
class Softmax : public Layer {
 public:
  /// Softmax along `dim` (checked at forward).
  explicit Softmax(int64_t dim) : dim_(dim) {}
  Variable forward(const Variable& x) override { return softmax(x, dim_); }
  std::string type_name() const override { return "Softmax"; }
  int64_t dim() const { return dim_; }  ///< the dim it normalises along

 private:
  int64_t dim_;
};

}  // namespace tg::nn
