// Losses against torch.nn.functional (fixtures nn/losses.*: every case, values and input gradients), by
// finite differences in f64, and their errors.
#include <doctest/doctest.h>

#include <cmath>

#include "autograd/gradcheck.h"
#include "nn/fixture.h"
#include "nn/loss.h"

using namespace tg;
using nn::Reduction;

namespace {

Reduction reduction_of(const nlohmann::json& kwargs) {
  const std::string r = kwargs.at("reduction");
  return r == "mean" ? Reduction::mean : r == "sum" ? Reduction::sum : Reduction::none;
}

// The fixture call `fn(input, target, **kwargs)` with our functions.
Variable run_loss(const nlohmann::json& c, const Variable& input, DType dt) {
  const std::string fn = c.at("fn");
  const nlohmann::json& kw = c.at("kwargs");
  const nlohmann::json& in = c.at("inputs");
  const Tensor weight = in.contains("weight") ? test::fixture_tensor(in["weight"], dt) : Tensor();
  if (fn == "cross_entropy")
    return nn::cross_entropy(input, test::fixture_tensor(in["target"], i64),
                             {.reduction = reduction_of(kw),
                              .ignore_index = kw.value("ignore_index", int64_t(-100)),
                              .label_smoothing = kw.value("label_smoothing", 0.0),
                              .weight = weight});
  if (fn == "nll_loss")
    return nn::nll_loss(
        input, test::fixture_tensor(in["target"], i64),
        {.reduction = reduction_of(kw), .ignore_index = kw.value("ignore_index", int64_t(-100)), .weight = weight});
  const Variable target(test::fixture_tensor(in["target"], dt));
  if (fn == "mse_loss") return nn::mse_loss(input, target, {.reduction = reduction_of(kw)});
  REQUIRE(fn == "binary_cross_entropy_with_logits");
  return nn::binary_cross_entropy_with_logits(input, target, {.reduction = reduction_of(kw)});
}

}  // namespace

// Tolerances 1e-10 (f64) and 1e-5 (f32); measured worst errors are 1.8e-15 and 9.5e-7 (on f32 values near 8).
TEST_CASE("losses match torch.nn.functional: every fixture case, value and input gradient") {
  for (const char* file : {"nn/losses.f64.json", "nn/losses.f32.json"}) {
    const nlohmann::json f = test::load_fixture(file);
    const DType dt = test::fixture_dtype(f);
    int ran = 0;
    for (const nlohmann::json& c : f["cases"]) {
      const std::string name = std::string(file) + " " + c["name"].get<std::string>();
      CAPTURE(name);
      Variable x(test::fixture_tensor(c["inputs"]["input"], dt), true);
      Variable out = run_loss(c, x, dt);
      test::check_close(out.value(), test::fixture_tensor(c["output"], dt), test::fixture_tolerance(dt),
                        name + " output");
      sum(out).backward();
      test::check_close(x.grad(), test::fixture_tensor(c["grad_input"], dt), test::fixture_tolerance(dt),
                        name + " grad");
      ++ran;
    }
    CHECK(ran == 25);  // no case skipped
  }
}

TEST_CASE("nll_loss, mse_loss and binary_cross_entropy_with_logits pass gradcheck in f64") {
  Generator gen(12);
  const Variable logp(log_softmax(randn({3, 4, 2}, f64, &gen), 1), true);
  const Tensor target = index_tensor({0, 3, -100, 1, 2, 2}, {3, 2});
  const Tensor weight = tensor({0.5, 1.0, 1.5, 2.0}, f64);
  CHECK(gradcheck([&](const std::vector<Variable>& x) { return nn::nll_loss(x[0], target, {.weight = weight}); },
                  {logp}));
  CHECK(gradcheck(
      [&](const std::vector<Variable>& x) { return nn::nll_loss(x[0], target, {.reduction = Reduction::none}); },
      {logp}));
  const Variable a(randn({2, 3}, f64, &gen), true), b(randn({2, 3}, f64, &gen), true);
  CHECK(gradcheck([](const std::vector<Variable>& x) { return nn::mse_loss(x[0], x[1]); }, {a, b}));
  const Variable y(rand({2, 3}, f64, &gen), true);
  CHECK(gradcheck([](const std::vector<Variable>& x) { return nn::binary_cross_entropy_with_logits(x[0], x[1]); },
                  {a, y}));
}

// d/dx [softplus(x) - x·y] = σ(x) - y, which is 1/2 - y at x = 0: the point a zero-initialised classifier
// starts at, where relu/abs compositions of the stable form would give -y.
TEST_CASE("binary_cross_entropy_with_logits has gradient σ(x) - y at x = 0 and stays finite for huge logits") {
  Variable x(tensor({0.0, 0.0, 1000.0, -1000.0}, f64), true);
  const Variable y(tensor({1.0, 0.0, 0.0, 1.0}, f64));
  Variable loss = nn::binary_cross_entropy_with_logits(x, y, {.reduction = Reduction::none});
  CHECK(test::max_abs_diff(loss.value(), tensor({std::log(2.0), std::log(2.0), 1000.0, 1000.0}, f64)) < 1e-12);
  sum(loss).backward();
  CHECK(x.grad().to_vector<double>() == std::vector<double>{-0.5, 0.5, 1.0, -1.0});
}

TEST_CASE("nll_loss ignores -inf log-probabilities it does not pick") {
  const Variable logp(tensor({-INFINITY, -0.5, -1.0, -INFINITY}, {2, 2}, f64), true);
  Variable loss = nn::nll_loss(logp, index_tensor({1, 0}, {2}), {.reduction = Reduction::sum});
  CHECK(loss.item() == 1.5);
  loss.backward();
  CHECK(logp.grad().to_vector<double>() == std::vector<double>{0, -1, -1, 0});
}

// cross_entropy summed the per-row terms after dividing each by the weight total, so no rows gave 0, not 0/0.
TEST_CASE("cross_entropy and nll_loss of an empty batch are NaN under mean and 0 under sum, as in PyTorch") {
  const Variable logits(zeros({0, 3}), true);
  const Tensor none = index_tensor({}, {0});
  CHECK(std::isnan(nn::cross_entropy(logits, none).item()));
  CHECK(std::isnan(nn::cross_entropy(logits, none, {.label_smoothing = 0.1}).item()));
  CHECK(std::isnan(nn::nll_loss(logits, none).item()));
  CHECK(nn::cross_entropy(logits, none, {.reduction = Reduction::sum}).item() == 0);
  nn::cross_entropy(logits, none).backward();
  CHECK(logits.grad().shape() == Shape{0, 3});
}

TEST_CASE("losses name a label out of range with the class count") {
  const Variable logits(zeros({2, 3}));
  CHECK_THROWS_WITH_AS(nn::nll_loss(logits, index_tensor({0, 3}, {2})),
                       "nll_loss: target 3 is out of range for 3 classes", IndexError);
  CHECK_THROWS_WITH_AS(nn::cross_entropy(logits, index_tensor({-2, 0}, {2})),
                       "cross_entropy: target -2 is out of range for 3 classes", IndexError);
}

TEST_CASE("losses name both shapes when they do not fit") {
  const Variable a(zeros({2, 3})), b(zeros({3, 2}));
  CHECK_THROWS_WITH_AS(nn::mse_loss(a, b), "mse_loss: input and target shapes differ: (2, 3) vs (3, 2)", ShapeError);
  CHECK_THROWS_WITH_AS(nn::binary_cross_entropy_with_logits(a, b),
                       "binary_cross_entropy_with_logits: logits and target shapes differ: (2, 3) vs (3, 2)",
                       ShapeError);
  CHECK_THROWS_WITH_AS(nn::nll_loss(a, index_tensor({0, 1, 2}, {3})),
                       "nll_loss: target shape (3,) does not match log_probs (2, 3): expected (2,)", ShapeError);
  CHECK_THROWS_WITH_AS(nn::cross_entropy(a, index_tensor({0, 1}, {2}), {.weight = ones({2})}),
                       "cross_entropy: weight must be (3,) for 3 classes, got (2,)", ShapeError);
}
