// Normalisations and var on finite values whose squares overflow the dtype (f32 |x| > 1.8e19, f64 > 1.3e154),
// or even x - mean (f64 values near ±1.8e308 of both signs): they normalise as any other line, forward and
// backward, instead of giving 0 (x·rsqrt(inf)), NaN or a refusal ("constant row").
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "autograd/functions.h"

using namespace tg;

namespace {

using Line = std::vector<double>;

// x̂ = (x - m)·rstd of a line (m = 0 for rms_norm) and the gradient of Σ x̂·g, rstd·(g - mean(g) - x̂·mean(g·x̂))
// (no mean(g) for rms_norm), computed on x/s so that the reference itself does not overflow; eps is negligible.
struct Ref {
  Line h, dx;
};
Ref normalized(const Line& x, const Line& g, double s, bool center) {
  const double n = double(x.size());
  double m = 0, v = 0, mg = 0, mgh = 0;
  for (double e : x) m += center ? e / s / n : 0;
  for (double e : x) v += (e / s - m) * (e / s - m) / n;
  const double rs = 1 / std::sqrt(v);
  Ref r;
  for (double e : x) r.h.push_back((e / s - m) * rs);
  for (size_t j = 0; j < x.size(); ++j) mg += center ? g[j] / n : 0, mgh += g[j] * r.h[j] / n;
  for (size_t j = 0; j < x.size(); ++j) r.dx.push_back(rs / s * (g[j] - mg - r.h[j] * mgh));
  return r;
}

// got within rounding of want, relative to the line's largest |want| (the gradient cancels).
void check_close(const Tensor& got, const Line& want, DType dt) {
  const Line v = got.to_vector<double>();
  REQUIRE(v.size() == want.size());
  double scale = 0;
  for (double w : want) scale = std::max(scale, std::abs(w));
  for (size_t j = 0; j < v.size(); ++j) {
    CAPTURE(j);
    CAPTURE(v[j]);
    CAPTURE(want[j]);
    CHECK(std::abs(v[j] - want[j]) <= (dt == f32 ? 1e-5 : 1e-12) * scale);
  }
}

struct Case {
  const char* name;
  DType dt;
  Line x;
  double s;
  bool center;
  std::function<Variable(const Variable&)> f;  // on x of shape (1, n) or (n, 1) as `column` says
  bool column;
};

}  // namespace

TEST_CASE("normalisations of finite lines whose squares overflow: the right values and gradients, no 0 or NaN") {
  const Line f32_big = {1e20, -2e20, 3e20, 0}, f64_big = {1e200, -2e200, 3e200, 0};
  const Line f64_sum_overflows = {1.5e308, 1.5e308, 1e308, 1.7e308};  // Σx overflows: the mean too
  const Line f64_spread_overflows = {1.7e308, 1.7e308, 1.7e308, -1.7e308};  // Σx, and x - mean for the last
  const Line g = {1, -2, 3, 0.5};
  const auto rms = [](const Variable& x) { return rms_norm(x, 1, Variable(), 1e-5); };
  const auto ln = [](const Variable& x) { return layer_norm(x, {x.size(1)}, 1e-5); };
  const auto gn = [](const Variable& x) { return group_norm(x, 1, Variable(), Variable(), 1e-5); };
  const auto bn = [](const Variable& x) { return batch_norm(x, Tensor(), Tensor(), Variable(), Variable(), true); };
  const std::vector<Case> cases = {
      {"rms_norm f32", f32, f32_big, 1e20, false, rms, false},
      {"rms_norm f64", f64, f64_big, 1e200, false, rms, false},
      {"batch_norm f32", f32, f32_big, 1e20, true, bn, true},
      {"batch_norm f64", f64, f64_big, 1e200, true, bn, true},
      {"layer_norm f32", f32, f32_big, 1e20, true, ln, false},
      {"layer_norm f64", f64, f64_big, 1e200, true, ln, false},
      {"layer_norm f64, Σx overflows", f64, f64_sum_overflows, 1e308, true, ln, false},
      {"group_norm f64", f64, f64_big, 1e200, true, gn, false},
      {"layer_norm f64, x - mean overflows", f64, f64_spread_overflows, 1.7e308, true, ln, false},
      {"batch_norm f64, x - mean overflows", f64, f64_spread_overflows, 1.7e308, true, bn, true},
      {"group_norm f64, x - mean overflows", f64, f64_spread_overflows, 1.7e308, true, gn, false},
      {"rms_norm f64, values near the limit", f64, f64_spread_overflows, 1.7e308, false, rms, false},
  };
  for (const Case& c : cases) {
    const std::string name = c.name;
    CAPTURE(name);
    const Shape shape = c.column ? Shape{4, 1} : Shape{1, 4};
    const Variable x(tensor(c.x, shape, c.dt), true);
    const Variable y = c.f(x);
    const Ref want = normalized(c.x, g, c.s, c.center);
    check_close(y.value(), want.h, c.dt);
    sum(y * Variable(tensor(g, shape, c.dt))).backward();
    check_close(x.grad(), want.dx, c.dt);
  }
}

TEST_CASE("batch_norm's running variance beyond f32's range is +inf; the output stays right") {
  const Tensor running_mean = zeros({1}), running_var = ones({1});
  const Variable x(tensor({1e20, -1e20, 1e20, -1e20}, {4, 1}));
  const Variable y = batch_norm(x, running_mean, running_var, Variable(), Variable(), true, 0.5);
  check_close(y.value(), {1, -1, 1, -1}, f32);
  CHECK(running_mean.item() == 0);
  CHECK(running_var.item() == INFINITY);  // 0.5 + 0.5·(4/3)·1e40: not an f32
}

TEST_CASE("var of finite f32 values beyond the range: +inf, and its finite gradient (no ±inf refusal)") {
  const Variable x(tensor({1e20, -1e20, 3e20}, {3}), true);
  const Variable v = var(x, {0}, 1);
  CHECK(v.item() == INFINITY);
  v.backward();
  // 2(x - mean)/(n - 1) with mean 1e20
  check_close(x.grad(), {0, -2e20, 2e20}, f32);
  const Variable inf(tensor({1, INFINITY, 3}, {3}), true);
  CHECK_THROWS_WITH_AS(var(inf, {0}, 1).backward(), doctest::Contains("no gradient through a variance of +inf"),
                       ValueError);
}
