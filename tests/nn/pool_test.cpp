// The pooling layers and Flatten against PyTorch (fixtures nn/pool.*, made by gen_conv.py), hand-computed
// windows, max pooling's choice among ties and NaN, and their errors.
#include <doctest/doctest.h>

#include <cmath>
#include <memory>

#include "nn/fixture.h"
#include "nn/pool.h"

using namespace tg;

namespace {

// The layer of each fixture case, as its "construct" string builds it in PyTorch.
std::unique_ptr<nn::Layer> make_pool(const std::string& name) {
  if (name == "max_pool2d") return std::make_unique<nn::MaxPool2d>(nn::MaxPool2dOptions{3, 2, 1});
  if (name == "max_pool2d_dilation_ceil")
    return std::make_unique<nn::MaxPool2d>(nn::MaxPool2dOptions{
        .kernel_size = {2, 3}, .stride = Size2{2, 1}, .dilation = {2, 1}, .ceil_mode = true});
  if (name == "max_pool1d")
    return std::make_unique<nn::MaxPool1d>(nn::MaxPool1dOptions{.kernel_size = 3, .padding = 1, .ceil_mode = true});
  if (name == "avg_pool2d") return std::make_unique<nn::AvgPool2d>(nn::AvgPool2dOptions{3, 2, 1});
  if (name == "avg_pool2d_ceil_exclude_pad")
    return std::make_unique<nn::AvgPool2d>(nn::AvgPool2dOptions{
        .kernel_size = {3, 2}, .stride = 2, .padding = 1, .ceil_mode = true, .count_include_pad = false});
  if (name == "avg_pool1d")
    return std::make_unique<nn::AvgPool1d>(
        nn::AvgPool1dOptions{.kernel_size = 3, .stride = 2, .padding = 1, .ceil_mode = true});
  if (name == "adaptive_avg_pool2d") return std::make_unique<nn::AdaptiveAvgPool2d>(Size2{3, 4});
  if (name == "adaptive_avg_pool2d_global") return std::make_unique<nn::AdaptiveAvgPool2d>(1);
  if (name == "adaptive_avg_pool1d") return std::make_unique<nn::AdaptiveAvgPool1d>(3);
  if (name == "flatten") return std::make_unique<nn::Flatten>();
  FAIL("no layer for case " << name);
  return nullptr;
}

const Variable kSixteen(arange(1, 17, 1, f64).reshape({1, 1, 4, 4}));  // rows 1..4, 5..8, 9..12, 13..16

}  // namespace

TEST_CASE("the pooling layers and Flatten match PyTorch: output and input gradient") {
  const auto ran = test::for_each_fixture_case("nn/pool", [](const nlohmann::json& c, DType dt,
                                                             const std::string&) {
    std::unique_ptr<nn::Layer> layer = make_pool(c["name"]);
    Variable x(test::fixture_tensor(c["inputs"]["x"], dt), true);
    test::check_fixture_case(*layer, c, (*layer)(x), {{"x", x}}, test::fixture_tolerance(dt));
  });
  CHECK(ran == std::vector<int>{10, 10});  // no case skipped
}

TEST_CASE("max and average pooling over 2x2 blocks give each block's max and mean") {
  CHECK(max_pool2d(kSixteen, {.kernel_size = 2}).value().to_vector<double>() == std::vector<double>{6, 8, 14, 16});
  CHECK(avg_pool2d(kSixteen, {.kernel_size = 2}).value().to_vector<double>() ==
        std::vector<double>{3.5, 5.5, 11.5, 13.5});
  CHECK(adaptive_avg_pool2d(kSixteen, {2, 2}).value().to_vector<double>() == std::vector<double>{3.5, 5.5, 11.5, 13.5});
  // Padding 1 at stride 2 with count_include_pad: the corner window holds 1 input of 4 places.
  CHECK(avg_pool2d(kSixteen, {.kernel_size = 2, .padding = 1}).value().to_vector<double>()[0] == 0.25);
  CHECK(avg_pool2d(kSixteen, {.kernel_size = 2, .padding = 1, .count_include_pad = false}).value().to_vector<double>()[0] ==
        1.0);
}

TEST_CASE("max pooling gives a tied window's gradient to its first maximum, and passes NaN on") {
  Variable x(ones({1, 1, 2, 2}, f64), true);
  sum(max_pool2d(x, {.kernel_size = 2})).backward();
  CHECK(x.grad().to_vector<double>() == std::vector<double>{1, 0, 0, 0});
  const Variable with_nan(tensor({1, NAN, 3, 2}, {1, 1, 4}, f64));
  const std::vector<double> y = max_pool1d(with_nan, {.kernel_size = 2}).value().to_vector<double>();
  CHECK(std::isnan(y[0]));
  CHECK(y[1] == 3);
}

TEST_CASE("Flatten merges start_dim..end_dim, by default all but the batch dim") {
  const Variable x(zeros({2, 3, 4, 5}));
  CHECK(nn::Flatten()(x).shape() == Shape{2, 60});
  CHECK(nn::Flatten({.start_dim = 0, .end_dim = 1})(x).shape() == Shape{6, 4, 5});
}

TEST_CASE("pooling names a wrong rank, a kernel larger than the input, and bad sizes") {
  CHECK_THROWS_WITH_AS(max_pool2d(Variable(zeros({4, 4})), {.kernel_size = 2}),
                       "max_pool2d: input must be (N, C, H, W) or unbatched without N, got (4, 4)", ShapeError);
  CHECK_THROWS_WITH_AS(avg_pool1d(Variable(zeros({1, 2, 3})), {.kernel_size = 4}),
                       "avg_pool1d: kernel 4 (dilated 4) is larger than the padded input 3 of input (1, 2, 3)",
                       ShapeError);
  CHECK_THROWS_WITH_AS(max_pool2d(kSixteen, {.kernel_size = 2, .padding = {0, 2}}),
                       "max_pool2d: padding (0, 2) must be at most half of kernel_size (2, 2)", ValueError);
  CHECK_THROWS_WITH_AS(max_pool2d(kSixteen, {.kernel_size = 2, .stride = 0}), "max_pool2d: stride must be >= 1, got (0, 0)",
                       ValueError);
  CHECK_THROWS_WITH_AS(adaptive_avg_pool2d(kSixteen, {0, 2}), "adaptive_avg_pool2d: output_size must be >= 1, got (0, 2)",
                       ValueError);
  CHECK_THROWS_WITH_AS(nn::MaxPool1d({.kernel_size = 2, .padding = 2}),
                       "MaxPool1d: padding 2 must be >= 0 and at most half of kernel_size 2", ValueError);
  CHECK_THROWS_WITH_AS(nn::AvgPool2d({.kernel_size = 0}), "AvgPool2d: kernel_size must be >= 1, got (0, 0)", ValueError);
  CHECK_THROWS_WITH_AS(nn::AdaptiveAvgPool1d(0), "AdaptiveAvgPool1d: output_size must be >= 1, got 0", ValueError);
}
