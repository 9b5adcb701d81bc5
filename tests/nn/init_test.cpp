// Weight initialisation with PyTorch's formulas (torch.nn.init), checked loosely by statistics:
//   fans: fan_in = size(1)·Π shape[2:], fan_out = size(0)·Π shape[2:]
//   gain: linear/sigmoid 1, tanh 5/3, relu √2, leaky_relu √(2/(1+a²))
//   xavier_uniform U(±gain·√(6/(fan_in+fan_out))), xavier_normal N(0, gain²·2/(fan_in+fan_out))
//   kaiming_uniform U(±gain·√(3/fan)), kaiming_normal N(0, gain²/fan), fan by mode
// Bounds are checked exactly (no draw outside, some draw near them); stds within a few percent on 60 000
// draws (the sample std's relative σ is about 1/√(2n) ≈ 0.3%).
#include <doctest/doctest.h>

#include <cmath>

#include "nn/fixture.h"
#include "nn/init.h"

using namespace tg;
namespace init = tg::nn::init;

namespace {

double stddev(const Tensor& t) { return std::sqrt(var(t).item()); }
double max_abs(const Tensor& t) { return amax(abs(t)).item(); }

}  // namespace

TEST_CASE("compute_fans follows PyTorch: receptive field times size(1) in, size(0) out") {
  CHECK(init::compute_fans({3, 4}).fan_in == 4);
  CHECK(init::compute_fans({3, 4}).fan_out == 3);
  CHECK(init::compute_fans({2, 3, 5, 5}).fan_in == 75);
  CHECK(init::compute_fans({2, 3, 5, 5}).fan_out == 50);
  CHECK_THROWS_WITH_AS(init::compute_fans({7}), "init: fan in and fan out need at least 2 dims, got (7,)", ValueError);
}

TEST_CASE("calculate_gain has PyTorch's values") {
  using N = init::Nonlinearity;
  CHECK(init::calculate_gain(N::linear) == 1);
  CHECK(init::calculate_gain(N::sigmoid) == 1);
  CHECK(init::calculate_gain(N::tanh) == doctest::Approx(5.0 / 3.0));
  CHECK(init::calculate_gain(N::relu) == doctest::Approx(std::sqrt(2.0)));
  CHECK(init::calculate_gain(N::leaky_relu) == doctest::Approx(std::sqrt(2.0 / (1 + 0.01 * 0.01))));
  CHECK(init::calculate_gain(N::leaky_relu, std::sqrt(5.0)) == doctest::Approx(std::sqrt(1.0 / 3.0)));
}

TEST_CASE("uniform and normal fill in place with the asked range and moments") {
  Tensor t = empty({200, 300}, f64);
  const Tensor same = init::uniform(t, -2, 3);
  CHECK(same.storage() == t.storage());
  CHECK(amin(t).item() >= -2);
  CHECK(amax(t).item() < 3);
  CHECK(mean(t).item() == doctest::Approx(0.5).epsilon(0.02));
  init::normal(t, 1.5, 0.5);
  CHECK(mean(t).item() == doctest::Approx(1.5).epsilon(0.01));
  CHECK(stddev(t) == doctest::Approx(0.5).epsilon(0.02));
  CHECK(init::zeros(t).to_vector<double>() == std::vector<double>(60000, 0.0));
  CHECK(init::ones(t).to_vector<double>() == std::vector<double>(60000, 1.0));
}

TEST_CASE("xavier_uniform bounds by gain·√(6/(fan_in+fan_out)), xavier_normal has std gain·√(2/(fan_in+fan_out))") {
  Tensor t = empty({200, 300}, f64);  // fan_in 300, fan_out 200
  const double bound = 2 * std::sqrt(6.0 / 500);
  init::xavier_uniform(t, {.gain = 2});
  CHECK(max_abs(t) <= bound);
  CHECK(max_abs(t) > 0.99 * bound);
  CHECK(stddev(t) == doctest::Approx(bound / std::sqrt(3.0)).epsilon(0.02));
  init::xavier_normal(t, {.gain = 2});
  CHECK(stddev(t) == doctest::Approx(2 * std::sqrt(2.0 / 500)).epsilon(0.02));
  CHECK(std::abs(mean(t).item()) < 0.002);
}

TEST_CASE("kaiming_uniform bounds by gain·√(3/fan), kaiming_normal has std gain/√fan") {
  Tensor t = empty({150, 400}, f64);  // fan_in 400, fan_out 150
  init::kaiming_uniform(t);           // a = 0, leaky_relu: gain √2, fan_in
  CHECK(max_abs(t) <= std::sqrt(6.0 / 400));
  CHECK(max_abs(t) > 0.99 * std::sqrt(6.0 / 400));
  init::kaiming_uniform(t, {.a = std::sqrt(5.0)});  // PyTorch Linear: exactly 1/√fan_in
  CHECK(max_abs(t) <= 1.0 / 20);
  CHECK(max_abs(t) > 0.99 / 20);
  init::kaiming_normal(t, {.mode = init::FanMode::fan_out, .nonlinearity = init::Nonlinearity::relu});
  CHECK(stddev(t) == doctest::Approx(std::sqrt(2.0 / 150)).epsilon(0.02));
  init::kaiming_normal(t, {.nonlinearity = init::Nonlinearity::linear});
  CHECK(stddev(t) == doctest::Approx(1.0 / 20).epsilon(0.02));
}

TEST_CASE("init draws from the generator it is given, reproducibly, and fills strided views") {
  Generator a(9), b(9);
  const Tensor x = init::kaiming_normal(empty({4, 6}), {.gen = &a});
  const Tensor y = init::kaiming_normal(empty({4, 6}), {.gen = &b});
  CHECK(test::max_abs_diff(x, y) == 0);
  Tensor base = zeros({3, 4}, f64);
  init::uniform(base.mT(), 1, 2);  // a transposed view writes through to base
  CHECK(amin(base).item() >= 1);
}

TEST_CASE("init refuses integer tensors and leaves empty tensors alone") {
  CHECK_THROWS_WITH_AS(init::normal(zeros({2, 2}, i64)), "init::normal: tensor must be f32 or f64, got i64",
                       DTypeError);
  CHECK(init::xavier_uniform(empty({0, 3})).numel() == 0);
  CHECK_THROWS_WITH_AS(init::uniform(empty({2}), 1, 0), "init::uniform: low 1 > high 0", ValueError);
}
