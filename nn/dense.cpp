// Dense (PyTorch's Linear): tg::linear, one op for the product with the transposed weight view (no copy:
// GEMM takes the transpose flag) and the bias.
#include "nn/dense.h"

#include <cmath>

#include "nn/init.h"

namespace tg::nn {

// PyTorch's reset_parameters: kaiming_uniform(a = √5) gives bound = gain·√(3/in) with
// gain = √(2/(1+5)), i.e. exactly 1/√in_features; the bias takes the same bound.
Dense::Dense(const DenseOptions& o) : options_(o) {
  check<ValueError>(o.in_features > 0 && o.out_features > 0,
                    "Dense: in_features and out_features must be > 0, got {} and {}", o.in_features, o.out_features);
  check<DTypeError>(is_floating(o.dtype), "Dense: dtype must be f32 or f64, got {}", o.dtype);
  weight_ = register_parameter(
      "weight", init::kaiming_uniform(empty({o.out_features, o.in_features}, o.dtype), {.a = std::sqrt(5.0)}));
  if (o.bias) {
    const double bound = 1.0 / std::sqrt(double(o.in_features));
    bias_ = register_parameter("bias", init::uniform(empty({o.out_features}, o.dtype), -bound, bound));
  }
}

// x: (..., in) -> (..., out)
Variable Dense::forward(const Variable& x) {
  check<ShapeError>(x.dim() >= 1 && x.size(-1) == options_.in_features, "Dense: input {} must end in in_features {}",
                    x.shape(), options_.in_features);
  return linear(x, weight_, bias_);
}

}  // namespace tg::nn
