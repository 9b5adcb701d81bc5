#pragma once
#include "nn/layer.h"

namespace tg::nn {

/// Dense's options, PyTorch's Linear names.
struct DenseOptions {
  int64_t in_features = 0;   ///< 0 = inferred from the first input's last dim (PyTorch's LazyLinear)
  int64_t out_features = 0;  ///< the width of the output
  bool bias = true;          ///< whether there is a bias (out)
  DType dtype = f32;         ///< of the weight and bias
};

/// y = x Wᵀ + b.  x: (..., in_features) -> (..., out_features). Weights (out, in) and bias (out) start
/// uniform in ±1/√in_features, as PyTorch's Linear. Without in_features they are made on the first call
/// (build), from the input's last dim. ValueError for a negative in_features or a non-positive out_features.
class Dense : public Layer {
 public:
  /// ValueError as above; without in_features the weight waits for the first input.
  explicit Dense(const DenseOptions& options);
  /// ShapeError naming the input's shape unless it ends in in_features.
  Variable forward(const Variable& x) override;
  std::string type_name() const override { return "Dense"; }
  Variable weight() const { return weight_; }               ///< (out, in)
  const DenseOptions& options() const { return options_; }  ///< as constructed
  Variable bias() const { return bias_; }                   ///< (out); undefined without bias

 protected:
  // Makes the weight (out, in) and bias (out) for in = input_shape's last dim, drawing as the constructor would.
  void build(const Shape& input_shape) override;

 private:
  DenseOptions options_;
  Variable weight_, bias_;  // (out, in) and (out); bias_ undefined without bias
};

}  // namespace tg::nn
