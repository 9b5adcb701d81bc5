// vector_norm, composed of core ops: each line is scaled by its largest |x| before the powers (as
// optim/clip.cpp's clip_grad_norm does), so that a norm that fits in the dtype is computed without overflow or
// underflow in between.
#include <cmath>

#include "core/kernel_util.h"
#include "core/ops.h"

namespace tg {

Tensor vector_norm(const Tensor& x, double ord, const std::vector<int64_t>& dims, bool keepdim) {
  detail::check_defined(x, "vector_norm");
  check<DTypeError>(is_floating(x.dtype()), "vector_norm: expected a floating dtype (f32 or f64), got {}", x.dtype());
  check<ValueError>(ord >= 0 || ord == -INFINITY, "vector_norm: ord must be 0, > 0, inf or -inf, got {}", ord);
  const Tensor a = abs(x);
  const Tensor reduced = sum(a, dims, true);  // checks the dims; its shape is the keepdim result's
  const int64_t count = reduced.numel() ? x.numel() / reduced.numel() : 0;
  check<ValueError>(!std::isinf(ord) || count > 0 || reduced.numel() == 0,
                    "vector_norm: the {} norm over an empty line of {} has no identity", ord, x.shape());
  Tensor norm;
  if (ord == INFINITY) norm = amax(a, dims, true);
  else if (ord == -INFINITY) norm = amin(a, dims, true);
  else if (ord == 0) norm = sum(ne(x, 0.0), dims, true).to(x.dtype());
  else if (ord == 1 || count == 0) norm = reduced;  // a partial sum of |x| never exceeds the whole
  else {
    const Tensor m = amax(a, dims, true);
    const Tensor scale = where(logical_and(gt(m, 0.0), lt(m, INFINITY)), m, ones_like(m));  // 1 for 0, inf, NaN
    const Tensor r = a / scale;
    norm = scale * (ord == 2 ? sqrt(sum(r * r, dims, true)) : pow(sum(pow(r, ord), dims, true), 1 / ord));
  }
  return keepdim ? norm : sum(norm, dims, false);  // a sum over the size-1 dims drops them, exactly
}

}  // namespace tg
