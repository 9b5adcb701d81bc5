// The activation layers: each equals its autograd function and passes gradcheck in f64.
#include <doctest/doctest.h>

#include <memory>

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
  const Variable x(tensor({-1.3, -0.4, 0.2, 0.7, 1.1, 2.5}, {2, 3}, f64), true);  // away from relu's kink
  for (const auto& layer : layers) {
    CAPTURE(layer->type_name());
    CHECK(gradcheck([&](const std::vector<Variable>& in) { return (*layer)(in[0]); }, {x}));
  }
}
