#pragma once
// Sliding windows over the last two dims of (N, C, H, W) tensors, the array side of convolution and pooling:
// a window's geometry (PyTorch's output-size formula and its checks), im2col and its adjoint col2im, and max
// pooling's argmax. autograd/functions/conv.cpp and pool.cpp make them differentiable; 1-d ops are the same
// windows with height 1.
#include <array>
#include <string>

#include "core/tensor.h"

namespace tg {

/// A window as a conv or pool is given it, each pair (height, width). A 1-d window (spatial_dims 1) uses the
/// width entries only and leaves the height ones at kernel 1, stride 1, padding 0, dilation 1.
struct WindowSpec {
  int spatial_dims = 2;                     ///< 2 for a 2-d op, 1 for a 1-d one
  std::array<int64_t, 2> kernel{1, 1};       ///< the window's size
  std::array<int64_t, 2> stride{1, 1};       ///< the step between windows
  std::array<int64_t, 2> padding{0, 0};      ///< before the first row / column
  std::array<int64_t, 2> padding_end{0, 0};  ///< after the last row / column
  std::array<int64_t, 2> dilation{1, 1};     ///< spacing between the window's taps
  bool ceil_mode = false;  ///< round the output size up (pooling), as PyTorch
};

/// A window placed over an input of spatial size `input` (height, width), with its output size.
struct Window {
  std::array<int64_t, 2> input;     ///< the input's spatial size
  std::array<int64_t, 2> kernel;    ///< the window's size
  std::array<int64_t, 2> stride;    ///< the step between windows
  std::array<int64_t, 2> padding;   ///< before the first row / column
  std::array<int64_t, 2> dilation;  ///< spacing between the window's taps
  std::array<int64_t, 2> output;    ///< the output's spatial size
};

/// A (height, width) pair for messages in an op's own dims: "(3, 5)", or "5" for a 1-d op.
std::string window_dims(const std::array<int64_t, 2>& pair, int spatial_dims);

/// The window of `spec` over the last two dims of `input` (height 1 for a 1-d spec): per dim,
/// output = ⌊(input + padding + padding_end - dilation·(kernel - 1) - 1) / stride⌋ + 1, rounded up instead with
/// ceil_mode, where a last window that would start in the end padding is dropped (PyTorch's
/// pooling_output_shape). ValueError naming `op` for kernel, stride or dilation < 1 or a negative padding;
/// ShapeError naming `op` and the input's shape when the dilated kernel is larger than the padded input.
Window window(const char* op, const Shape& input, const WindowSpec& spec);

/// x (N, C, H, W) -> columns (N, C·kH·kW, H_out·W_out): entry ((c·kH + i)·kW + j, y·W_out + x) of image n is
/// x[n, c, y·stride_h - pad_h + i·dilation_h, x·stride_w - pad_w + j·dilation_w], 0 on padding, so that a
/// convolution is one matrix product per image. f32 or f64; ShapeError unless x is (N, C, w.input...).
Tensor im2col(const Tensor& x, const Window& w);
/// The adjoint of im2col: columns (N, C·kH·kW, H_out·W_out) -> (N, C, H, W), each entry added into the
/// position im2col read it from (entries on padding dropped). ShapeError when col does not fit C and w.
Tensor col2im(const Tensor& col, int64_t C, const Window& w);
/// Max pooling's argmax: i64 (N, C, H_out, W_out), the flat index into x's row-major (N, C, H, W) elements of
/// each window's largest input (the first among ties, a NaN winning, as PyTorch; never padding). Every
/// window must hold an input (PyTorch's padding <= kernel / 2 ensures it). ShapeError as im2col.
Tensor max_pool_indices(const Tensor& x, const Window& w);

}  // namespace tg
