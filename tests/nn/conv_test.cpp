// Conv1d, Conv2d and ConvTranspose2d against PyTorch (fixtures nn/conv.*, made by gen_conv.py), against a
// direct loop at a size that runs on several threads, their init, and their errors.
#include <doctest/doctest.h>

#include <filesystem>
#include <memory>

#include "core/parallel.h"
#include "nn/conv.h"
#include "nn/fixture.h"
#include "nn/pytorch_case.h"

using namespace tg;

namespace {

// The layer of each fixture case, as its "construct" string builds it in PyTorch.
std::unique_ptr<nn::Layer> make_conv(const std::string& name, DType dt) {
  if (name == "conv2d_padding1")
    return std::make_unique<nn::Conv2d>(
        nn::Conv2dOptions{.in_channels = 3, .out_channels = 4, .kernel_size = 3, .padding = 1, .dtype = dt});
  if (name == "conv2d_stride2")
    return std::make_unique<nn::Conv2d>(nn::Conv2dOptions{
        .in_channels = 2, .out_channels = 3, .kernel_size = {3, 2}, .stride = 2, .padding = {1, 0}, .dtype = dt});
  if (name == "conv2d_dilation")
    return std::make_unique<nn::Conv2d>(nn::Conv2dOptions{.in_channels = 2, .out_channels = 2, .kernel_size = 3,
                                                          .stride = {1, 2}, .padding = 2, .dilation = 2, .dtype = dt});
  if (name == "conv2d_groups")
    return std::make_unique<nn::Conv2d>(nn::Conv2dOptions{
        .in_channels = 4, .out_channels = 6, .kernel_size = 3, .groups = 2, .bias = false, .dtype = dt});
  if (name == "conv2d_same")
    return std::make_unique<nn::Conv2d>(nn::Conv2dOptions{.in_channels = 2, .out_channels = 2, .kernel_size = {2, 4},
                                                          .padding = PaddingMode::same, .dilation = {2, 1}, .dtype = dt});
  if (name == "conv1d")
    return std::make_unique<nn::Conv1d>(nn::Conv1dOptions{
        .in_channels = 3, .out_channels = 4, .kernel_size = 3, .stride = 2, .padding = 1, .dilation = 2, .dtype = dt});
  if (name == "conv1d_depthwise_same")
    return std::make_unique<nn::Conv1d>(nn::Conv1dOptions{.in_channels = 3, .out_channels = 3, .kernel_size = 2,
                                                          .padding = PaddingMode::same, .groups = 3, .dtype = dt});
  if (name == "conv_transpose2d")
    return std::make_unique<nn::ConvTranspose2d>(nn::ConvTranspose2dOptions{
        .in_channels = 4, .out_channels = 3, .kernel_size = 3, .stride = 2, .padding = 1, .output_padding = 1,
        .dtype = dt});
  if (name == "conv_transpose2d_groups")
    return std::make_unique<nn::ConvTranspose2d>(nn::ConvTranspose2dOptions{
        .in_channels = 4, .out_channels = 2, .kernel_size = 2, .stride = {1, 2}, .groups = 2, .dilation = 2,
        .dtype = dt});
  FAIL("no layer for case " << name);
  return nullptr;
}

// The entries of a ModuleDict's state_dict under "<prefix>.", without the prefix.
TensorMap under(const TensorMap& all, const std::string& prefix) {
  TensorMap out;
  for (const auto& [key, value] : all)
    if (key.rfind(prefix + ".", 0) == 0) out[key.substr(prefix.size() + 1)] = value;
  return out;
}

// y[n, o, i, j] = b[o] + Σ x[n, g·C/G + c, i·s - p + a·d, j·s - p + e·d]·w[o, c, a, e], the textbook sum.
Tensor direct_conv2d(const Tensor& x, const Tensor& w, const Tensor& b, int64_t s, int64_t p, int64_t d, int64_t G) {
  const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3), O = w.size(0), Cg = w.size(1),
                k = w.size(2), Ho = (H + 2 * p - d * (k - 1) - 1) / s + 1, Wo = (W + 2 * p - d * (k - 1) - 1) / s + 1;
  const std::vector<double> xv = x.to_vector<double>(), wv = w.to_vector<double>(), bv = b.to_vector<double>();
  std::vector<double> y(size_t(N * O * Ho * Wo));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < O; ++o)
      for (int64_t i = 0; i < Ho; ++i)
        for (int64_t j = 0; j < Wo; ++j) {
          double acc = bv[size_t(o)];
          for (int64_t c = 0; c < Cg; ++c)
            for (int64_t a = 0; a < k; ++a)
              for (int64_t e = 0; e < k; ++e) {
                const int64_t h = i * s - p + a * d, v = j * s - p + e * d, ci = o / (O / G) * Cg + c;
                if (h >= 0 && h < H && v >= 0 && v < W)
                  acc += xv[size_t(((n * C + ci) * H + h) * W + v)] * wv[size_t(((o * Cg + c) * k + a) * k + e)];
              }
          y[size_t(((n * O + o) * Ho + i) * Wo + j)] = acc;
        }
  return tensor(y, {N, O, Ho, Wo}, f64);
}

}  // namespace

TEST_CASE("Conv1d, Conv2d and ConvTranspose2d match PyTorch: output and gradients for input, weight and bias") {
  const auto ran = test::for_each_fixture_case("nn/conv", [](const nlohmann::json& c, DType dt,
                                                             const std::string&) {
    const std::string name = c["name"];
    std::unique_ptr<nn::Layer> layer = make_conv(name, dt);
    const std::string weights = dt == f64 ? "conv.f64.safetensors" : "conv.f32.safetensors";
    layer->load_state_dict(under(test::fixture_weights({{"weights", weights}}), name));  // PyTorch's names, as they are
    Variable x(test::fixture_tensor(c["inputs"]["x"], dt), true);
    test::check_fixture_case(*layer, c, (*layer)(x), {{"x", x}}, test::fixture_tolerance(dt));
  });
  CHECK(ran == std::vector<int>{9, 9});  // no case skipped
}

TEST_CASE("conv2d matches a direct loop on batches that run on two threads, with groups, stride and dilation") {
  const int threads = get_num_threads();
  set_num_threads(2);
  manual_seed(3);
  const Tensor x = randn({6, 8, 20, 19}), w = randn({12, 4, 3, 3}), b = randn({12});
  for (auto [s, p, d] : {std::tuple{1, 1, 1}, std::tuple{2, 2, 2}}) {
    const int stride = s;  // doctest's CAPTURE cannot see a structured binding (clang 14)
    CAPTURE(stride);
    const Tensor y = conv2d(Variable(x), Variable(w), Variable(b), {.stride = s, .padding = p, .dilation = d, .groups = 2})
                         .value();
    test::check_close(y.to(f64), direct_conv2d(x, w, b, s, p, d, 2), 1e-4, "conv2d");
  }
  set_num_threads(threads);
}

TEST_CASE("conv2d sums each window: a 2x2 kernel of ones at stride 2 gives the block sums") {
  const Variable x(arange(1, 17, 1, f64).reshape({1, 1, 4, 4}));  // rows 1..4, 5..8, 9..12, 13..16
  const Variable y = conv2d(x, Variable(ones({1, 1, 2, 2}, f64)), Variable(tensor({0.5}, f64)), {.stride = 2});
  CHECK(y.shape() == Shape{1, 1, 2, 2});
  CHECK(y.value().to_vector<double>() == std::vector<double>{14.5, 22.5, 46.5, 54.5});
}

TEST_CASE("Conv2d starts uniform in ±1/√fan_in with fan_in = C_in / groups · kH · kW, as PyTorch") {
  manual_seed(0);
  nn::Conv2d conv({.in_channels = 8, .out_channels = 64, .kernel_size = 2, .groups = 2});
  CHECK(conv.weight().shape() == Shape{64, 4, 2, 2});
  CHECK(conv.bias().shape() == Shape{64});
  const double bound = 0.25;  // 1/√(4·2·2)
  for (const Variable& p : conv.parameters()) {
    CHECK(amax(abs(p.value())).item() <= bound);
    CHECK(amax(abs(p.value())).item() > 0.9 * bound);
  }
  nn::ConvTranspose2d up({.in_channels = 4, .out_channels = 6, .kernel_size = 3, .groups = 2, .bias = false});
  CHECK(up.weight().shape() == Shape{4, 3, 3, 3});
  CHECK(up.named_parameters().size() == 1);
}

TEST_CASE("Conv2d saves and loads its parameters by PyTorch's names") {
  const std::string path = (std::filesystem::temp_directory_path() / "tg_conv2d_test.safetensors").string();
  nn::Conv2d a({.in_channels = 2, .out_channels = 3, .kernel_size = 3, .padding = 1});
  a.save(path);
  nn::Conv2d b({.in_channels = 2, .out_channels = 3, .kernel_size = 3, .padding = 1});
  b.load(path);
  std::filesystem::remove(path);
  const Variable x(randn({1, 2, 4, 4}));
  CHECK(test::max_abs_diff(a(x).value(), b(x).value()) == 0);
  CHECK(a.summary().find("Conv2d") != std::string::npos);
  CHECK(a.num_parameters() == 3 * 2 * 9 + 3);
}

TEST_CASE("conv2d and conv1d name the shapes of a wrong rank, channel count or groups") {
  const Variable x(zeros({2, 3, 8, 8})), w(zeros({16, 3, 3, 3}));
  CHECK_THROWS_WITH_AS(conv2d(Variable(zeros({3, 8})), w, Variable()),
                       "conv2d: input must be (N, C_in, H, W) or unbatched without N, got (3, 8)", ShapeError);
  CHECK_THROWS_WITH_AS(conv2d(Variable(zeros({2, 3, 8})), w, Variable()),  // unbatched: 2 channels of 3 x 8
                       "conv2d: input (2, 3, 8) has 2 channels, but weight (16, 3, 3, 3) with groups 1 expects 3",
                       ShapeError);
  CHECK_THROWS_WITH_AS(conv2d(x, Variable(zeros({16, 3, 3})), Variable()),
                       "conv2d: weight must be (C_out, C_in / groups, kH, kW), got (16, 3, 3)", ShapeError);
  CHECK_THROWS_WITH_AS(conv2d(x, Variable(zeros({16, 2, 3, 3})), Variable()),
                       "conv2d: input (2, 3, 8, 8) has 3 channels, but weight (16, 2, 3, 3) with groups 1 expects 2",
                       ShapeError);
  CHECK_THROWS_WITH_AS(conv2d(x, Variable(zeros({16, 1, 3, 3})), Variable(), {.groups = 2}),
                       "conv2d: in_channels 3 of input (2, 3, 8, 8) are not divisible by groups 2", ShapeError);
  CHECK_THROWS_WITH_AS(conv2d(Variable(zeros({2, 4, 8, 8})), Variable(zeros({5, 2, 3, 3})), Variable(), {.groups = 2}),
                       "conv2d: out_channels 5 of weight (5, 2, 3, 3) are not divisible by groups 2", ShapeError);
  CHECK_THROWS_WITH_AS(conv2d(x, w, Variable(zeros({8}))), "conv2d: bias must be (C_out) = (16), got (8,)", ShapeError);
  CHECK_THROWS_WITH_AS(conv2d(x, Variable(zeros({16, 3, 3, 3}, f64)), Variable()),
                       "conv2d: input, weight and bias must have one dtype, got f32 and f64", DTypeError);
  CHECK_THROWS_WITH_AS(conv1d(Variable(zeros({2, 4, 8})), Variable(zeros({6, 3, 3})), Variable()),
                       "conv1d: input (2, 4, 8) has 4 channels, but weight (6, 3, 3) with groups 1 expects 3",
                       ShapeError);
}

TEST_CASE("conv2d and conv1d name a kernel larger than the padded input, and bad strides and padding") {
  const Variable x(zeros({1, 1, 4, 4})), w(zeros({1, 1, 5, 3}));
  CHECK_THROWS_WITH_AS(conv2d(x, w, Variable()),
                       "conv2d: kernel (5, 3) (dilated (5, 3)) is larger than the padded input (4, 4) of input "
                       "(1, 1, 4, 4)",
                       ShapeError);
  CHECK_NOTHROW(conv2d(x, w, Variable(), {.padding = {1, 0}}));
  CHECK_THROWS_WITH_AS(conv1d(Variable(zeros({1, 1, 4})), Variable(zeros({1, 1, 3})), Variable(), {.dilation = 2}),
                       "conv1d: kernel 3 (dilated 5) is larger than the padded input 4 of input (1, 1, 4)",
                       ShapeError);
  CHECK_THROWS_WITH_AS(conv2d(x, Variable(zeros({1, 1, 3, 3})), Variable(), {.stride = {1, 0}}),
                       "conv2d: stride must be >= 1, got (1, 0)", ValueError);
  CHECK_THROWS_WITH_AS(conv1d(Variable(zeros({1, 1, 4})), Variable(zeros({1, 1, 3})), Variable(), {.stride = -1}),
                       "conv1d: stride must be >= 1, got -1", ValueError);
  CHECK_THROWS_WITH_AS(conv2d(x, Variable(zeros({1, 1, 3, 3})), Variable(), {.padding = -1}),
                       "conv2d: padding must be >= 0, got (-1, -1)", ValueError);
  CHECK_THROWS_WITH_AS(conv2d(x, Variable(zeros({1, 1, 3, 3})), Variable(), {.stride = 2, .padding = PaddingMode::same}),
                       "conv2d: padding 'same' needs stride 1, got (2, 2)", ValueError);
  CHECK_THROWS_WITH_AS(conv2d(x, Variable(zeros({1, 1, 3, 3})), Variable(), {.groups = 0}),
                       "conv2d: groups must be >= 1, got 0", ValueError);
}

TEST_CASE("conv layers check their options at construction, naming the layer and the value") {
  CHECK_THROWS_WITH_AS(nn::Conv2d({.in_channels = 3, .out_channels = 4, .kernel_size = 3, .groups = 2}),
                       "Conv2d: in_channels 3 and out_channels 4 must be divisible by groups 2", ValueError);
  CHECK_THROWS_WITH_AS(nn::Conv2d({.in_channels = 3, .out_channels = 4, .kernel_size = {3, 0}}),
                       "Conv2d: kernel_size must be >= 1, got (3, 0)", ValueError);
  CHECK_THROWS_WITH_AS(nn::Conv2d({.in_channels = 3, .out_channels = 4, .kernel_size = 3, .stride = 2,
                                   .padding = PaddingMode::same}),
                       "Conv2d: padding 'same' is not supported for strided convolutions, got stride (2, 2)",
                       ValueError);
  CHECK_THROWS_WITH_AS(nn::Conv1d({.in_channels = 3, .out_channels = 4, .kernel_size = 3, .stride = 0}),
                       "Conv1d: stride must be >= 1, got 0", ValueError);
  CHECK_THROWS_WITH_AS(nn::Conv1d({.in_channels = 0, .out_channels = 4, .kernel_size = 3}),
                       "Conv1d: in_channels and out_channels must be > 0, got 0 and 4", ValueError);
  CHECK_THROWS_WITH_AS(nn::ConvTranspose2d({.in_channels = 2, .out_channels = 2, .kernel_size = 3, .stride = 2,
                                            .output_padding = 2}),
                       "ConvTranspose2d: output_padding (2, 2) must be >= 0 and smaller than stride or dilation",
                       ValueError);
}
