// Dense (PyTorch's Linear): tg::linear, one op for the product with the transposed weight view (no copy:
// GEMM takes the transpose flag) and the bias. Without in_features (LazyLinear) the parameters wait for build().
#include "nn/dense.h"

#include <cmath>

#include "nn/init.h"

namespace tg::nn {

Dense::Dense(const DenseOptions& o) : options_(o) {
  check<ValueError>(o.in_features >= 0 && o.out_features > 0,
                    "Dense: in_features must be >= 0 (0 = inferred) and out_features > 0, got {} and {}", o.in_features,
                    o.out_features);
  check<DTypeError>(is_floating(o.dtype), "Dense: dtype must be f32 or f64, got {}", o.dtype);
  if (o.in_features == 0) {
    defer_build();
  } else {
    ensure_built({o.in_features});
  }
}

// PyTorch's reset_parameters: kaiming_uniform(a = √5) gives bound = gain·√(3/in) with
// gain = √(2/(1+5)), i.e. exactly 1/√in_features; the bias takes the same bound.
void Dense::build(const Shape& input_shape) {
  check<ShapeError>(!input_shape.empty() && input_shape.back() > 0,
                    "Dense: cannot infer in_features from an input of shape {}", input_shape);
  const DenseOptions& o = options_;
  options_.in_features = input_shape.back();
  weight_ = register_parameter(
      "weight", init::kaiming_uniform(empty({o.out_features, o.in_features}, o.dtype), {.a = std::sqrt(5.0)}));
  if (o.bias) {
    const double bound = 1.0 / std::sqrt(double(o.in_features));
    bias_ = register_parameter("bias", init::uniform(empty({o.out_features}, o.dtype), -bound, bound));
  }
}

// x: (..., in) -> (..., out)
Variable Dense::forward(const Variable& x) {
  ensure_built(x.shape());  // for calls to forward() that bypass operator()
  check<ShapeError>(x.dim() >= 1 && x.size(-1) == options_.in_features, "Dense: input {} must end in in_features {}",
                    x.shape(), options_.in_features);
  return linear(x, weight_, bias_);
}

}  // namespace tg::nn
