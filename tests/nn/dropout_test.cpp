// Dropout: identity in eval and at p = 0, zeros at p = 1, and in training a kept fraction of about 1-p
// scaled by 1/(1-p) (loose statistical bounds), reproducible from a seeded generator.
#include <doctest/doctest.h>

#include "autograd/gradcheck.h"
#include "nn/dropout.h"
#include "nn/fixture.h"

using namespace tg;

TEST_CASE("Dropout is the identity in eval mode and at p = 0") {
  const Variable x(randn({4, 5}));
  nn::Dropout d(0.5);
  d.eval();
  CHECK(test::max_abs_diff(d(x).value(), x.value()) == 0);
  nn::Dropout none(0.0);
  CHECK(test::max_abs_diff(none(x).value(), x.value()) == 0);
}

TEST_CASE("Dropout at p = 1 zeroes everything, and its gradient too") {
  nn::Dropout d(1.0);
  Variable x(randn({3, 4}, f64), true);
  Variable y = d(x);
  CHECK(amax(abs(y.value())).item() == 0);
  sum(y).backward();
  CHECK(amax(abs(x.grad())).item() == 0);
}

// 100 000 elements: the kept fraction has σ = √(0.3·0.7/1e5) ≈ 0.0015, the mean σ ≈ 0.002.
TEST_CASE("Dropout in training keeps about 1-p of the elements, scaled by 1/(1-p), preserving the mean") {
  Generator gen(11);
  nn::Dropout d(0.3, &gen);
  Variable x(ones({100000}, f64), true);
  Variable y = d(x);
  const std::vector<double> v = y.value().to_vector<double>();
  int64_t kept = 0, unscaled = 0;
  for (double e : v) {
    kept += e != 0;
    unscaled += e != 0 && e != 1.0 / 0.7;
  }
  CHECK(unscaled == 0);
  CHECK(double(kept) / 1e5 == doctest::Approx(0.7).epsilon(0.015));
  CHECK(mean(y.value()).item() == doctest::Approx(1.0).epsilon(0.015));
  sum(y).backward();  // dx = the same mask: y itself for x = 1
  CHECK(test::max_abs_diff(x.grad(), y.value()) == 0);
}

TEST_CASE("Dropout draws from its generator: the same seed gives the same mask") {
  Generator gen(5);
  nn::Dropout d(0.5, &gen);
  const Variable x(ones({64}));
  const Tensor first = d(x).value();
  const Tensor second = d(x).value();
  CHECK(test::max_abs_diff(first, second) > 0);  // the stream moves on
  gen.manual_seed(5);
  CHECK(test::max_abs_diff(d(x).value(), first) == 0);
}

TEST_CASE("Dropout passes gradcheck in f64 with the same mask in every evaluation") {
  const Variable x(randn({3, 4}, f64), true);
  CHECK(gradcheck(
      [](const std::vector<Variable>& in) {
        Generator gen(8);  // a fresh generator per evaluation: the same mask each time
        nn::Dropout d(0.4, &gen);
        return d(in[0]);
      },
      {x}));
}

TEST_CASE("Dropout refuses a probability outside [0, 1]") {
  CHECK_THROWS_WITH_AS(nn::Dropout(1.5), "Dropout: probability must be in [0, 1], got 1.5", ValueError);
  CHECK_THROWS_AS(nn::Dropout(-0.1), ValueError);
}

TEST_CASE("Dropout::forward_relu gives forward(relu(x))'s values, mask and gradient; relu alone in eval") {
  Generator a(11), b(11);
  nn::Dropout fused(0.3, &a), apart(0.3, &b);
  Variable x(randn({6, 40}), true), x2(x.value().clone(), true);
  const Variable y = fused.forward_relu(x), y2 = apart(relu(x2));
  CHECK(test::max_abs_diff(y.value(), y2.value()) == 0);
  const Tensor dy = randn(y.shape());
  y.backward(dy);
  y2.backward(dy);
  CHECK(test::max_abs_diff(x.grad(), x2.grad()) == 0);
  CHECK(amax(abs(x.grad())).item() > 0);
  fused.eval();
  CHECK(test::max_abs_diff(fused.forward_relu(x).value(), relu(x.value())) == 0);
}

TEST_CASE("Dropout::forward_relu runs relu then the layer when a forward hook would see its input") {
  nn::Dropout d(0.5);
  Tensor seen;
  d.register_forward_hook([&](nn::Layer&, const Variable& in, const Variable&) { seen = in.value(); });
  const Variable x(randn({3, 4}));
  d.forward_relu(x);
  REQUIRE(seen.defined());
  CHECK(test::max_abs_diff(seen, relu(x.value())) == 0);
}

TEST_CASE("relu_dropout refuses a probability outside [0, 1], in training or not") {
  const Variable x(randn({2, 3}), true);
  CHECK_THROWS_WITH_AS(relu_dropout(x, 1.5, true), "relu_dropout: probability must be in [0, 1], got 1.5",
                       ValueError);
  CHECK_THROWS_WITH_AS(relu_dropout(x, -0.5, false), "relu_dropout: probability must be in [0, 1], got -0.5",
                       ValueError);
}
