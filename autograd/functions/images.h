#pragma once
// Internal to functions/conv.cpp and pool.cpp: their inputs as a batch of (N, C, H, W) images, so that 1-d and
// unbatched ops run the 2-d batched code and keep their own shapes in messages. Not installed API.
#include "autograd/functions.h"

namespace tg::detail {

/// x as (N, C, H, W): an unbatched input (one dim fewer) gets N = 1, a 1-d one (spatial_dims 1) H = 1.
/// ShapeError naming op and `layout` ("(N, C, H, W)") for any other rank.
inline Variable as_images(const char* op, const char* layout, const Variable& x, int spatial_dims) {
  check<ShapeError>(x.dim() == spatial_dims + 1 || x.dim() == spatial_dims + 2,
                    "{}: input must be {} or unbatched without N, got {}", op, layout, x.shape());
  const Variable batched = x.dim() == spatial_dims + 1 ? x.unsqueeze(0) : x;
  return spatial_dims == 1 ? batched.unsqueeze(2) : batched;
}

/// Images y (N, C, H, W) back in the rank of the input x that as_images was given.
inline Variable from_images(const Variable& y, const Variable& x, int spatial_dims) {
  const Variable v = spatial_dims == 1 ? y.squeeze(2) : y;
  return x.dim() == spatial_dims + 1 ? v.squeeze(0) : v;
}

}  // namespace tg::detail
