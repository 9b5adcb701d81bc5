// Sliding windows (core/conv.h): the geometry and its checks; im2col, col2im and max pooling's argmax check
// their operands, allocate, and run in the kernel room (core/cpu/im2col.cpp).
#include "core/conv.h"

#include "core/cpu/kernels.h"
#include "core/kernel_util.h"

namespace tg {
namespace {

// One output size: PyTorch's pooling_output_shape_pad_lr (floor division of a non-negative numerator).
int64_t output_size(int64_t in, int64_t k, int64_t s, int64_t p, int64_t p_end, int64_t d, bool ceil_mode) {
  const int64_t span = in + p + p_end - d * (k - 1) - 1;
  if (span < 0) return 0;
  int64_t out = (span + (ceil_mode ? s - 1 : 0)) / s + 1;
  if (ceil_mode && (out - 1) * s >= in + p) --out;
  return out;
}

// The kernels' view of N images of C planes under the window.
cpu::Window2d geometry(const Window& w, int64_t N, int64_t C) {
  return {N, C, w.input[0], w.input[1], w.kernel[0], w.kernel[1], w.stride[0], w.stride[1], w.padding[0],
          w.padding[1], w.dilation[0], w.dilation[1], w.output[0], w.output[1]};
}

// ShapeError unless x is (N, C, input...) for the window.
void check_image(const Tensor& x, const Window& w, const char* op) {
  detail::check_defined(x, op);
  check<ShapeError>(x.dim() == 4 && x.size(2) == w.input[0] && x.size(3) == w.input[1],
                    "{}: input {} must be (N, C, {}, {})", op, x.shape(), w.input[0], w.input[1]);
}

}  // namespace

std::string window_dims(const std::array<int64_t, 2>& a, int n) {
  return n == 1 ? fmt::format("{}", a[1]) : fmt::format("({}, {})", a[0], a[1]);
}

Window window(const char* op, const Shape& input, const WindowSpec& s) {
  const int n = s.spatial_dims;
  auto positive = [](const std::array<int64_t, 2>& a) { return a[0] >= 1 && a[1] >= 1; };
  check<ValueError>(positive(s.kernel), "{}: kernel_size must be >= 1, got {}", op, window_dims(s.kernel, n));
  check<ValueError>(positive(s.stride), "{}: stride must be >= 1, got {}", op, window_dims(s.stride, n));
  check<ValueError>(positive(s.dilation), "{}: dilation must be >= 1, got {}", op, window_dims(s.dilation, n));
  check<ValueError>(s.padding[0] >= 0 && s.padding[1] >= 0 && s.padding_end[0] >= 0 && s.padding_end[1] >= 0,
                    "{}: padding must be >= 0, got {}", op, window_dims(s.padding, n));
  check<ShapeError>(int64_t(input.size()) >= n, "{}: input {} has fewer than {} spatial dims", op, input, n);
  Window w{};
  w.input = {n == 1 ? 1 : input[input.size() - 2], input.back()};
  w.kernel = s.kernel, w.stride = s.stride, w.padding = s.padding, w.dilation = s.dilation;
  std::array<int64_t, 2> padded{}, spans{};
  for (int d = 0; d < 2; ++d) {
    padded[d] = w.input[d] + s.padding[d] + s.padding_end[d];
    spans[d] = s.dilation[d] * (s.kernel[d] - 1) + 1;
    w.output[d] = output_size(w.input[d], s.kernel[d], s.stride[d], s.padding[d], s.padding_end[d], s.dilation[d],
                              s.ceil_mode);
  }
  check<ShapeError>(spans[0] <= padded[0] && spans[1] <= padded[1],
                    "{}: kernel {} (dilated {}) is larger than the padded input {} of input {}", op,
                    window_dims(s.kernel, n), window_dims(spans, n), window_dims(padded, n), input);
  return w;
}

Tensor im2col(const Tensor& x, const Window& w) {
  check_image(x, w, "im2col");
  const Tensor xc = x.contiguous();
  Tensor col = empty({x.size(0), x.size(1) * w.kernel[0] * w.kernel[1], w.output[0] * w.output[1]}, x.dtype());
  detail::dispatch_float(x.dtype(), "im2col", [&](auto z) {
    using T = decltype(z);
    cpu::im2col(xc.data<T>(), geometry(w, x.size(0), x.size(1)), col.data<T>());
  });
  return col;
}

Tensor col2im(const Tensor& col, int64_t C, const Window& w) {
  detail::check_defined(col, "col2im");
  const int64_t rows = C * w.kernel[0] * w.kernel[1], L = w.output[0] * w.output[1];
  check<ShapeError>(col.dim() == 3 && col.size(1) == rows && col.size(2) == L,
                    "col2im: columns {} must be (N, {}, {}) for {} channels", col.shape(), rows, L, C);
  const Tensor cc = col.contiguous();
  Tensor x = zeros({col.size(0), C, w.input[0], w.input[1]}, col.dtype());
  detail::dispatch_float(col.dtype(), "col2im", [&](auto z) {
    using T = decltype(z);
    cpu::col2im_add(cc.data<T>(), geometry(w, col.size(0), C), x.data<T>());
  });
  return x;
}

Tensor max_pool_indices(const Tensor& x, const Window& w) {
  check_image(x, w, "max_pool");
  const Tensor xc = x.contiguous();
  Tensor idx = empty({x.size(0), x.size(1), w.output[0], w.output[1]}, i64);
  detail::dispatch_float(x.dtype(), "max_pool", [&](auto z) {
    using T = decltype(z);
    cpu::max_pool_argmax(xc.data<T>(), geometry(w, x.size(0), x.size(1)), idx.data<int64_t>());
  });
  return idx;
}

}  // namespace tg
