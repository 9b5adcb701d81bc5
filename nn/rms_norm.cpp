// RMSNorm: the options' checks and the weight around tg::rms_norm.
#include "nn/rms_norm.h"

#include <algorithm>

namespace tg::nn {

RMSNorm::RMSNorm(const RMSNormOptions& o) : options_(o) {
  const Shape& s = o.normalized_shape;
  check<ValueError>(!s.empty() && std::all_of(s.begin(), s.end(), [](int64_t d) { return d > 0; }),
                    "RMSNorm: normalized_shape must be non-empty with sizes > 0, got {}", s);
  check<ValueError>(!o.eps || *o.eps > 0, "RMSNorm: eps must be > 0, got {}", o.eps.value_or(0));
  check<DTypeError>(is_floating(o.dtype), "RMSNorm: dtype must be f32 or f64, got {}", o.dtype);
  if (o.elementwise_affine) weight_ = register_parameter("weight", ones(s, o.dtype));
}

Variable RMSNorm::forward(const Variable& x) {
  const Shape& s = options_.normalized_shape;
  const int64_t k = int64_t(s.size());
  check<ShapeError>(x.dim() >= k && Shape(x.shape().end() - k, x.shape().end()) == s,
                    "RMSNorm: input {} must end in normalized_shape {}", x.shape(), s);
  return rms_norm(x, k, weight_, options_.eps);
}

}  // namespace tg::nn
