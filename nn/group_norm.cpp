// GroupNorm: the options' checks and parameters around tg::group_norm.
#include "nn/group_norm.h"

namespace tg::nn {

GroupNorm::GroupNorm(const GroupNormOptions& o) : options_(o) {
  check<ValueError>(o.num_groups > 0 && o.num_channels > 0, "GroupNorm: num_groups and num_channels must be > 0, got {} "
                    "and {}", o.num_groups, o.num_channels);
  check<ValueError>(o.num_channels % o.num_groups == 0, "GroupNorm: num_channels {} is not divisible by num_groups {}",
                    o.num_channels, o.num_groups);
  check<ValueError>(o.eps > 0, "GroupNorm: eps must be > 0, got {}", o.eps);
  check<DTypeError>(is_floating(o.dtype), "GroupNorm: dtype must be f32 or f64, got {}", o.dtype);
  if (o.affine) {
    weight_ = register_parameter("weight", ones({o.num_channels}, o.dtype));
    bias_ = register_parameter("bias", zeros({o.num_channels}, o.dtype));
  }
}

Variable GroupNorm::forward(const Variable& x) {
  check<ShapeError>(x.dim() >= 2, "GroupNorm: input must be (N, C, *), got {}", x.shape());
  check<ShapeError>(x.size(1) == options_.num_channels, "GroupNorm: input {} has {} channels (dim 1), expected {}",
                    x.shape(), x.size(1), options_.num_channels);
  return group_norm(x, options_.num_groups, weight_, bias_, options_.eps);
}

}  // namespace tg::nn
