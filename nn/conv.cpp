// Conv1d, Conv2d and ConvTranspose2d: parameters and their checks; the computation is tg::conv1d / conv2d /
// conv_transpose2d (autograd/functions/conv.cpp).
#include "nn/conv.h"

#include <cmath>

#include "nn/init.h"

namespace tg::nn {
namespace {

// The sizes every convolution layer checks at construction, each pair (height, width); 1-d layers pass
// height 1 (and print their width only).
struct ConvSizes {
  const char* layer;
  int spatial_dims;
  int64_t in_channels, out_channels, groups;
  std::array<int64_t, 2> kernel, stride, dilation, padding;
};

void check_sizes(const ConvSizes& s, DType dtype) {
  check<ValueError>(s.in_channels > 0 && s.out_channels > 0,
                    "{}: in_channels and out_channels must be > 0, got {} and {}", s.layer, s.in_channels,
                    s.out_channels);
  check<ValueError>(s.groups >= 1 && s.in_channels % s.groups == 0 && s.out_channels % s.groups == 0,
                    "{}: in_channels {} and out_channels {} must be divisible by groups {}", s.layer, s.in_channels,
                    s.out_channels, s.groups);
  auto at_least = [&](const std::array<int64_t, 2>& a, int64_t lo, const char* what) {
    check<ValueError>(a[0] >= lo && a[1] >= lo, "{}: {} must be >= {}, got {}", s.layer, what, lo,
                      window_dims(a, s.spatial_dims));
  };
  at_least(s.kernel, 1, "kernel_size");
  at_least(s.stride, 1, "stride");
  at_least(s.dilation, 1, "dilation");
  at_least(s.padding, 0, "padding");
  check<DTypeError>(is_floating(dtype), "{}: dtype must be f32 or f64, got {}", s.layer, dtype);
}

void check_padding_mode(const char* layer, PaddingMode mode, const std::array<int64_t, 2>& stride, int n) {
  check<ValueError>(mode != PaddingMode::same || (stride[0] == 1 && stride[1] == 1),
                    "{}: padding 'same' is not supported for strided convolutions, got stride {}", layer,
                    window_dims(stride, n));
}

// PyTorch's _ConvNd.reset_parameters: kaiming_uniform(a = √5) is uniform in ±1/√fan_in, and the bias takes
// the same bound.
Tensor init_weight(const Tensor& w) { return init::kaiming_uniform(w, {.a = std::sqrt(5.0)}); }
Tensor init_bias(const Tensor& w, int64_t size) {
  const double bound = 1.0 / std::sqrt(double(init::compute_fans(w.shape()).fan_in));
  return init::uniform(empty({size}, w.dtype()), -bound, bound);
}

}  // namespace

Conv2d::Conv2d(const Conv2dOptions& o) : options_(o) {
  const std::array<int64_t, 2> kernel = {o.kernel_size.h, o.kernel_size.w}, stride = {o.stride.h, o.stride.w};
  check_sizes({"Conv2d", 2, o.in_channels, o.out_channels, o.groups, kernel, stride, {o.dilation.h, o.dilation.w},
               {o.padding.size.h, o.padding.size.w}},
              o.dtype);
  check_padding_mode("Conv2d", o.padding.mode, stride, 2);
  Tensor w = empty({o.out_channels, o.in_channels / o.groups, kernel[0], kernel[1]}, o.dtype);
  weight_ = register_parameter("weight", init_weight(w));
  if (o.bias) bias_ = register_parameter("bias", init_bias(w, o.out_channels));
}

// x: (N, C_in, H, W) -> (N, C_out, H_out, W_out)
Variable Conv2d::forward(const Variable& x) {
  const Conv2dOptions& o = options_;
  return conv2d(x, weight_, bias_,
                {.stride = o.stride, .padding = o.padding, .dilation = o.dilation, .groups = o.groups});
}

Conv1d::Conv1d(const Conv1dOptions& o) : options_(o) {
  const std::array<int64_t, 2> stride = {1, o.stride};
  check_sizes({"Conv1d", 1, o.in_channels, o.out_channels, o.groups, {1, o.kernel_size}, stride, {1, o.dilation},
               {0, o.padding.size}},
              o.dtype);
  check_padding_mode("Conv1d", o.padding.mode, stride, 1);
  Tensor w = empty({o.out_channels, o.in_channels / o.groups, o.kernel_size}, o.dtype);
  weight_ = register_parameter("weight", init_weight(w));
  if (o.bias) bias_ = register_parameter("bias", init_bias(w, o.out_channels));
}

// x: (N, C_in, L) -> (N, C_out, L_out)
Variable Conv1d::forward(const Variable& x) {
  const Conv1dOptions& o = options_;
  return conv1d(x, weight_, bias_,
                {.stride = o.stride, .padding = o.padding, .dilation = o.dilation, .groups = o.groups});
}

ConvTranspose2d::ConvTranspose2d(const ConvTranspose2dOptions& o) : options_(o) {
  const std::array<int64_t, 2> kernel = {o.kernel_size.h, o.kernel_size.w}, stride = {o.stride.h, o.stride.w},
                               dilation = {o.dilation.h, o.dilation.w};
  check_sizes({"ConvTranspose2d", 2, o.in_channels, o.out_channels, o.groups, kernel, stride, dilation,
               {o.padding.h, o.padding.w}},
              o.dtype);
  const Size2 extra = o.output_padding;
  check<ValueError>(extra.h >= 0 && extra.w >= 0 && (extra.h < stride[0] || extra.h < dilation[0]) &&
                        (extra.w < stride[1] || extra.w < dilation[1]),
                    "ConvTranspose2d: output_padding ({}, {}) must be >= 0 and smaller than stride or dilation",
                    extra.h, extra.w);
  Tensor w = empty({o.in_channels, o.out_channels / o.groups, kernel[0], kernel[1]}, o.dtype);
  weight_ = register_parameter("weight", init_weight(w));
  if (o.bias) bias_ = register_parameter("bias", init_bias(w, o.out_channels));
}

// x: (N, C_in, H, W) -> (N, C_out, H_out, W_out)
Variable ConvTranspose2d::forward(const Variable& x) {
  const ConvTranspose2dOptions& o = options_;
  return conv_transpose2d(x, weight_, bias_,
                          {.stride = o.stride, .padding = o.padding, .output_padding = o.output_padding,
                           .groups = o.groups, .dilation = o.dilation});
}

}  // namespace tg::nn
