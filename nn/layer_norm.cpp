// LayerNorm: the fused tg::layer_norm over the last dim (two-pass statistics in double, so rows with a
// large mean and a tiny variance stay exact).
#include "nn/layer_norm.h"

namespace tg::nn {

LayerNorm::LayerNorm(const LayerNormOptions& o) : options_(o) {
  check<ValueError>(o.normalized_shape > 0, "LayerNorm: normalized_shape must be > 0, got {}", o.normalized_shape);
  check<ValueError>(o.eps >= 0, "LayerNorm: eps must be >= 0, got {}", o.eps);
  check<DTypeError>(is_floating(o.dtype), "LayerNorm: dtype must be f32 or f64, got {}", o.dtype);
  if (o.elementwise_affine) {
    weight_ = register_parameter("weight", ones({o.normalized_shape}, o.dtype));
    bias_ = register_parameter("bias", zeros({o.normalized_shape}, o.dtype));
  }
}

// x: (..., normalized_shape) -> same shape
Variable LayerNorm::forward(const Variable& x) {
  check<ShapeError>(x.dim() >= 1 && x.size(-1) == options_.normalized_shape,
                    "LayerNorm: input {} must end in normalized_shape {}", x.shape(), options_.normalized_shape);
  return layer_norm(x, 1, weight_, bias_, options_.eps);
}

}  // namespace tg::nn
