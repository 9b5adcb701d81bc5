// Every differentiable function is a row here, checked against central finite differences in f64, with
// broadcast, transposed/strided and size-1 inputs; second derivatives for the core families.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>

#include "autograd/functions.h"
#include "autograd/gradcheck.h"

using namespace tg;

namespace {

using Inputs = std::vector<Variable>;
struct GradCase {
  const char* name;  // the op name given to record(), for the coverage test
  std::vector<Shape> shapes;
  GradFn fn;
  bool positive = false;  // draw inputs in [0.5, 1.5] (log, sqrt, pow, div)
  GradcheckOptions options = {};
};

// Inputs away from kinks (|x| >= 0.05), so that relu/abs/clamp/max are differentiable where probed.
Inputs random_inputs(const std::vector<Shape>& shapes, bool positive, uint64_t seed = 1) {
  Generator gen(seed);
  Inputs xs;
  for (const Shape& s : shapes) {
    Tensor t = positive ? rand(s, f64, &gen, 0.5, 1.5) : randn(s, f64, &gen);
    if (!positive) t = where(lt(abs(t), 0.05), t + 0.1, t);
    xs.emplace_back(t, true);
  }
  return xs;
}

Tensor mask_of(const Shape& s, uint64_t seed) {
  Generator gen(seed);
  return lt(rand(s, f64, &gen), 0.5);
}

const std::vector<GradCase>& cases() {
  using R = Reduction;
  static const std::vector<GradCase> k = {
      {"add", {{2, 3}, {3}}, [](const Inputs& x) { return x[0] + x[1]; }},
      {"sub", {{2, 1}, {1, 3}}, [](const Inputs& x) { return x[0] - x[1]; }},
      {"mul", {{2, 3}, {3}}, [](const Inputs& x) { return x[0] * x[1]; }},
      {"div", {{2, 3}, {2, 1}}, [](const Inputs& x) { return x[0] / x[1]; }, true},
      {"neg", {{4}}, [](const Inputs& x) { return -x[0]; }},
      {"exp", {{2, 3}}, [](const Inputs& x) { return exp(x[0]); }},
      {"log", {{2, 3}}, [](const Inputs& x) { return log(x[0]); }, true},
      {"sqrt", {{2, 3}}, [](const Inputs& x) { return sqrt(x[0]); }, true},
      {"rsqrt", {{2, 3}}, [](const Inputs& x) { return rsqrt(x[0]); }, true},
      {"abs", {{2, 3}}, [](const Inputs& x) { return abs(x[0]); }},
      {"tanh", {{3, 4}}, [](const Inputs& x) { return tanh(x[0]); }},
      {"sigmoid", {{3, 4}}, [](const Inputs& x) { return sigmoid(x[0]); }},
      {"erf", {{3, 4}}, [](const Inputs& x) { return erf(x[0]); }},
      {"relu", {{3, 4}}, [](const Inputs& x) { return relu(x[0]); }},
      {"masked_scale", {{3, 4}},
       [](const Inputs& x) { return masked_scale(x[0], pack_positive(mask_of({3, 4}, 10).to(f64)), 2.0); }},
      {"gelu", {{3, 4}}, [](const Inputs& x) { return gelu(x[0]); }},
      {"gelu", {{3, 4}}, [](const Inputs& x) { return gelu(x[0], true); }},
      // The fused backward ops, as the functions (x, dy) -> dx that run them (their gradgradcheck is the third
      // derivative of the forward op).
      {"tanh_backward", {{3, 4}, {3, 4}}, vjp([](const Inputs& x) { return tanh(x[0]); })},
      {"gelu_backward", {{3, 4}, {3, 4}}, vjp([](const Inputs& x) { return gelu(x[0]); })},
      {"pow", {{2, 3}}, [](const Inputs& x) { return pow(x[0], 3.0); }},
      {"pow", {{2, 3}}, [](const Inputs& x) { return pow(x[0], 2.0); }},
      {"pow", {{2, 3}}, [](const Inputs& x) { return pow(x[0], -1.5); }, true},
      {"pow_tensor", {{2, 3}, {3}}, [](const Inputs& x) { return pow(x[0], x[1]); }, true},
      {"clamp", {{3, 4}}, [](const Inputs& x) { return clamp(x[0], -0.5, 0.7); }},
      {"minimum", {{2, 3}, {3}}, [](const Inputs& x) { return minimum(x[0], x[1]); }},
      {"maximum", {{2, 3}, {2, 1}}, [](const Inputs& x) { return maximum(x[0], x[1]); }},
      {"where", {{2, 3}, {3}}, [](const Inputs& x) { return where(mask_of({2, 3}, 7), x[0], x[1]); }},
      // Mixed dtypes: an f32 operand promoted to f64, its gradient handed back in f32. A step of 1e-3 is seen
      // through f32's rounding (at most 2.4e-7 here) with an error below 1.2e-4, within rtol.
      {"to", {{2, 3}, {3}}, [](const Inputs& x) { return x[0] * to(x[1], f32); }, false, {.eps = 1e-3}},
      {"div", {{2, 3}, {3}}, [](const Inputs& x) { return x[0] / to(x[1], f32); }, true, {.eps = 1e-3}},
      {"where", {{2, 3}, {3}}, [](const Inputs& x) { return where(mask_of({2, 3}, 7), to(x[0], f32), x[1]); }, false,
       {.eps = 1e-3}},
      {"masked_fill", {{2, 3}}, [](const Inputs& x) { return masked_fill(x[0], mask_of({3}, 8), 2.0); }},
      {"silu", {{3, 4}}, [](const Inputs& x) { return silu(x[0]); }},
      // Activations and BCE (issue 25). Kinks (0, the hardtanh bounds, βx = threshold) are clear of the inputs;
      // tests/nn/activation_test.cpp pins the gradients on them.
      {"expm1", {{2, 3}}, [](const Inputs& x) { return expm1(x[0]); }},
      {"leaky_relu", {{3, 4}}, [](const Inputs& x) { return leaky_relu(x[0], 0.2); }},
      {"elu", {{3, 4}}, [](const Inputs& x) { return elu(x[0], 1.5); }},
      {"selu", {{3, 4}}, [](const Inputs& x) { return selu(x[0]); }},
      {"softplus", {{3, 4}}, [](const Inputs& x) { return softplus(x[0]); }},
      {"softplus", {{3, 4}}, [](const Inputs& x) { return softplus(x[0], 2.0, 1.5); }},  // linear above x = 0.75
      {"softplus", {{3, 4}}, [](const Inputs& x) { return softplus(x[0], -0.5); }},
      {"hardtanh", {{3, 4}}, [](const Inputs& x) { return hardtanh(x[0], -0.5, 0.7); }},
      {"mish", {{3, 4}}, [](const Inputs& x) { return mish(x[0]); }},
      {"binary_cross_entropy", {{2, 3}, {2, 3}},  // probabilities and soft targets, both with gradients
       [](const Inputs& x) { return binary_cross_entropy(sigmoid(x[0]), sigmoid(x[1])); }},
      {"sum", {{2, 3, 4}}, [](const Inputs& x) { return sum(x[0], {0, 2}); }},
      {"sum", {{2, 3}}, [](const Inputs& x) { return sum(x[0], {1}, true); }},
      {"mean", {{2, 3, 4}}, [](const Inputs& x) { return mean(x[0], {1}); }},
      {"mean", {{2, 3}}, [](const Inputs& x) { return mean(x[0]); }},
      {"var", {{3, 4}}, [](const Inputs& x) { return var(x[0], {1}); }},
      {"var", {{3, 4}}, [](const Inputs& x) { return var(x[0], {0}, 0, true); }},
      {"logsumexp", {{3, 4}}, [](const Inputs& x) { return logsumexp(x[0], {1}); }},
      {"amax", {{3, 4}}, [](const Inputs& x) { return amax(x[0], {1}); }},
      {"amin", {{3, 4}}, [](const Inputs& x) { return amin(x[0], {0}, true); }},
      {"max", {{3, 4}}, [](const Inputs& x) { return max(x[0], 1).values; }},
      {"min", {{3, 4}}, [](const Inputs& x) { return min(x[0], 0, true).values; }},
      {"reshape", {{2, 6}}, [](const Inputs& x) { return x[0].reshape({3, 4}) * x[0].reshape({3, 4}); }},
      {"transpose", {{2, 3}}, [](const Inputs& x) { return x[0].transpose(0, 1) * 2.0; }},
      {"permute", {{2, 3, 4}}, [](const Inputs& x) { return exp(x[0].permute({2, 0, 1})); }},
      {"slice", {{5, 3}}, [](const Inputs& x) { return x[0].slice(0, 1, 5, 2) * x[0].slice(0, -2, 5, 1); }},
      {"slice_backward", {{4, 3}}, [](const Inputs& x) { return x[0].slice(1, 0, 2); }},
      {"select", {{3, 4}}, [](const Inputs& x) { return x[0].select(1, -1) * 3.0; }},
      {"unsqueeze", {{3}}, [](const Inputs& x) { return x[0].unsqueeze(0) * x[0].unsqueeze(1); }},
      {"squeeze", {{3, 1}}, [](const Inputs& x) { return tanh(x[0].squeeze(1)); }},
      {"expand", {{3, 1}}, [](const Inputs& x) { return x[0].expand({2, 3, 4}) * 1.5; }},
      {"cat", {{2, 3}, {1, 3}}, [](const Inputs& x) { return cat({x[0], x[1]}, 0); }},
      {"stack", {{2, 3}, {2, 3}}, [](const Inputs& x) { return stack({x[0], x[1] * x[1]}, 1); }},
      {"split", {{2, 5}}, [](const Inputs& x) {  // pieces used out of order, one twice
         std::vector<Variable> p = split(x[0], {2, 3}, 1);
         return cat({p[1], p[0] * p[0], p[0]}, 1);
       }},
      {"split_piece", {{4, 3}}, [](const Inputs& x) { return split(x[0], {1, 2, 1}, 0)[1] * 3.0; }},  // others unused
      // Scans, layout and norms (issue 25; functions/scan.cpp, layout.cpp, vector_norm.cpp). cumprod at zeros and
      // the norms at 0 are tests/autograd/scan_ops_test.cpp's.
      {"cumsum", {{3, 4}}, [](const Inputs& x) { return cumsum(x[0], 1); }},
      {"cumsum", {{4, 3}}, [](const Inputs& x) { return cumsum(x[0].mT(), 0); }},  // strided
      {"cumprod", {{3, 4}}, [](const Inputs& x) { return cumprod(x[0], 1); }},
      {"cumprod", {{4, 3}}, [](const Inputs& x) { return cumprod(x[0].mT(), -2); }},
      {"flip", {{2, 3, 4}}, [](const Inputs& x) { return flip(x[0], {0, 2}) * x[0]; }},
      {"roll", {{3, 4}}, [](const Inputs& x) { return roll(x[0], {1, -5}, {0, 1}); }},
      {"roll", {{4, 3}}, [](const Inputs& x) { return roll(x[0].mT(), {2}); }},  // flattened, strided
      {"pad", {{2, 3, 4}}, [](const Inputs& x) { return pad(x[0], {1, 2, -1, 1}, PadMode::constant, 0.5); }},
      {"pad", {{2, 3, 4}}, [](const Inputs& x) { return pad(x[0], {3, 2, 2, 1}, PadMode::reflect); }},
      {"pad", {{2, 3, 4}}, [](const Inputs& x) { return pad(x[0], {2, -1, 0, 3}, PadMode::replicate); }},
      {"pad_backward", {{2, 3, 4}, {2, 6, 9}},
       vjp([](const Inputs& x) { return pad(x[0], {3, 2, 2, 1}, PadMode::reflect); })},
      {"repeat", {{2, 3}}, [](const Inputs& x) { return repeat(x[0], {2, 1, 3}); }},
      {"repeat", {{2, 3}}, [](const Inputs& x) { return tile(x[0], {2}) * 2.0; }},
      {"tril", {{2, 3, 4}}, [](const Inputs& x) { return tril(x[0], 1); }},
      {"triu", {{3, 4}}, [](const Inputs& x) { return triu(x[0].mT(), -1); }},
      {"vector_norm", {{3, 4}}, [](const Inputs& x) { return vector_norm(x[0]); }},
      {"vector_norm", {{3, 4}}, [](const Inputs& x) { return vector_norm(x[0], 1, {1}); }},
      {"vector_norm", {{2, 3, 4}}, [](const Inputs& x) { return vector_norm(x[0], 3, {0, 2}, true); }},
      {"vector_norm", {{3, 4}}, [](const Inputs& x) { return vector_norm(x[0], 0.5, {0}); }},
      {"vector_norm", {{3, 4}}, [](const Inputs& x) { return vector_norm(x[0], INFINITY, {1}); }},
      {"vector_norm", {{3, 4}}, [](const Inputs& x) { return vector_norm(x[0].mT(), -INFINITY); }},
      {"matmul", {{2, 5, 3}, {3, 4}}, [](const Inputs& x) { return matmul(x[0], x[1]); }},
      {"matmul", {{3, 5}, {3, 4}}, [](const Inputs& x) { return matmul(x[0].mT(), x[1]); }},  // strided view
      {"matmul", {{2, 1, 2, 3}, {3, 3, 2}}, [](const Inputs& x) { return matmul(x[0], x[1]); }},  // batch bcast
      {"matmul", {{3}, {3, 2}}, [](const Inputs& x) { return matmul(x[0], x[1]); }},
      {"matmul", {{2, 3}, {3}}, [](const Inputs& x) { return matmul(x[0], x[1]); }},
      {"matmul", {{3}, {3}}, [](const Inputs& x) { return matmul(x[0], x[1]); }},
      {"linear", {{2, 3, 4}, {5, 4}, {5}}, [](const Inputs& x) { return linear(x[0], x[1], x[2]); }},
      {"linear", {{4}, {5, 4}}, [](const Inputs& x) { return linear(x[0], x[1], Variable()); }},  // 1-D, no bias
      {"linear", {{4, 3}, {2, 4}, {2}}, [](const Inputs& x) { return linear(x[0].mT(), x[1], x[2]); }},  // strided x
      // Convolution and pooling (functions/conv.cpp, pool.cpp): the recorded im2col / col2im, and the compositions
      // with strides, padding (sizes, 'same' with an odd total), dilation, groups, unbatched and strided inputs.
      {"im2col", {{2, 3, 5, 6}}, [](const Inputs& x) {
         return im2col(x[0], window("im2col", x[0].shape(), {.kernel = {2, 3}, .stride = {2, 1}, .padding = {1, 0},
                                                             .padding_end = {1, 0}, .dilation = {1, 2}}));
       }},
      {"col2im", {{2, 12, 6}}, [](const Inputs& x) {  // the adjoint of the im2col above: (2, 3, 2·2, 6) -> (2, 3, 3, 4)
         return col2im(x[0], 3, window("col2im", {3, 4}, {.kernel = {2, 2}, .stride = {1, 2}, .padding = {0, 1},
                                                          .padding_end = {0, 1}}));
       }},
      {"conv2d", {{2, 3, 5, 5}, {4, 3, 3, 3}, {4}},
       [](const Inputs& x) { return conv2d(x[0], x[1], x[2], {.padding = 1}); }},
      {"conv2d", {{2, 2, 7, 6}, {3, 2, 2, 3}, {3}},
       [](const Inputs& x) { return conv2d(x[0], x[1], x[2], {.stride = 2, .padding = {1, 0}, .dilation = {1, 2}}); }},
      {"conv2d", {{1, 4, 5, 5}, {6, 2, 3, 3}},  // groups, no bias
       [](const Inputs& x) { return conv2d(x[0], x[1], Variable(), {.stride = {1, 2}, .groups = 2}); }},
      {"conv2d", {{1, 2, 5, 6}, {2, 2, 2, 4}, {2}},  // 'same' with odd totals (the extra row / column at the end)
       [](const Inputs& x) { return conv2d(x[0], x[1], x[2], {.padding = PaddingMode::same, .dilation = {3, 1}}); }},
      {"conv2d", {{3, 4, 4}, {2, 3, 2, 2}, {2}},  // unbatched, 'valid'
       [](const Inputs& x) { return conv2d(x[0], x[1], x[2], {.padding = PaddingMode::valid}); }},
      {"conv2d", {{4, 4, 1, 3}, {2, 3, 3, 3}},  // a permuted (strided) input
       [](const Inputs& x) { return conv2d(x[0].permute({2, 3, 0, 1}), x[1], Variable(), {.padding = 1}); }},
      {"conv1d", {{2, 3, 9}, {4, 3, 3}, {4}},
       [](const Inputs& x) { return conv1d(x[0], x[1], x[2], {.stride = 2, .padding = 1, .dilation = 2}); }},
      {"conv1d", {{2, 3, 6}, {3, 1, 2}}, [](const Inputs& x) {  // depthwise, 'same' with an even kernel
         return conv1d(x[0], x[1], Variable(), {.padding = PaddingMode::same, .groups = 3});
       }},
      {"conv_transpose2d", {{2, 4, 3, 3}, {4, 3, 3, 3}, {3}}, [](const Inputs& x) {
         return conv_transpose2d(x[0], x[1], x[2], {.stride = 2, .padding = 1, .output_padding = 1});
       }},
      {"conv_transpose2d", {{1, 4, 3, 2}, {4, 1, 2, 2}}, [](const Inputs& x) {
         return conv_transpose2d(x[0], x[1], Variable(), {.stride = {1, 2}, .groups = 2, .dilation = 2});
       }},
      {"col2im", {{2, 3, 5, 5}, {4, 3, 3, 3}, {4}, {2, 4, 3, 3}},  // conv2d's backward: its second derivatives
       vjp([](const Inputs& x) { return conv2d(x[0], x[1], x[2], {.stride = 2, .padding = 1}); })},
      {"max_pool2d", {{2, 3, 6, 5}},
       [](const Inputs& x) { return max_pool2d(x[0], {.kernel_size = 3, .stride = 2, .padding = 1}); }},
      {"max_pool2d", {{1, 2, 7, 6}}, [](const Inputs& x) {
         return max_pool2d(x[0], {.kernel_size = {2, 3}, .stride = Size2{2, 1}, .dilation = {2, 1}, .ceil_mode = true});
       }},
      {"max_pool1d", {{2, 3, 8}},
       [](const Inputs& x) { return max_pool1d(x[0], {.kernel_size = 3, .padding = 1, .ceil_mode = true}); }},
      {"avg_pool2d", {{2, 3, 6, 5}},
       [](const Inputs& x) { return avg_pool2d(x[0], {.kernel_size = 3, .stride = 2, .padding = 1}); }},
      {"avg_pool2d", {{1, 2, 7, 6}}, [](const Inputs& x) {  // divisors per window
         return avg_pool2d(x[0], {.kernel_size = {3, 2}, .stride = 2, .padding = 1, .ceil_mode = true,
                                  .count_include_pad = false});
       }},
      {"avg_pool1d", {{2, 3, 8}},
       [](const Inputs& x) { return avg_pool1d(x[0], {.kernel_size = 3, .stride = 2, .padding = 1, .ceil_mode = true}); }},
      {"adaptive_avg_pool2d", {{2, 3, 5, 7}}, [](const Inputs& x) { return adaptive_avg_pool2d(x[0], {3, 4}); }},
      {"adaptive_avg_pool1d", {{3, 7}}, [](const Inputs& x) { return adaptive_avg_pool1d(x[0], 3); }},  // unbatched
      {"softmax", {{3, 4}}, [](const Inputs& x) { return softmax(x[0], 1); }},
      {"softmax", {{3, 4}}, [](const Inputs& x) { return softmax(x[0], 0); }},
      {"log_softmax", {{3, 4}}, [](const Inputs& x) { return log_softmax(x[0], -1); }},
      {"softmax_backward", {{3, 4}, {3, 4}}, vjp([](const Inputs& x) { return softmax(x[0], 0); })},
      {"log_softmax_backward", {{3, 4}, {3, 4}}, vjp([](const Inputs& x) { return log_softmax(x[0], 1); })},
      {"layer_norm", {{2, 3, 4}, {4}, {4}}, [](const Inputs& x) { return layer_norm(x[0], {4}, x[1], x[2]); }},
      {"layer_norm", {{2, 3, 4}}, [](const Inputs& x) { return layer_norm(x[0], {3, 4}); }},
      {"layer_norm", {{2, 3, 4}, {3, 1}, {4}},  // a weight that broadcasts: mul after the normalisation
       [](const Inputs& x) { return layer_norm(x[0], {4}, x[1], x[2]); }},
      {"layer_norm_backward", {{2, 3, 4}, {4}, {4}, {2, 3, 4}},  // dx, dweight and dbias
       vjp([](const Inputs& x) { return layer_norm(x[0], {4}, x[1], x[2]); })},
      {"layer_norm_backward", {{2, 2, 3}, {2, 2, 3}}, vjp([](const Inputs& x) {
         return layer_norm(x[0], {2, 3});
       })},
      // The normalisation layers' functions (compositions: rows so that their derivatives are checked).
      {"batch_norm", {{4, 3, 2}, {3}, {3}},  // training, batch statistics, no running ones
       [](const Inputs& x) { return batch_norm(x[0], Tensor(), Tensor(), x[1], x[2], true); }},
      {"batch_norm", {{5, 3}}, [](const Inputs& x) {  // (N, C), updating running statistics, no affine
         return batch_norm(x[0], zeros({3}, f64), ones({3}, f64), Variable(), Variable(), true, 0.3, 1e-3);
       }},
      {"batch_norm", {{2, 3, 2, 2}, {3}, {3}}, [](const Inputs& x) {  // evaluation with running statistics
         return batch_norm(x[0], tensor({0.1, -0.2, 0.3}, f64), tensor({0.5, 1.5, 2.0}, f64), x[1], x[2], false);
       }},
      {"group_norm", {{2, 6, 3}, {6}, {6}}, [](const Inputs& x) { return group_norm(x[0], 2, x[1], x[2]); }},
      {"group_norm", {{2, 3, 4}}, [](const Inputs& x) {  // a strided (2, 4, 3) input, one group per channel
         return group_norm(x[0].permute({0, 2, 1}), 4, Variable(), Variable(), 1e-3);
       }},
      {"rms_norm", {{2, 3, 4}, {4}}, [](const Inputs& x) { return rms_norm(x[0], 1, x[1]); }},
      {"rms_norm", {{2, 3, 4}, {3, 4}}, [](const Inputs& x) { return rms_norm(x[0], 2, x[1], 1e-6); }},
      {"rms_norm", {{3, 4}}, [](const Inputs& x) { return rms_norm(x[0], 1, Variable()); }},
      {"index_select", {{4, 3}}, [](const Inputs& x) { return index_select(x[0], 0, index_tensor({3, 0, 3}, {3})); }},
      {"index_select", {{4, 3}}, [](const Inputs& x) { return index_select(x[0], 1, index_tensor({2, 2}, {2})); }},
      // Indexing, einsum and ordering (functions/index.cpp, einsum.cpp, order.cpp); repeated indices throughout.
      {"gather", {{3, 4}}, [](const Inputs& x) { return gather(x[0], 1, index_tensor({3, 0, 3, 1, 1, 1}, {3, 2})); }},
      {"gather", {{4, 3}}, [](const Inputs& x) {  // a transposed x, dim 0, an index smaller than x off dim
         return gather(x[0].mT(), 0, index_tensor({1, 0, 2, 1, 2, 2}, {2, 3}));
       }},
      {"scatter", {{3, 4}, {2, 3}}, [](const Inputs& x) {  // row 0 writes column 1 twice: the second write wins
         return scatter(x[0], 1, index_tensor({1, 3, 1, 0, 2, 3}, {2, 3}), x[1]);
       }},
      {"scatter", {{4, 3}, {3, 3}}, [](const Inputs& x) {  // dim 0, source larger than the index
         return scatter(x[0], 0, index_tensor({2, 0, 3, 0, 0, 1}, {2, 3}), x[1]);
       }},
      {"scatter_value", {{3, 4}}, [](const Inputs& x) { return scatter(x[0], -1, index_tensor({0, 0, 2}, {3, 1}), 1.5); }},
      {"scatter_add", {{3, 4}, {3, 3}}, [](const Inputs& x) {  // source larger than the index; repeats add up
         return scatter_add(x[0], 1, index_tensor({1, 1, 3, 0, 2, 2}, {2, 3}), x[1]);
       }},
      {"scatter_add", {{2, 3, 2}, {2, 2, 2}}, [](const Inputs& x) {
         return scatter_add(x[0], 1, index_tensor({0, 2, 2, 2, 1, 0, 1, 1}, {2, 2, 2}), x[1]);
       }},
      {"index_add", {{4, 3}, {3, 3}}, [](const Inputs& x) { return index_add(x[0], 0, index_tensor({3, 0, 3}, {3}), x[1]); }},
      {"index_add", {{2, 4}, {2, 3}}, [](const Inputs& x) { return index_add(x[0], -1, index_tensor({1, 1, 2}, {3}), x[1]); }},
      {"gather", {{3, 5}}, [](const Inputs& x) { return sort(x[0], 1).values; }},  // sort and topk gather their values
      {"gather", {{4, 3}}, [](const Inputs& x) { return sort(x[0], 0, true).values * x[0]; }},
      {"gather", {{3, 5}}, [](const Inputs& x) { return topk(x[0], 2, -1).values; }},
      {"gather", {{5, 2}}, [](const Inputs& x) { return topk(x[0].mT(), 3, 1, false).values; }},
      {"einsum", {{2, 3}, {3, 4}}, [](const Inputs& x) { return einsum("ij,jk->ik", {x[0], x[1]}); }},  // matmul
      {"einsum", {{2, 3, 4}, {2, 4, 5}}, [](const Inputs& x) { return einsum("bij,bjk->bik", {x[0], x[1]}); }},
      {"einsum", {{3, 3}}, [](const Inputs& x) { return einsum("ii", {x[0]}); }},  // trace
      {"einsum", {{2, 3, 3}}, [](const Inputs& x) { return einsum("bii->bi", {x[0]}); }},  // diagonals
      {"einsum", {{2, 3}, {4, 3}}, [](const Inputs& x) { return einsum("ij,kj", {x[0], x[1]}); }},  // implicit
      {"einsum", {{2, 1, 2, 3}, {4, 2, 3}}, [](const Inputs& x) {  // ellipsis broadcast, batched matmul
         return einsum("...ij,...jk->...ik", {x[0], x[1].mT()});
       }},
      {"einsum", {{3}, {4}, {3, 4}}, [](const Inputs& x) { return einsum("i,j,ij->", {x[0], x[1], x[2]}); }},
      {"einsum", {{2, 3}, {2, 3}}, [](const Inputs& x) { return einsum("ij,ij->i", {x[0], x[1]}); }},  // mul path
      {"einsum", {{2, 1}, {3, 4}}, [](const Inputs& x) { return einsum("ij,jk->ik", {x[0], x[1]}); }},  // j broadcast
      {"einsum", {{2, 3, 4}}, [](const Inputs& x) { return einsum("a...->...a", {x[0]}); }},
      {"einsum", {{2, 3, 2}, {3, 5}}, [](const Inputs& x) { return einsum("iji,jk->k", {x[0], x[1]}); }},
      {"embedding", {{5, 3}}, [](const Inputs& x) { return embedding(x[0], index_tensor({1, 4, 1, 0}, {2, 2})); }},  // repeats add up
      {"embedding_bag", {{5, 3}},  // (2, 2, 3) bags: repeats add up, padding row 0 left out
       [](const Inputs& x) { return embedding_bag(x[0], index_tensor({1, 4, 1, 0, 0, 0, 2, 2, 3, 4, 4, 0}, {2, 2, 3}), 0); }},
      {"embedding_bag_backward", {{5, 3}},  // no padding; gradgradcheck runs the backward forward
       [](const Inputs& x) { return embedding_bag(x[0], index_tensor({3, 3, 1, 0, 2, 4}, {3, 2})); }},
      {"dropout", {{3, 4}}, [](const Inputs& x) {
         Generator gen(3);  // a fresh generator per call: the same mask in every evaluation
         return dropout(x[0], 0.5, true, &gen);
       }},
      {"relu_dropout", {{3, 4}}, [](const Inputs& x) {
         Generator gen(3);
         return relu_dropout(x[0], 0.5, true, &gen);
       }},
      {"scaled_dot_product_attention", {{2, 3, 4}, {2, 5, 4}, {2, 5, 2}},
       [](const Inputs& x) { return scaled_dot_product_attention(x[0], x[1], x[2]); }},
      {"scaled_dot_product_attention", {{2, 2, 3, 4}, {2, 1, 5, 4}, {5, 3}},  // broadcast k, v; both masks; dropout
       [](const Inputs& x) {
         Generator gen(4);  // a fresh generator per call: the same mask in every evaluation
         Tensor blocked = mask_of({2, 1, 3, 5}, 9), added = randn({3, 5}, f64, &gen);
         return scaled_dot_product_attention(x[0], x[1], x[2],
                                             {.blocked = blocked, .added = added, .dropout_p = 0.3, .gen = &gen});
       }},
      {"scaled_dot_product_attention", {{2, 3, 2, 4}, {2, 5, 2, 4}, {2, 5, 2, 3}},  // MHA's heads of (B, S, H, d):
       [](const Inputs& x) {                                    // output and gradients in (B, S, H, d) order
         Generator gen(5);
         const std::vector<int64_t> heads = {0, 2, 1, 3};
         return scaled_dot_product_attention(x[0].permute(heads), x[1].permute(heads), x[2].permute(heads),
                                             {.blocked = mask_of({2, 1, 1, 5}, 6), .dropout_p = 0.3, .gen = &gen});
       }},
      {"scaled_dot_product_attention", {{4, 2, 3}, {2, 5, 4}, {2, 5, 3}},  // permuted q; query 1 fully masked
       [](const Inputs& x) {
         Tensor blocked = logical_and(eq(arange(0, 3, 1, f64), 1.0).unsqueeze(1), ones({3, 5}, boolean));
         return scaled_dot_product_attention(x[0].permute({1, 2, 0}), x[1], x[2], {.blocked = blocked});
       }},
      // is_causal: two row blocks (64 rows, then the rest), each on the keys it may see
      {"scaled_dot_product_attention", {{1, 66, 2}, {1, 66, 2}, {1, 66, 3}},
       [](const Inputs& x) {
         return scaled_dot_product_attention(x[0], x[1], x[2], {.is_causal = true});
       }},
      {"scaled_dot_product_attention", {{1, 65, 2, 2}, {1, 68, 2, 2}, {1, 68, 2, 2}},  // 3 cached keys; MHA's heads
       [](const Inputs& x) {                                                      // and both masks cut per block
         Generator gen(13);
         const std::vector<int64_t> heads = {0, 2, 1, 3};
         return scaled_dot_product_attention(x[0].permute(heads), x[1].permute(heads), x[2].permute(heads),
                                             {.blocked = mask_of({1, 1, 1, 68}, 14),
                                              .added = randn({65, 68}, f64, &gen),
                                              .is_causal = true});
       }},
      // The recorded ops of scaled_dot_product_attention's backward, each a row that leans on it (gradgradcheck
      // runs their derivatives).
      {"attention_weights", {{1, 3, 2}, {1, 4, 2}, {1, 4, 2}},  // P of masked scores as a function of q, k
       [](const Inputs& x) { return scaled_dot_product_attention(x[0], x[1], x[2], {.blocked = mask_of({3, 4}, 10)}); }},
      {"attention_softmax_grad", {{2, 3, 2}, {2, 4, 2}, {2, 4, 3}},  // dS through softmax and dropout
       [](const Inputs& x) {
         Generator gen(11);
         return scaled_dot_product_attention(x[0], x[1], x[2], {.dropout_p = 0.4, .gen = &gen});
       }},
      {"attention_dropout", {{3, 2}, {4, 2}, {4, 2}},  // Pd = P·m, 2-D operands
       [](const Inputs& x) {
         Generator gen(12);
         return scaled_dot_product_attention(x[0], x[1], x[2], {.dropout_p = 0.5, .gen = &gen});
       }},
      {"matmul_as", {{1, 3, 2, 2}, {1, 4, 2, 2}, {1, 4, 2, 3}},  // (B, S, H, d) views: results in that order
       [](const Inputs& x) {
         const std::vector<int64_t> heads = {0, 2, 1, 3};
         return scaled_dot_product_attention(x[0].permute(heads), x[1].permute(heads), x[2].permute(heads));
       }},
      {"cross_entropy", {{4, 5}},
       [](const Inputs& x) { return cross_entropy(x[0], index_tensor({1, 0, 4, -100}, {4})); }},
      {"cross_entropy", {{2, 3, 4}},
       [](const Inputs& x) {
         return cross_entropy(x[0], index_tensor({0, 2, 1, 1, 2, 0, 0, 1}, {2, 4}),
                              {.reduction = R::none, .label_smoothing = 0.2});
       }},
      {"cross_entropy", {{4, 5}},
       [](const Inputs& x) { return cross_entropy(x[0], index_tensor({1, 0, 4, 2}, {4}), {.reduction = R::sum}); }},
      {"cross_entropy", {{4, 5}},  // class weights with smoothing and an ignored target
       [](const Inputs& x) {
         return cross_entropy(x[0], index_tensor({1, -100, 4, 2}, {4}),
                              {.label_smoothing = 0.1, .weight = tensor({0.5, 1.2, 0.8, 1.5, 0.7}, f64)});
       }},
      {"cross_entropy_backward", {{2, 3, 4}, {2, 4}}, vjp([](const Inputs& x) {
         return cross_entropy(x[0], index_tensor({0, 2, 1, -100, 2, 0, 0, 1}, {2, 4}),
                              {.reduction = R::none, .label_smoothing = 0.2});
       })},
      {"cross_entropy_backward", {{4, 5}, {}}, vjp([](const Inputs& x) {
         return cross_entropy(x[0], index_tensor({1, -100, 4, 2}, {4}),
                              {.label_smoothing = 0.1, .weight = tensor({0.5, 1.2, 0.8, 1.5, 0.7}, f64)});
       })},
  };
  return k;
}

}  // namespace

TEST_CASE("every differentiable function matches finite differences in f64") {
  for (const GradCase& c : cases()) {
    std::string name = c.name;
    CAPTURE(name);
    CHECK(gradcheck(c.fn, random_inputs(c.shapes, c.positive), c.options));
  }
}

// A fused backward op's row is the vjp of its forward op, so that here its own backward is differentiated.
TEST_CASE("second derivatives match finite differences for the core families") {
  const std::set<std::string> second = {"tanh_backward", "gelu_backward", "masked_scale", "softmax_backward",
                                        "log_softmax_backward", "layer_norm_backward", "cross_entropy_backward",
                                        "mul", "div", "exp", "log", "tanh", "sigmoid", "gelu", "pow", "sum", "mean",
                                        "var", "logsumexp", "matmul", "linear", "softmax", "log_softmax", "layer_norm",
                                        "cross_entropy", "sqrt", "erf", "slice", "split", "split_piece", "index_select",
                                        "embedding", "embedding_bag", "embedding_bag_backward", "gather", "scatter",
                                        "scatter_value", "scatter_add", "index_add", "einsum",
                                        "scaled_dot_product_attention", "attention_weights", "attention_softmax_grad",
                                        "attention_dropout", "matmul_as", "relu", "dropout", "relu_dropout",
                                        "batch_norm", "group_norm", "rms_norm",
                                        "expm1", "leaky_relu", "elu", "selu", "softplus", "hardtanh", "mish",
                                        "binary_cross_entropy", "im2col", "col2im", "conv2d", "conv1d",
                                        "conv_transpose2d", "max_pool2d", "avg_pool2d", "adaptive_avg_pool2d",
                                        "cumsum", "cumprod", "flip", "roll", "pad", "pad_backward", "repeat", "tril",
                                        "triu", "vector_norm"};
  for (const GradCase& c : cases()) {
    if (!second.count(c.name)) continue;
    std::string name = c.name;
    CAPTURE(name);
    CHECK(gradgradcheck(c.fn, random_inputs(c.shapes, c.positive), c.options));
  }
}

TEST_CASE("every op recorded in autograd/functions has a gradcheck row") {
  std::set<std::string> covered;
  for (const GradCase& c : cases()) covered.insert(c.name);
  const std::regex recorded(R"re(record\(\s*"([a-z_]+)")re");
  int found = 0;
  for (const auto& entry : std::filesystem::directory_iterator(TG_SOURCE_DIR "/autograd/functions")) {
    std::ifstream in(entry.path());
    std::string text((std::istreambuf_iterator<char>(in)), {});
    for (std::sregex_iterator it(text.begin(), text.end(), recorded), end; it != end; ++it, ++found) {
      CAPTURE(entry.path().filename().string());
      CHECK_MESSAGE(covered.count((*it)[1]), "no gradcheck row for ", (*it)[1].str());
    }
  }
  CHECK(found >= 40);
}

TEST_CASE("gradcheck reports the worst element of a wrong gradient") {
  // y = x² recorded with the wrong derivative x (instead of 2x).
  GradFn wrong = [](const Inputs& x) {
    return record("wrong_square", x[0].value() * x[0].value(), {x[0]},
                  [x](const Variable& dy, const Variable&) -> Grads { return {dy * x[0]}; });
  };
  GradcheckResult r = gradcheck(wrong, {Variable(tensor({1.0, 3.0}, f64), true)});
  CHECK_FALSE(r.ok);
  CHECK(r.report.find("input 0 element 1") != std::string::npos);
  CHECK(r.report.find("analytic 3 vs numeric 6") != std::string::npos);
}

TEST_CASE("gradcheck refuses f32 inputs at default tolerances") {
  GradFn f = [](const Inputs& x) { return tanh(x[0]); };
  CHECK_THROWS_WITH_AS(gradcheck(f, {Variable(randn({3}), true)}), doctest::Contains("input 0 is f32"), DTypeError);
  CHECK(gradcheck(f, {Variable(randn({3}), true)}, {.eps = 1e-3, .atol = 1e-2, .rtol = 1e-2}));
}

// eps = 0 divided 0 by 0 and returned a failed check whose report was all NaN.
TEST_CASE("gradcheck refuses an eps that is not finite and > 0, and negative tolerances") {
  GradFn f = [](const Inputs& x) { return tanh(x[0]); };
  const Variable x(randn({3}, f64), true);
  for (double eps : {0.0, -1e-6, double(NAN), double(INFINITY)})
    CHECK_THROWS_WITH_AS(gradcheck(f, {x}, {.eps = eps}), doctest::Contains("gradcheck: eps must be finite and > 0"),
                         ValueError);
  CHECK_THROWS_WITH_AS(gradcheck(f, {x}, {.atol = -1}), doctest::Contains("atol and rtol must be >= 0, got -1 and"),
                       ValueError);
  CHECK_THROWS_WITH_AS(gradgradcheck(f, {x}, {.eps = 0}), doctest::Contains("gradcheck: eps must be"), ValueError);
}
