// The activation layers: each equals its autograd function and passes gradcheck in f64; the activations of
// nn/activations.* match PyTorch's values and gradients, at the kinks and at extreme inputs too.
#include <doctest/doctest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "autograd/gradcheck.h"
#include "nn/activation.h"
#include "nn/fixture.h"

using namespace tg;

TEST_CASE("activation layers compute their functions") {
  const Variable x(tensor({-2.0, -0.5, 0.0, 0.5, 2.0}, f64));
  using A = nn::GELUOptions::Approximate;
  CHECK(test::max_abs_diff(nn::ReLU()(x).value(), tensor({0, 0, 0, 0.5, 2}, f64)) == 0);
  CHECK(test::max_abs_diff(nn::Tanh()(x).value(), tanh(x.value())) == 0);
  CHECK(test::max_abs_diff(nn::Sigmoid()(x).value(), sigmoid(x.value())) == 0);
  CHECK(test::max_abs_diff(nn::SiLU()(x).value(), silu(x.value())) == 0);
  CHECK(test::max_abs_diff(nn::GELU()(x).value(), gelu(x.value())) == 0);
  CHECK(test::max_abs_diff(nn::GELU({.approximate = A::tanh})(x).value(), gelu(x.value(), true)) == 0);
  CHECK(test::max_abs_diff(nn::GELU({.approximate = A::tanh})(x).value(), gelu(x.value())) > 1e-5);  // not the erf form
  CHECK(nn::GELU()(x).value().to_vector<double>()[3] ==
        doctest::Approx(0.5 * 0.5 * (1 + std::erf(0.5 / std::sqrt(2.0)))));
}

TEST_CASE("Softmax normalises along its dim") {
  const Variable x(tensor({1, 2, 3, 4, 5, 6}, {2, 3}, f64));
  const Tensor rows = nn::Softmax(1)(x).value(), cols = nn::Softmax(0)(x).value();
  CHECK(test::max_abs_diff(sum(rows, {1}), ones({2}, f64)) < 1e-15);
  CHECK(test::max_abs_diff(sum(cols, {0}), ones({3}, f64)) < 1e-15);
  CHECK(test::max_abs_diff(nn::Softmax(-1)(x).value(), rows) == 0);
  CHECK_THROWS_AS(nn::Softmax(2)(x), IndexError);
}

TEST_CASE("activation layers pass gradcheck in f64") {
  std::vector<std::unique_ptr<nn::Layer>> layers;
  layers.push_back(std::make_unique<nn::ReLU>());
  layers.push_back(std::make_unique<nn::GELU>());
  layers.push_back(std::make_unique<nn::GELU>(nn::GELUOptions{.approximate = nn::GELUOptions::Approximate::tanh}));
  layers.push_back(std::make_unique<nn::Tanh>());
  layers.push_back(std::make_unique<nn::Sigmoid>());
  layers.push_back(std::make_unique<nn::SiLU>());
  layers.push_back(std::make_unique<nn::Softmax>(0));
  layers.push_back(std::make_unique<nn::LeakyReLU>(nn::LeakyReLUOptions{.negative_slope = 0.1}));
  layers.push_back(std::make_unique<nn::ELU>(nn::ELUOptions{.alpha = 0.7}));
  layers.push_back(std::make_unique<nn::SELU>());
  layers.push_back(std::make_unique<nn::Softplus>(nn::SoftplusOptions{.beta = 2, .threshold = 3}));  // 2.5 linear
  layers.push_back(std::make_unique<nn::Hardtanh>(nn::HardtanhOptions{.min_val = -1, .max_val = 2}));
  layers.push_back(std::make_unique<nn::Mish>());
  const Variable x(tensor({-1.3, -0.4, 0.2, 0.7, 1.1, 2.5}, {2, 3}, f64), true);  // away from relu's kink
  for (const auto& layer : layers) {
    CAPTURE(layer->type_name());
    CHECK(gradcheck([&](const std::vector<Variable>& in) { return (*layer)(in[0]); }, {x}));
  }
}

namespace {

// The layer for a fixture case: F.<fn>(input, **kwargs) as torch.nn's module of that name.
std::unique_ptr<nn::Layer> activation_layer(const std::string& fn, const nlohmann::json& kw) {
  if (fn == "leaky_relu") return std::make_unique<nn::LeakyReLU>(nn::LeakyReLUOptions{kw.value("negative_slope", 0.01)});
  if (fn == "elu") return std::make_unique<nn::ELU>(nn::ELUOptions{kw.value("alpha", 1.0)});
  if (fn == "selu") return std::make_unique<nn::SELU>();
  if (fn == "softplus")
    return std::make_unique<nn::Softplus>(nn::SoftplusOptions{kw.value("beta", 1.0), kw.value("threshold", 20.0)});
  if (fn == "hardtanh")
    return std::make_unique<nn::Hardtanh>(nn::HardtanhOptions{kw.value("min_val", -1.0), kw.value("max_val", 1.0)});
  if (fn == "mish") return std::make_unique<nn::Mish>();
  REQUIRE(fn == "silu");
  return std::make_unique<nn::SiLU>();
}

}  // namespace

// Inputs 0, ±1, -0.5, 2 (kinks), 5, 20 (where softplus turns linear), ±30, ±100 and random ones; tolerances
// 1e-10 (f64) and 1e-5 (f32) relative to the largest value.
TEST_CASE("activations match torch.nn.functional at kinks and extremes: values and gradients, f64 and f32") {
  const auto ran = test::for_each_fixture_case("nn/activations", [](const nlohmann::json& c, DType dt,
                                                                    const std::string& name) {
    Variable x(test::fixture_tensor(c["input"], dt), true);
    Variable y = (*activation_layer(c["fn"], c["kwargs"]))(x);
    const Tensor want = test::fixture_tensor(c["output"], dt), dx = test::fixture_tensor(c["grad_input"], dt);
    test::check_close(y.value(), want, test::fixture_tolerance(dt, want), name + " output");
    CHECK(all_finite(y.value()));
    sum(y).backward();
    test::check_close(x.grad(), dx, test::fixture_tolerance(dt, dx), name + " grad");
  });
  CHECK(ran == std::vector<int>{12, 12});  // no case skipped
}

// PyTorch's conventions where the function has no derivative: the branch that holds x = 0 (x <= 0 for leaky_relu
// and elu), and 0 at hardtanh's bounds (clamp gives 1 there).
TEST_CASE("activation gradients at the kinks follow PyTorch") {
  const auto grad = [](const std::function<Variable(const Variable&)>& f, std::vector<double> at) {
    Variable x(tensor(at, f64), true);
    sum(f(x)).backward();
    return x.grad().to_vector<double>();
  };
  CHECK(grad([](const Variable& x) { return leaky_relu(x, 0.2); }, {0.0}) == std::vector<double>{0.2});
  CHECK(grad([](const Variable& x) { return elu(x, 2.0); }, {0.0}) == std::vector<double>{2.0});
  CHECK(grad([](const Variable& x) { return hardtanh(x, -0.5, 2.0); }, {-0.5, 0.0, 2.0}) ==
        std::vector<double>{0, 1, 0});
  CHECK(grad([](const Variable& x) { return softplus(x); }, {0.0, 21.0}) == std::vector<double>{0.5, 1.0});
}

TEST_CASE("activations name a bad option") {
  CHECK_THROWS_WITH_AS(nn::Softplus({.beta = 0}), "Softplus: beta must be finite and nonzero, got 0", ValueError);
  CHECK_THROWS_WITH_AS(nn::Hardtanh({.min_val = 1, .max_val = -1}), "Hardtanh: min_val 1 is greater than max_val -1",
                       ValueError);
  const Variable x(zeros({2}));
  CHECK_THROWS_WITH_AS(softplus(x, INFINITY), "softplus: beta must be finite and nonzero, got inf", ValueError);
  CHECK_THROWS_WITH_AS(hardtanh(x, 2, 1), "hardtanh: min_val 2 is greater than max_val 1", ValueError);
}
