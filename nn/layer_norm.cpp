// LayerNorm: the fused tg::layer_norm over the trailing dims normalized_shape (two-pass statistics in double,
// so rows with a large mean and a tiny variance stay exact).
#include "nn/layer_norm.h"

#include <algorithm>

namespace tg::nn {

LayerNorm::LayerNorm(const LayerNormOptions& o) : options_(o) {
  const Shape& s = o.normalized_shape;
  check<ValueError>(!s.empty() && std::all_of(s.begin(), s.end(), [](int64_t n) { return n > 0; }),
                    "LayerNorm: normalized_shape must be non-empty with sizes > 0, got {}", s);
  check<ValueError>(o.eps >= 0, "LayerNorm: eps must be >= 0, got {}", o.eps);
  check<DTypeError>(is_floating(o.dtype), "LayerNorm: dtype must be f32 or f64, got {}", o.dtype);
  if (o.elementwise_affine) {
    weight_ = register_parameter("weight", ones(s, o.dtype));
    bias_ = register_parameter("bias", zeros(s, o.dtype));
  }
}

// x: (..., *normalized_shape) -> same shape
Variable LayerNorm::forward(const Variable& x) {
  const Shape& s = options_.normalized_shape;
  const bool fits = x.dim() >= int64_t(s.size()) && Shape(x.shape().end() - s.size(), x.shape().end()) == s;
  check<ShapeError>(fits, "LayerNorm: input {} must end in normalized_shape {}", x.shape(), s);
  return layer_norm(x, s, weight_, bias_, options_.eps);
}

}  // namespace tg::nn
