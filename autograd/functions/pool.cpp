// Pooling, composed of recorded ops, so that each gradient (and its own gradient) comes from them: max pooling
// picks each window's argmax (core's max_pool_indices) and gathers it with index_select, whose gradient adds
// dy back at those places; average pooling sums im2col's columns and divides by PyTorch's divisors; adaptive
// average pooling multiplies by averaging matrices, one per spatial dim (a window's mean is separable).
#include <algorithm>

#include "autograd/functions/images.h"

namespace tg {
namespace {

// The window of a pool over x, with PyTorch's limit padding <= kernel_size / 2 (every window then holds an
// input, so max pooling never picks padding).
Window pool_window(const char* op, const Variable& x, const WindowSpec& s) {
  const Window w = window(op, x.shape(), s);
  check<ValueError>(s.padding[0] <= s.kernel[0] / 2 && s.padding[1] <= s.kernel[1] / 2,
                    "{}: padding {} must be at most half of kernel_size {}", op,
                    window_dims(s.padding, s.spatial_dims), window_dims(s.kernel, s.spatial_dims));
  check<ShapeError>(w.input[0] >= 1 && w.input[1] >= 1, "{}: input {} has no elements to pool", op, x.shape());
  return w;
}

// y[n, c, i, j] = x at the window's argmax: one gather over x's flat elements.
Variable max_pool(const char* op, const char* layout, const Variable& x, const WindowSpec& s) {
  const Variable images = detail::as_images(op, layout, x, s.spatial_dims);
  const Tensor idx = max_pool_indices(images.value(), pool_window(op, x, s));
  const Variable y = index_select(images.reshape({-1}), 0, idx.reshape({-1})).reshape(idx.shape());
  return detail::from_images(y, x, s.spatial_dims);
}

// PyTorch's avg_pool divisor of each output position along one dim: the window's size within the padded input
// (count_include_pad), or within the input.
std::vector<int64_t> divisors(const Window& w, int d, bool count_include_pad) {
  std::vector<int64_t> out(size_t(w.output[d]));
  for (int64_t o = 0; o < w.output[d]; ++o) {
    const int64_t start = o * w.stride[d] - w.padding[d];
    const int64_t end = std::min(start + w.kernel[d], w.input[d] + w.padding[d]);
    out[size_t(o)] = count_include_pad ? end - start : std::min(end, w.input[d]) - std::max<int64_t>(start, 0);
  }
  return out;
}

// y = Σ window / divisor, over im2col's columns of each channel.
Variable avg_pool(const char* op, const char* layout, const Variable& x, const WindowSpec& s, bool count_include_pad) {
  const Variable images = detail::as_images(op, layout, x, s.spatial_dims);
  const Window w = pool_window(op, x, s);
  const int64_t N = images.size(0), C = images.size(1), taps = w.kernel[0] * w.kernel[1];
  const Variable sums = sum(im2col(images, w).reshape({N, C, taps, w.output[0] * w.output[1]}), {2})
                            .reshape({N, C, w.output[0], w.output[1]});
  const std::vector<int64_t> rows = divisors(w, 0, count_include_pad), cols = divisors(w, 1, count_include_pad);
  std::vector<double> div;
  for (int64_t r : rows)
    for (int64_t c : cols) div.push_back(double(r * c));
  const bool uniform = std::all_of(div.begin(), div.end(), [&](double v) { return v == div[0]; });
  const Variable y = uniform ? sums / div[0] : sums / Variable(tensor(div, {w.output[0], w.output[1]}, x.dtype()));
  return detail::from_images(y, x, s.spatial_dims);
}

// (out, in): row i holds 1/n on the n inputs of PyTorch's adaptive window i, [⌊i·in/out⌋, ⌈(i+1)·in/out⌉).
Tensor averaging_matrix(int64_t out, int64_t in, DType dtype) {
  std::vector<double> m(size_t(out * in), 0.0);
  for (int64_t i = 0; i < out; ++i) {
    const int64_t start = i * in / out, end = ((i + 1) * in + out - 1) / out;
    for (int64_t j = start; j < end; ++j) m[size_t(i * in + j)] = 1.0 / double(end - start);
  }
  return tensor(m, {out, in}, dtype);
}

// y = A_h · x · A_wᵀ per plane (the height product only for 2-d).
Variable adaptive_avg_pool(const char* op, const char* layout, const Variable& x, std::array<int64_t, 2> out, int n) {
  const Variable images = detail::as_images(op, layout, x, n);
  check<ValueError>(out[0] >= 1 && out[1] >= 1, "{}: output_size must be >= 1, got {}", op, window_dims(out, n));
  const int64_t H = images.size(2), W = images.size(3);
  check<ShapeError>(H >= 1 && W >= 1, "{}: input {} has no elements to pool", op, x.shape());
  Variable y = matmul(images, Variable(averaging_matrix(out[1], W, x.dtype()).mT()));
  if (n == 2) y = matmul(Variable(averaging_matrix(out[0], H, x.dtype())), y);
  return detail::from_images(y, x, n);
}

}  // namespace

Variable max_pool2d(const Variable& x, const MaxPool2dFuncOptions& o) {
  const Size2 stride = o.stride.value_or(o.kernel_size);
  return max_pool("max_pool2d", "(N, C, H, W)", x,
                  {.kernel = {o.kernel_size.h, o.kernel_size.w}, .stride = {stride.h, stride.w},
                   .padding = {o.padding.h, o.padding.w}, .padding_end = {o.padding.h, o.padding.w},
                   .dilation = {o.dilation.h, o.dilation.w}, .ceil_mode = o.ceil_mode});
}

Variable max_pool1d(const Variable& x, const MaxPool1dFuncOptions& o) {
  return max_pool("max_pool1d", "(N, C, L)", x,
                  {.spatial_dims = 1, .kernel = {1, o.kernel_size}, .stride = {1, o.stride.value_or(o.kernel_size)},
                   .padding = {0, o.padding}, .padding_end = {0, o.padding}, .dilation = {1, o.dilation},
                   .ceil_mode = o.ceil_mode});
}

Variable avg_pool2d(const Variable& x, const AvgPool2dFuncOptions& o) {
  const Size2 stride = o.stride.value_or(o.kernel_size);
  return avg_pool("avg_pool2d", "(N, C, H, W)", x,
                  {.kernel = {o.kernel_size.h, o.kernel_size.w}, .stride = {stride.h, stride.w},
                   .padding = {o.padding.h, o.padding.w}, .padding_end = {o.padding.h, o.padding.w},
                   .ceil_mode = o.ceil_mode},
                  o.count_include_pad);
}

Variable avg_pool1d(const Variable& x, const AvgPool1dFuncOptions& o) {
  return avg_pool("avg_pool1d", "(N, C, L)", x,
                  {.spatial_dims = 1, .kernel = {1, o.kernel_size}, .stride = {1, o.stride.value_or(o.kernel_size)},
                   .padding = {0, o.padding}, .padding_end = {0, o.padding}, .ceil_mode = o.ceil_mode},
                  o.count_include_pad);
}

Variable adaptive_avg_pool2d(const Variable& x, Size2 output_size) {
  return adaptive_avg_pool("adaptive_avg_pool2d", "(N, C, H, W)", x, {output_size.h, output_size.w}, 2);
}

Variable adaptive_avg_pool1d(const Variable& x, int64_t output_size) {
  return adaptive_avg_pool("adaptive_avg_pool1d", "(N, C, L)", x, {1, output_size}, 1);
}

}  // namespace tg
