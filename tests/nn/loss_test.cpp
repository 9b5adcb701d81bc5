// Losses against torch.nn.functional (fixtures nn/losses.*: every case, values and input gradients), by
// finite differences in f64, and their errors.
#include <doctest/doctest.h>

#include <cmath>
#include <utility>
#include <vector>

#include "autograd/gradcheck.h"
#include "nn/fixture.h"
#include "nn/loss.h"

using namespace tg;
using nn::KLDivLossOptions;

namespace {

Reduction reduction_of(const nlohmann::json& kwargs) {
  const std::string r = kwargs.at("reduction");
  return r == "mean" ? Reduction::mean : r == "sum" ? Reduction::sum : Reduction::none;
}

bool has_class_target(const std::string& fn) { return fn == "cross_entropy" || fn == "nll_loss"; }

KLDivLossOptions::Reduction kl_reduction_of(const nlohmann::json& kwargs) {
  using R = KLDivLossOptions::Reduction;
  const std::string r = kwargs.at("reduction");
  return r == "batchmean" ? R::batchmean : r == "mean" ? R::mean : r == "sum" ? R::sum : R::none;
}

// The fixture call `fn(input, target, **kwargs)` with our functions; `target` is the float target (unused for
// the class-index targets of cross_entropy and nll_loss, which are read from the case).
Variable run_loss(const nlohmann::json& c, const Variable& input, const Variable& target, DType dt) {
  const std::string fn = c.at("fn");
  const nlohmann::json& kw = c.at("kwargs");
  const nlohmann::json& in = c.at("inputs");
  const Tensor weight = in.contains("weight") ? test::fixture_tensor(in["weight"], dt) : Tensor();
  const Reduction r = reduction_of(kw);  // kl_div reads its own
  if (fn == "cross_entropy")
    return nn::cross_entropy(input, test::fixture_tensor(in["target"], i64),
                             {.reduction = r,
                              .ignore_index = kw.value("ignore_index", int64_t(-100)),
                              .label_smoothing = kw.value("label_smoothing", 0.0),
                              .weight = weight});
  if (fn == "nll_loss")
    return nn::nll_loss(input, test::fixture_tensor(in["target"], i64),
                        {.reduction = r, .ignore_index = kw.value("ignore_index", int64_t(-100)), .weight = weight});
  if (fn == "mse_loss") return nn::mse_loss(input, target, {.reduction = r});
  if (fn == "l1_loss") return nn::l1_loss(input, target, {.reduction = r});
  if (fn == "smooth_l1_loss") return nn::smooth_l1_loss(input, target, {.reduction = r, .beta = kw.at("beta")});
  if (fn == "huber_loss") return nn::huber_loss(input, target, {.reduction = r, .delta = kw.at("delta")});
  if (fn == "kl_div")
    return nn::kl_div(input, target, {.reduction = kl_reduction_of(kw), .log_target = kw.at("log_target")});
  if (fn == "binary_cross_entropy") return nn::binary_cross_entropy(input, target, {.reduction = r, .weight = weight});
  REQUIRE(fn == "binary_cross_entropy_with_logits");
  return nn::binary_cross_entropy_with_logits(input, target, {.reduction = r});
}

// A case's gradient c[key], except at the two points where ours differs from PyTorch's on purpose:
// - kl_div's target gradient at t = 0, where t·log t has no derivative (its slope tends to -inf): PyTorch's
//   xlogy gives NaN, kl_div here the derivative of t·(log 1 - input), -input (times the reduction's 1/N);
// - smooth_l1_loss with β = 0 where d = 0: PyTorch's backward takes its x <= -β branch there and gives -1 (for
//   the input); here β = 0 is l1_loss, whose gradient at 0 is 0, as PyTorch's l1_loss's is.
Tensor expected_grad(const nlohmann::json& c, const std::string& key, const Variable& x, const Variable& t, DType dt) {
  Tensor want = test::fixture_tensor(c.at(key), dt);
  const nlohmann::json& kw = c.at("kwargs");
  if (c["fn"] == "kl_div" && key == "grad_target" && !kw.at("log_target").get<bool>()) {
    const std::string r = kw.at("reduction");
    const double n = r == "mean" ? double(x.value().numel()) : r == "batchmean" ? double(x.size(0)) : 1.0;
    want = where(eq(t.value(), 0.0), -x.value() / n, want);
  }
  if (c["fn"] == "smooth_l1_loss" && kw.at("beta").get<double>() == 0)
    want = where(eq(x.value(), t.value()), zeros_like(want), want);
  return want;
}

}  // namespace

// Tolerances 1e-10 (f64) and 1e-5 (f32), relative to the largest value (BCE's gradients at probabilities of 0 and 1
// are ±1e12); measured worst errors on nn/losses are 1.8e-15 and 9.5e-7 (on f32 values near 8). Float targets
// take gradients, checked where the fixture has them (nn/losses2).
TEST_CASE("losses match torch.nn.functional: every fixture case, value, input and target gradient") {
  const auto run = [](const nlohmann::json& c, DType dt, const std::string& name) {
    Variable x(test::fixture_tensor(c["inputs"]["input"], dt), true);
    const bool classes = has_class_target(c["fn"]);
    const Variable t = classes ? Variable() : Variable(test::fixture_tensor(c["inputs"]["target"], dt), true);
    Variable out = run_loss(c, x, t, dt);
    const auto check = [&](const Tensor& got, const Tensor& want, const std::string& what) {
      test::check_close(got, want, test::fixture_tolerance(dt, want), name + " " + what);
    };
    check(out.value(), test::fixture_tensor(c["output"], dt), "output");
    sum(out).backward();
    check(x.grad(), expected_grad(c, "grad_input", x, t, dt), "grad_input");
    if (c.contains("grad_target")) check(t.grad(), expected_grad(c, "grad_target", x, t, dt), "grad_target");
  };
  CHECK(test::for_each_fixture_case("nn/losses", run) == std::vector<int>{25, 25});  // no case skipped
  CHECK(test::for_each_fixture_case("nn/losses2", run) == std::vector<int>{31, 31});
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

// An ignored row picks its entry 0 with weight 0: a -inf there gave 0·inf = NaN, and an all-ignored mean a NaN
// gradient (dy/0·0) where PyTorch's is 0.
TEST_CASE("nll_loss: an ignored row at -inf adds 0; a mean over no targets is NaN with gradient 0") {
  const Variable logp(tensor({-INFINITY, -0.5, -1.0, -2.0}, {2, 2}, f64), true);
  Variable loss = nn::nll_loss(logp, index_tensor({-100, 0}, {2}), {.reduction = Reduction::sum});
  CHECK(loss.item() == 1.0);
  loss.backward();
  CHECK(logp.grad().to_vector<double>() == std::vector<double>{0, 0, -1, 0});
  const Variable all(tensor({-INFINITY, -0.5}, {1, 2}, f64), true);
  Variable none = nn::nll_loss(all, index_tensor({-100}, {1}));
  CHECK(std::isnan(none.item()));
  none.backward();
  CHECK(all.grad().to_vector<double>() == std::vector<double>{0, 0});
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

// Differences a - b and probabilities away from the kinks (|d| = 0, β, δ) and from BCE's clamps.
TEST_CASE("l1, smooth L1, Huber, KL divergence and BCE pass gradcheck and gradgradcheck in f64") {
  Generator gen(13);
  const Variable a(randn({2, 3}, f64, &gen), true), b(randn({2, 3}, f64, &gen), true);
  using KL = nn::KLDivLossOptions::Reduction;
  const Tensor w = tensor({0.5, 2.0, 1.0}, f64);
  const std::vector<std::pair<const char*, GradFn>> fns = {
      {"l1_loss", [](const std::vector<Variable>& x) { return nn::l1_loss(x[0], x[1]); }},
      {"smooth_l1_loss",
       [](const std::vector<Variable>& x) {
         return nn::smooth_l1_loss(x[0], x[1], {.reduction = Reduction::none, .beta = 0.8});
       }},
      {"huber_loss",
       [](const std::vector<Variable>& x) {
         return nn::huber_loss(x[0], x[1], {.reduction = Reduction::sum, .delta = 0.7});
       }},
      {"kl_div",
       [](const std::vector<Variable>& x) {
         return nn::kl_div(log_softmax(x[0], 1), softmax(x[1], 1), {.reduction = KL::batchmean});
       }},
      {"kl_div log_target",
       [](const std::vector<Variable>& x) {
         return nn::kl_div(x[0], x[1], {.reduction = KL::none, .log_target = true});
       }},
      {"binary_cross_entropy",
       [&w](const std::vector<Variable>& x) {
         return nn::binary_cross_entropy(sigmoid(x[0]), sigmoid(x[1]), {.weight = w});
       }},
  };
  for (const auto& [name, fn] : fns) {
    const std::string op = name;  // CAPTURE cannot see a structured binding (clang 14)
    CAPTURE(op);
    CHECK(gradcheck(fn, {a, b}));
    CHECK(gradgradcheck(fn, {a, b}));
  }
}

// By hand: d = (0, 0.5, 2, -3) with β = 1 gives ½d² = (0, 0.125) inside and |d| - ½ = (1.5, 2.5) outside, with
// gradients (0, 0.5, 1, -1); at |d| = β both pieces have slope 1, which PyTorch gives.
TEST_CASE("smooth_l1_loss and l1_loss have PyTorch's gradients at a tie and at the threshold") {
  Variable x(tensor({1.0, 1.5, 3.0, -2.0}, f64), true);
  const Variable y(tensor({1.0, 1.0, 1.0, 1.0}, f64));
  Variable loss = nn::smooth_l1_loss(x, y, {.reduction = Reduction::none});
  CHECK(loss.value().to_vector<double>() == std::vector<double>{0, 0.125, 1.5, 2.5});
  sum(loss).backward();
  CHECK(x.grad().to_vector<double>() == std::vector<double>{0, 0.5, 1, -1});
  Variable x1(tensor({1.0, 2.0}, f64), true);
  nn::smooth_l1_loss(x1, Variable(tensor({1.0, 1.0}, f64)), {.reduction = Reduction::sum, .beta = 1.0}).backward();
  CHECK(x1.grad().to_vector<double>() == std::vector<double>{0, 1});  // |d| = β exactly: 1, as PyTorch
  Variable x2(tensor({1.0, 2.0}, f64), true);
  nn::smooth_l1_loss(x2, Variable(tensor({1.0, 1.0}, f64)), {.reduction = Reduction::sum, .beta = 0.0}).backward();
  CHECK(x2.grad().to_vector<double>() == std::vector<double>{0, 1});  // β = 0 is l1_loss
}

// -log 0 is inf; PyTorch clamps each log at -100, so certainty in the wrong class costs 100.
TEST_CASE("binary_cross_entropy clamps its logs at -100 and stays finite at probabilities 0 and 1") {
  Variable p(tensor({0.0, 1.0, 0.0, 1.0}, f64), true);
  const Variable y(tensor({1.0, 0.0, 0.0, 1.0}, f64));
  Variable loss = nn::binary_cross_entropy(p, y, {.reduction = Reduction::none});
  CHECK(loss.value().to_vector<double>() == std::vector<double>{100, 100, 0, 0});
  sum(loss).backward();
  const double big = 1 / double(1e-12f);  // PyTorch's ε = 1e-12, a float
  CHECK(p.grad().to_vector<double>() == std::vector<double>{-big, big, 0, 0});
}

TEST_CASE("kl_div: batchmean divides the sum by the batch, and a zero target adds 0, not NaN") {
  const Variable logq(log(tensor({0.5, 0.5, 0.25, 0.75}, {2, 2}, f64)));
  const Variable p(tensor({1.0, 0.0, 0.5, 0.5}, {2, 2}, f64));
  const double kl0 = std::log(2.0), kl1 = 0.5 * std::log(2.0) + 0.5 * std::log(0.5 / 0.75);
  using KL = nn::KLDivLossOptions::Reduction;
  CHECK(nn::kl_div(logq, p, {.reduction = KL::batchmean}).item() == doctest::Approx((kl0 + kl1) / 2).epsilon(1e-14));
  CHECK(nn::kl_div(logq, p, {.reduction = KL::sum}).item() == doctest::Approx(kl0 + kl1).epsilon(1e-14));
  CHECK(nn::kl_div(logq, p).item() == doctest::Approx((kl0 + kl1) / 4).epsilon(1e-14));  // mean: every element
  CHECK(nn::kl_div(logq, p, {.reduction = KL::none}).value().to_vector<double>()[1] == 0);
}

TEST_CASE("the losses name bad shapes, targets, weights and options") {
  const Variable a(zeros({2, 3})), b(zeros({3, 2})), half(full({2, 3}, 0.5));
  CHECK_THROWS_WITH_AS(nn::l1_loss(a, b), "l1_loss: input and target shapes differ: (2, 3) vs (3, 2)", ShapeError);
  CHECK_THROWS_WITH_AS(nn::smooth_l1_loss(a, b), "smooth_l1_loss: input and target shapes differ: (2, 3) vs (3, 2)",
                       ShapeError);
  CHECK_THROWS_WITH_AS(nn::huber_loss(a, b), "huber_loss: input and target shapes differ: (2, 3) vs (3, 2)",
                       ShapeError);
  CHECK_THROWS_WITH_AS(nn::kl_div(a, b), "kl_div: input and target shapes differ: (2, 3) vs (3, 2)", ShapeError);
  CHECK_THROWS_WITH_AS(nn::binary_cross_entropy(a, b),
                       "binary_cross_entropy: input and target shapes differ: (2, 3) vs (3, 2)", ShapeError);
  CHECK_THROWS_WITH_AS(nn::smooth_l1_loss(a, a, {.beta = -0.5}), "smooth_l1_loss: beta must be >= 0, got -0.5",
                       ValueError);
  CHECK_THROWS_WITH_AS(nn::huber_loss(a, a, {.delta = 0}), "huber_loss: delta must be > 0, got 0", ValueError);
  CHECK_THROWS_WITH_AS(nn::binary_cross_entropy(Variable(tensor({0.5, 1.25}, {1, 2})), Variable(zeros({1, 2}))),
                       "binary_cross_entropy: input probabilities must be in [0, 1], got 1.25", ValueError);
  CHECK_THROWS_WITH_AS(nn::binary_cross_entropy(Variable(tensor({NAN}, {1})), Variable(zeros({1}))),
                       "binary_cross_entropy: input probabilities must be in [0, 1], got nan", ValueError);
  CHECK_THROWS_WITH_AS(nn::binary_cross_entropy(half, half, {.weight = tensor({1.0, -2.0, 1.0})}),
                       "binary_cross_entropy: weight must be >= 0, got -2 for element 1", ValueError);
  CHECK_THROWS_WITH_AS(nn::binary_cross_entropy(half, half, {.weight = ones({2, 2, 3})}),
                       "binary_cross_entropy: weight (2, 2, 3) does not broadcast to input (2, 3)", ShapeError);
  const Tensor labels = index_tensor({0, 2}, {2});
  CHECK_THROWS_WITH_AS(nn::nll_loss(a, labels, {.weight = tensor({1.0, 1.0, -1.0})}),
                       "nll_loss: weight must be >= 0, got -1 for class 2", ValueError);
  CHECK_THROWS_WITH_AS(nn::cross_entropy(a, labels, {.weight = tensor({1.0, -0.5, 1.0})}),
                       "cross_entropy: weight must be >= 0, got -0.5 for class 1", ValueError);
  CHECK_THROWS_WITH_AS(nn::cross_entropy(a, labels, {.label_smoothing = 1.5}),
                       "cross_entropy: label_smoothing must be in [0, 1], got 1.5", ValueError);
  CHECK_THROWS_WITH_AS(nn::cross_entropy(a, index_tensor({0, 3}, {2})),
                       "cross_entropy: target 3 is out of range for 3 classes", IndexError);
}
