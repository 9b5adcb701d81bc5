// Scans, layout ops and norms (issue 25) against PyTorch 1.13 (tests/fixtures/scan_ops.json, made by
// gen_scan_ops.py): values and gradients of (output·R).sum(). Then what a random gradcheck row cannot show:
// cumprod's gradient at zeros, vector_norm's at 0 and on huge values, clamp's at its bounds, and the errors.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <map>
#include <string>

#include "autograd/check.h"
#include "autograd/functions.h"
#include "autograd/gradcheck.h"
#include "nn/fixture.h"

using namespace tg;
using doctest::Contains;
using json = nlohmann::json;

namespace {

using Call = std::function<Variable(const Variable&)>;

// Each fixture case's call (its "call" field), written with tg's functions.
const std::map<std::string, Call>& calls() {
  static const std::map<std::string, Call> k = {
      {"cumsum_dim1", [](const Variable& x) { return cumsum(x, 1); }},
      {"cumsum_dim0_strided", [](const Variable& x) { return cumsum(x.mT(), 0); }},
      {"cumsum_f32_long", [](const Variable& x) { return cumsum(x, 0); }},
      {"cumsum_i64_wraps", [](const Variable& x) { return cumsum(x, 1); }},
      {"cumprod_dim1", [](const Variable& x) { return cumprod(x, 1); }},
      {"cumprod_zeros", [](const Variable& x) { return cumprod(x, 1); }},
      {"cumprod_zeros_dim0", [](const Variable& x) { return cumprod(x, 0); }},
      {"flip_0_2", [](const Variable& x) { return flip(x, {0, 2}); }},
      {"roll_dims", [](const Variable& x) { return roll(x, {1, -5}, {0, 1}); }},
      {"roll_flat", [](const Variable& x) { return roll(x, {2}); }},
      {"pad_constant", [](const Variable& x) { return pad(x, {1, 2, -1, 1}, PadMode::constant, 0.5); }},
      {"pad_reflect", [](const Variable& x) { return pad(x, {3, 2, 2, 1}, PadMode::reflect); }},
      {"pad_reflect_crop", [](const Variable& x) { return pad(x, {-1, 2}, PadMode::reflect); }},
      {"pad_replicate", [](const Variable& x) { return pad(x, {2, -1, 0, 3}, PadMode::replicate); }},
      {"repeat", [](const Variable& x) { return repeat(x, {2, 1, 3}); }},
      {"tile", [](const Variable& x) { return tile(x, {2}); }},
      {"tril_1", [](const Variable& x) { return tril(x, 1); }},
      {"triu_-1", [](const Variable& x) { return triu(x, -1); }},
      {"one_hot_inferred", [](const Variable& x) { return Variable(one_hot(x.value())); }},
      {"one_hot_6", [](const Variable& x) { return Variable(one_hot(x.value(), 6)); }},
      {"vector_norm_2", [](const Variable& x) { return vector_norm(x); }},
      {"vector_norm_2_dim1", [](const Variable& x) { return vector_norm(x, 2, {1}); }},
      {"vector_norm_1_dim1", [](const Variable& x) { return vector_norm(x, 1, {1}); }},
      {"vector_norm_3_dim0_keepdim", [](const Variable& x) { return vector_norm(x, 3, {0}, true); }},
      {"vector_norm_0.5_dim1", [](const Variable& x) { return vector_norm(x, 0.5, {1}); }},
      {"vector_norm_inf_dim1", [](const Variable& x) { return vector_norm(x, INFINITY, {1}); }},
      {"vector_norm_-inf_dim1", [](const Variable& x) { return vector_norm(x, -INFINITY, {1}); }},
      {"vector_norm_0_dim1", [](const Variable& x) { return vector_norm(x, 0, {1}); }},
      {"vector_norm_2_dims02", [](const Variable& x) { return vector_norm(x, 2, {0, 2}); }},
      {"clamp_both", [](const Variable& x) { return clamp(x, -0.5, 0.7); }},
      {"clamp_min", [](const Variable& x) { return clamp(x, 0.0, std::nullopt); }},
      {"clamp_max", [](const Variable& x) { return clamp(x, std::nullopt, 0.5); }},
      {"clamp_equal", [](const Variable& x) { return clamp(x, 0.5, 0.5); }},
  };
  return k;
}

DType case_dtype(const json& c) {
  const std::string d = c.at("dtype");
  return d == "float64" ? f64 : d == "float32" ? f32 : i64;
}

}  // namespace

TEST_CASE("scan, layout and norm ops give PyTorch's values and gradients") {
  const json f = test::load_fixture("scan_ops.json");
  CHECK(f.at("cases").size() == calls().size());
  for (const json& c : f.at("cases")) {
    const std::string name = c.at("name");
    CAPTURE(name);
    REQUIRE_MESSAGE(calls().count(name), "no call for the fixture case");
    const DType dt = case_dtype(c);
    Variable x(test::fixture_tensor(c.at("input"), dt), dt != i64);
    const Variable y = calls().at(name)(x);
    if (y.dtype() == i64) {  // exact, beyond double's 53 bits
      CHECK(y.value().to_vector<int64_t>() == test::fixture_tensor(c.at("output"), i64).to_vector<int64_t>());
      continue;
    }
    const Tensor want = test::fixture_tensor(c.at("output"), y.dtype());
    // f32 running sums are PyTorch's bits: both accumulate in double and round once
    test::check_close(y.value(), want, dt == f32 ? 0.0 : test::fixture_tolerance(dt, want), name + " output");
    if (!c.contains("R")) continue;
    sum(y * Variable(test::fixture_tensor(c.at("R"), dt))).backward();
    if (c.at("grad_input").is_null()) {  // the 0-"norm" is a count: no gradient, as PyTorch's
      CHECK_FALSE(x.grad().defined());
      continue;
    }
    const Tensor dx = test::fixture_tensor(c.at("grad_input"), dt);
    test::check_close(x.grad(), dx, test::fixture_tolerance(dt, dx), name + " grad");
  }
}

// A zero inside a line: the products after it are 0 whatever x_k (k > z), and the derivative at the first zero
// is the products with that zero read as 1; a second zero makes the first one's derivative stop there. The second
// derivatives there come from the O(n²) form that create_graph takes.
TEST_CASE("cumprod's gradient is exact at zeros, one or several in a line") {
  const std::vector<std::vector<double>> lines = {
      {2, 0, 3, 0.5, -1.5}, {0, 2, 3, 0.5, 4}, {2, 3, 0.5, 4, 0}, {1.5, 0, 3, 0, 2}, {0, 0, 2, 3, 1}, {0, 0, 0, 0, 0}};
  const GradFn f = [](const std::vector<Variable>& x) { return cumprod(x[0], 0); };
  for (const auto& line : lines) {
    CAPTURE(line[0]);
    CHECK(gradcheck(f, {test::leaf(line)}));
    CHECK(gradgradcheck(f, {test::leaf(line)}));
  }
  // (2, 0, 3, 0, 2): y = (2, 0, 0, 0, 0). dy = 1: dx_0 = 1, dx_1 = 2 + 2·3 = 8 (the products with x_1 read as 1
  // up to the second zero), everything after the first zero 0.
  const Variable x = test::leaf({2, 0, 3, 0, 2});
  sum(cumprod(x, 0)).backward();
  test::check_values(x.grad(), {1, 8, 0, 0, 0});
}

TEST_CASE("vector_norm's gradient is 0 on a zero line for every ord, and at x = 0 for p < 1") {
  for (double ord : {2.0, 1.0, 3.0, 0.5, double(INFINITY), -double(INFINITY)}) {
    CAPTURE(ord);
    const Variable x = test::leaf({0, 0, 0, 0}, {2, 2});
    sum(vector_norm(x, ord, {1})).backward();
    test::check_values(x.grad(), {0, 0, 0, 0});
  }
  const Variable x = test::leaf({0, 4, -1});
  vector_norm(x, 0.5).backward();  // ‖x‖ = (2 + 1)² = 9; d/dx_i = sign·(|x_i|/9)^(-1/2) = sign·3/√|x_i|
  test::check_values(x.grad(), {0, 1.5, -3});
}

TEST_CASE("vector_norm scales by the largest |x|: huge and tiny finite values neither overflow nor underflow") {
  // PyTorch 1.13 squares as given: ‖(1e200, 1e200)‖₂ = inf there, and 0 for (1e-200, 1e-200).
  for (double s : {1e200, 1e-200}) {
    CAPTURE(s);
    const Variable x = test::leaf({s, -s});
    const Variable n = vector_norm(x);
    test::check_values(n.value(), {s * std::sqrt(2.0)});
    n.backward();
    test::check_values(x.grad(), {1 / std::sqrt(2.0), -1 / std::sqrt(2.0)});
    test::check_values(vector_norm(x, 3).value(), {s * std::cbrt(2.0)});
  }
  test::check_values(vector_norm(tensor({3e30, 4e30}, f32)), {5e30}, 1e-6);  // f32: squares past 3.4e38
  CHECK(std::isinf(vector_norm(tensor({1.0, INFINITY}, f64)).item()));
  CHECK(std::isnan(vector_norm(tensor({1.0, NAN}, f64), 3).item()));
  CHECK(vector_norm(zeros({0}, f64)).item() == 0);  // an empty sum
}

// PyTorch's clamp_backward: dy where lo <= x <= hi (both bounds included, also when lo == hi), 0 outside and at NaN.
TEST_CASE("clamp passes the gradient at its bounds, inclusive, and stops it outside") {
  const Variable x = test::leaf({-1, -0.5, 0, 0.7, 1, NAN});
  sum(clamp(x, -0.5, 0.7)).backward();
  test::check_values(x.grad(), {0, 1, 1, 1, 0, 0});
  const Variable e = test::leaf({0.4, 0.5, 0.6});
  sum(clamp(e, 0.5, 0.5)).backward();
  test::check_values(e.grad(), {0, 1, 0});
}

TEST_CASE("scan and layout ops on edge shapes") {
  test::check_values(cumsum(scalar_tensor(3, f64), 0), {3});                   // 0-d: its own sum
  Tensor counts = cumsum(tensor({1, 0, 1}, boolean), 0);                       // bool counts as i64
  CHECK(counts.dtype() == i64);
  test::check_values(counts, {1, 1, 2});
  test::check_values(flip(tensor({1, 2, 3}), {}), {1, 2, 3});                  // no dims: a copy
  test::check_values(roll(zeros({0, 2}), {3}, {0}), {});                       // an empty dim rolls
  CHECK(pad(ones({3, 4}), {-4, 0}).shape() == Shape{3, 0});                    // cropped to nothing
  CHECK(repeat(ones({2, 3}), {0, 2}).shape() == Shape{0, 6});
  CHECK(tile(ones({2, 3}), {2, 1, 1}).shape() == Shape{2, 2, 3});
  test::check_values(tril(ones({2, 3}), 5), {1, 1, 1, 1, 1, 1});
  test::check_values(triu(ones({2, 3}), -5), {1, 1, 1, 1, 1, 1});
  CHECK(one_hot(index_tensor({}, {0}), 3).shape() == Shape{0, 3});
  CHECK(one_hot(index_tensor({1}, {1}), 2, f64).dtype() == f64);
  test::check_values(one_hot(index_tensor({2}, {}), 3, i64), {0, 0, 1});     // 0-d index -> (C)
}

TEST_CASE("scan, layout and norm ops name the bad argument") {
  const Tensor x = ones({3, 4});
  CHECK_THROWS_WITH_AS(cumsum(x, 2), Contains("cumsum: dim 2 out of range for a 2-d tensor"), IndexError);
  CHECK_THROWS_WITH_AS(cumprod(x, -3), Contains("cumprod: dim -3 out of range"), IndexError);
  CHECK_THROWS_WITH_AS(flip(x, {1, -1}), Contains("flip: dim 1 appears twice in 1, -1"), ValueError);
  CHECK_THROWS_WITH_AS(roll(x, {1, 2}), Contains("roll: without dims it takes one shift, got 2: (1, 2)"), ValueError);
  CHECK_THROWS_WITH_AS(roll(x, {1}, {0, 1}), Contains("roll: 1 shifts (1) for 2 dims (0, 1)"), ValueError);
  CHECK_THROWS_WITH_AS(pad(x, {1, 2, 3}), Contains("pad: pads must come in (before, after) pairs, got 3: (1, 2, 3)"),
                       ShapeError);
  CHECK_THROWS_WITH_AS(pad(x, {1, 1, 1, 1, 1, 1}), Contains("pad: 6 pads pad 3 dims, the input (3, 4) has 2"),
                       ShapeError);
  CHECK_THROWS_WITH_AS(pad(x, {-3, -2}), Contains("pad: pads (-3, -2) make dim 1 of (3, 4) negative: -1"), ShapeError);
  CHECK_THROWS_WITH_AS(pad(x, {4, 0}, PadMode::reflect),
                       Contains("pad: reflect pads (4, 0) must be below the size 4 of dim 1 of (3, 4)"), ShapeError);
  CHECK_THROWS_WITH_AS(pad(zeros({2, 0}), {1, 0}, PadMode::replicate),
                       Contains("pad: replicate cannot pad the empty dim 1 of (2, 0)"), ShapeError);
  CHECK_THROWS_WITH_AS(pad(x, {1, 0}, PadMode::reflect, 2.0), Contains("pad: mode reflect takes no value, got 2"),
                       ValueError);
  CHECK_THROWS_WITH_AS(pad_backward(ones({3, 5}), {3, 4}, {1, 1}, PadMode::constant),
                       Contains("pad_backward: dy (3, 5) is not the padded shape (3, 6) of (3, 4)"), ShapeError);
  CHECK_THROWS_WITH_AS(repeat(x, {2}), Contains("repeat: 1 repeats (2) for the 2 dims of (3, 4)"), ShapeError);
  CHECK_THROWS_WITH_AS(repeat(x, {2, -1}), Contains("repeat: repeats must be >= 0, got -1 in (2, -1)"), ValueError);
  CHECK_THROWS_WITH_AS(tile(x, {-2}), Contains("repeat: repeats must be >= 0, got -2 in (1, -2)"), ValueError);
  CHECK_THROWS_WITH_AS(tril(ones({3})), Contains("tril: expected a matrix or a batch of them (>= 2 dims), got (3,)"),
                       ShapeError);
  CHECK_THROWS_WITH_AS(triu(scalar_tensor(1)), Contains("triu: expected a matrix"), ShapeError);
  const Tensor idx = index_tensor({0, 3, 1}, {3});
  CHECK_THROWS_WITH_AS(one_hot(idx, 3), Contains("one_hot: class index 3 is out of range [0, 3)"), IndexError);
  CHECK_THROWS_WITH_AS(one_hot(index_tensor({0, -2}, {2})), Contains("one_hot: class index -2 is negative"),
                       IndexError);
  CHECK_THROWS_WITH_AS(one_hot(index_tensor({}, {0})), Contains("one_hot: cannot infer num_classes from no indices"),
                       ValueError);
  CHECK_THROWS_WITH_AS(one_hot(idx, -2), Contains("one_hot: num_classes must be >= 0, or -1 to infer it, got -2"),
                       ValueError);
  CHECK_THROWS_WITH_AS(one_hot(ones({2})), Contains("one_hot: indices must be i64, got f32"), DTypeError);
  CHECK_THROWS_WITH_AS(vector_norm(x, -1), Contains("vector_norm: ord must be 0, > 0, inf or -inf, got -1"),
                       ValueError);
  CHECK_THROWS_WITH_AS(vector_norm(x, NAN), Contains("vector_norm: ord must be"), ValueError);
  CHECK_THROWS_WITH_AS(vector_norm(index_tensor({1}, {1})), Contains("vector_norm: expected a floating dtype"),
                       DTypeError);
  CHECK_THROWS_WITH_AS(vector_norm(zeros({2, 0}), INFINITY, {1}),
                       Contains("vector_norm: the inf norm over an empty line of (2, 0) has no identity"), ValueError);
  CHECK_THROWS_WITH_AS(vector_norm(x, 2, {2}), Contains("dim 2 out of range"), IndexError);
}
