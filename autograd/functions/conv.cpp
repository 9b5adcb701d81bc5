// Convolutions as im2col and matrix products (Chellapilla et al. 2006, "High performance convolutional neural
// networks for document processing"; PyTorch's CPU path): conv2d is a recorded im2col, one GEMM per image and
// group, and a bias add, so its gradients are those ops' own, dx = col2im(Wᵀ·dy), dW = Σ_n dy·colᵀ and
// db = Σ dy, which create_graph differentiates again. im2col and col2im are linear and each other's adjoint.
// conv1d is conv2d over height 1; conv_transpose2d is conv2d's input gradient: a product, then col2im.
#include "autograd/functions/images.h"

namespace tg {
namespace {

// What conv1d and conv2d pass to convolve, each pair (height, width), height trivial for 1-d.
struct ConvArgs {
  const char* op;
  const char* layout;         // the input's, for messages: "(N, C_in, H, W)"
  const char* weight_layout;  // "(C_out, C_in / groups, kH, kW)"
  int spatial_dims;
  std::array<int64_t, 2> stride, padding, dilation;
  PaddingMode mode;
  int64_t groups;
};

// ShapeError, DTypeError or ValueError for operands that do not fit together; images is x as (N, C, H, W).
void check_operands(const ConvArgs& a, const Variable& x, const Variable& images, const Variable& w,
                    const Variable& b) {
  check<ShapeError>(w.dim() == a.spatial_dims + 2, "{}: weight must be {}, got {}", a.op, a.weight_layout, w.shape());
  check<DTypeError>(x.dtype() == w.dtype() && (!b || b.dtype() == x.dtype()),
                    "{}: input, weight and bias must have one dtype, got {} and {}{}", a.op, x.dtype(), w.dtype(),
                    b ? fmt::format(" and {}", b.dtype()) : "");
  check<ValueError>(a.groups >= 1, "{}: groups must be >= 1, got {}", a.op, a.groups);
  const int64_t C_in = images.size(1), C_out = w.size(0);
  check<ShapeError>(C_in % a.groups == 0, "{}: in_channels {} of input {} are not divisible by groups {}", a.op, C_in,
                    x.shape(), a.groups);
  check<ShapeError>(C_out >= 1 && C_out % a.groups == 0,
                    "{}: out_channels {} of weight {} are not divisible by groups {}", a.op, C_out, w.shape(),
                    a.groups);
  check<ShapeError>(w.size(1) * a.groups == C_in,
                    "{}: input {} has {} channels, but weight {} with groups {} expects {}", a.op, x.shape(), C_in,
                    w.shape(), a.groups, w.size(1) * a.groups);
  check<ShapeError>(!b || (b.dim() == 1 && b.size(0) == C_out), "{}: bias must be (C_out) = ({}), got {}", a.op, C_out,
                    b.shape());
}

// The convolution's window over x: the kernel from the weight, padding from sizes or 'same' / 'valid'.
WindowSpec conv_spec(const ConvArgs& a, const Variable& w) {
  WindowSpec s{.spatial_dims = a.spatial_dims, .stride = a.stride, .dilation = a.dilation};
  s.kernel = {a.spatial_dims == 1 ? 1 : w.size(-2), w.size(-1)};
  if (a.mode == PaddingMode::same) {
    check<ValueError>(a.stride[0] == 1 && a.stride[1] == 1, "{}: padding 'same' needs stride 1, got {}", a.op,
                      window_dims(a.stride, a.spatial_dims));
    for (int d = 0; d < 2; ++d) {  // PyTorch's split: the odd one of the total at the end
      const int64_t total = a.dilation[d] * (s.kernel[d] - 1);
      s.padding[d] = total / 2, s.padding_end[d] = total - total / 2;
    }
  } else if (a.mode == PaddingMode::sizes) {
    s.padding = s.padding_end = a.padding;
  }
  return s;
}

// x ⊛ w + b: per image and group, Y (C_out / G, L) = W_g (C_out / G, C_in / G·kH·kW) @ col_g, L = H_out·W_out.
Variable convolve(const ConvArgs& a, const Variable& x, const Variable& w, const Variable& b) {
  const Variable images = detail::as_images(a.op, a.layout, x, a.spatial_dims);
  check_operands(a, x, images, w, b);
  const Window win = window(a.op, x.shape(), conv_spec(a, w));
  const int64_t N = images.size(0), G = a.groups, C_out = w.size(0), rows = w.numel() / C_out;
  const Variable col = im2col(images, win).reshape({N, G, rows, win.output[0] * win.output[1]});
  Variable y = matmul(w.reshape({G, C_out / G, rows}), col).reshape({N, C_out, win.output[0], win.output[1]});
  if (b) y = y + b.reshape({C_out, 1, 1});
  return detail::from_images(y, x, a.spatial_dims);
}

}  // namespace

// col = im2col(x).  It is linear: dx = col2im(dcol), its adjoint.
Variable im2col(const Variable& x, const Window& w) {
  const int64_t C = x.size(1);
  return record("im2col", tg::im2col(x.value(), w), {x}, [C, w](const Variable& dy, const Variable&) -> Grads {
    return {col2im(dy, C, w)};
  });
}

// x = col2im(col).  Linear: dcol = im2col(dx).
Variable col2im(const Variable& col, int64_t channels, const Window& w) {
  Tensor x = tg::col2im(col.value(), channels, w);
  return record("col2im", x, {col}, [w](const Variable& dy, const Variable&) -> Grads { return {im2col(dy, w)}; });
}

Variable conv2d(const Variable& x, const Variable& weight, const Variable& bias, const Conv2dFuncOptions& o) {
  return convolve({"conv2d", "(N, C_in, H, W)", "(C_out, C_in / groups, kH, kW)", 2, {o.stride.h, o.stride.w},
                   {o.padding.size.h, o.padding.size.w}, {o.dilation.h, o.dilation.w}, o.padding.mode, o.groups},
                  x, weight, bias);
}

Variable conv1d(const Variable& x, const Variable& weight, const Variable& bias, const Conv1dFuncOptions& o) {
  return convolve({"conv1d", "(N, C_in, L)", "(C_out, C_in / groups, k)", 1, {1, o.stride}, {0, o.padding.size},
                   {1, o.dilation}, o.padding.mode, o.groups},
                  x, weight, bias);
}

// y = col2im(Wᵀ·x) per image and group: conv2d's input gradient with x in dy's place, so that its own
// gradients are conv2d's forward (in x) and a product (in W).
Variable conv_transpose2d(const Variable& x, const Variable& w, const Variable& b,
                          const ConvTranspose2dFuncOptions& o) {
  const char* op = "conv_transpose2d";
  const Variable images = detail::as_images(op, "(N, C_in, H, W)", x, 2);
  check<ShapeError>(w.dim() == 4, "{}: weight must be (C_in, C_out / groups, kH, kW), got {}", op, w.shape());
  check<DTypeError>(x.dtype() == w.dtype() && (!b || b.dtype() == x.dtype()),
                    "{}: input, weight and bias must have one dtype, got {} and {}", op, x.dtype(), w.dtype());
  check<ValueError>(o.groups >= 1, "{}: groups must be >= 1, got {}", op, o.groups);
  const int64_t N = images.size(0), C_in = images.size(1), G = o.groups, C_out = w.size(1) * G;
  check<ShapeError>(w.size(0) == C_in && C_in % G == 0,
                    "{}: input {} has {} channels, but weight {} with groups {} expects {} (divisible by groups)", op,
                    x.shape(), C_in, w.shape(), G, w.size(0));
  check<ShapeError>(!b || (b.dim() == 1 && b.size(0) == C_out), "{}: bias must be (C_out) = ({}), got {}", op, C_out,
                    b.shape());
  const std::array<int64_t, 2> in = {images.size(2), images.size(3)}, k = {w.size(2), w.size(3)},
                               s = {o.stride.h, o.stride.w}, p = {o.padding.h, o.padding.w},
                               d = {o.dilation.h, o.dilation.w}, extra = {o.output_padding.h, o.output_padding.w};
  Shape out_size(2);
  for (int i = 0; i < 2; ++i) {
    check<ValueError>(extra[i] >= 0 && (extra[i] < s[i] || extra[i] < d[i]),
                      "{}: output_padding ({}, {}) must be >= 0 and smaller than stride or dilation", op, extra[0],
                      extra[1]);
    out_size[i] = (in[i] - 1) * s[i] - 2 * p[i] + d[i] * (k[i] - 1) + extra[i] + 1;
  }
  check<ShapeError>(out_size[0] >= 1 && out_size[1] >= 1, "{}: the output of input {} would be {}", op, x.shape(),
                    out_size);
  Window win = window(op, out_size, {.kernel = k, .stride = s, .padding = p, .padding_end = p, .dilation = d});
  win.output = in;  // exactly the input's positions, also where output_padding leaves a last one out of reach
  const int64_t rows = C_out / G * k[0] * k[1];
  const Variable col = matmul(w.reshape({G, C_in / G, rows}).mT(), images.reshape({N, G, C_in / G, in[0] * in[1]}));
  Variable y = col2im(col.reshape({N, G * rows, in[0] * in[1]}), C_out, win);
  if (b) y = y + b.reshape({C_out, 1, 1});
  return detail::from_images(y, x, 2);
}

}  // namespace tg
