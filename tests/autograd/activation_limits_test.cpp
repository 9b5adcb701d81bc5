// The limits at ±inf where a formula meets inf·0 or inf/inf: silu, gelu (both forms) and mish, forward and
// backward; vector_norm's gradient on lines holding ±inf; cumprod's gradient with ±inf entries. Each was NaN.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <numbers>
#include <string>
#include <vector>

#include "autograd/functions.h"

using namespace tg;

namespace {

constexpr double kInf = INFINITY;
using Line = std::vector<double>;

// got is want: NaN for NaN, the same infinity or signed zero, else within rounding.
void check_line(const Tensor& got, const Line& want, DType dt) {
  const Line v = got.to_vector<double>();
  REQUIRE(v.size() == want.size());
  for (size_t j = 0; j < v.size(); ++j) {
    CAPTURE(j);
    CAPTURE(v[j]);
    CAPTURE(want[j]);
    if (std::isnan(want[j])) CHECK(std::isnan(v[j]));
    else if (std::isinf(want[j]) || want[j] == 0) CHECK((v[j] == want[j] && std::signbit(v[j]) == std::signbit(want[j])));
    else CHECK(std::abs(v[j] - want[j]) <= (dt == f32 ? 2e-6 : 1e-12) * (1 + std::abs(want[j])));
  }
}

double sigma(double x) { return 1 / (1 + std::exp(-x)); }
double big_phi(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

struct Activation {
  const char* name;
  std::function<Variable(const Variable&)> f;
  double y1, dy1;  // the value and slope at x = 1
};

}  // namespace

TEST_CASE("silu, gelu and mish at ±inf: their limits (-0 and +inf) and slopes (0 and 1), not NaN") {
  const double k = std::sqrt(2 / std::numbers::pi), u = k * (1 + 0.044715), t = std::tanh(u);
  const double sp = std::log1p(std::exp(1.0)), pdf1 = std::exp(-0.5) / std::sqrt(2 * std::numbers::pi);
  const std::vector<Activation> acts = {
      {"silu", [](const Variable& x) { return silu(x); }, sigma(1), sigma(1) * (2 - sigma(1))},
      {"gelu", [](const Variable& x) { return gelu(x); }, big_phi(1), big_phi(1) + pdf1},
      {"gelu tanh", [](const Variable& x) { return gelu(x, true); }, 0.5 * (1 + t),
       0.5 * (1 + t) + 0.5 * (1 - t * t) * k * (1 + 3 * 0.044715)},
      {"mish", [](const Variable& x) { return mish(x); }, std::tanh(sp),
       std::tanh(sp) + (1 - std::tanh(sp) * std::tanh(sp)) * sigma(1)},
  };
  for (DType dt : {f32, f64})
    for (const Activation& a : acts) {
      const std::string name = a.name;
      CAPTURE(name);
      CAPTURE(dt);
      const Variable x(tensor({-kInf, kInf, 1, NAN}, {4}, dt), true);
      const Variable y = a.f(x);
      check_line(y.value(), {-0.0, kInf, a.y1, NAN}, dt);
      sum(y * Variable(tensor({2, 3, 1, 1}, {4}, dt))).backward();
      check_line(x.grad(), {0, 3, a.dy1, NAN}, dt);
    }
}

TEST_CASE("vector_norm's gradient on a line holding k entries of ±inf: sign(x)·k^(1/p - 1) on them, 0 elsewhere") {
  for (double ord : {2.0, 3.0, 1.5}) {
    CAPTURE(ord);
    const Variable x(tensor({kInf, -kInf, 1, 5, 2, 0}, {2, 3}, f64), true);
    const Variable n = vector_norm(x, ord, {1});
    check_line(n.value(), {kInf, std::pow(std::pow(5, ord) + std::pow(2, ord), 1 / ord)}, f64);
    sum(n).backward();
    const double share = std::pow(2.0, 1 / ord - 1), norm = n.value().to_vector<double>()[1];
    check_line(x.grad(), {share, -share, 0, std::pow(5 / norm, ord - 1), std::pow(2 / norm, ord - 1), 0}, f64);
  }
}

TEST_CASE("cumprod's gradient with ±inf entries: the products without x_k, not inf/inf") {
  for (DType dt : {f32, f64}) {
    CAPTURE(dt);
    const Variable x(tensor({2, kInf, 3, 2, -kInf, 0.5}, {2, 3}, dt), true);
    const Variable y = cumprod(x, 1);
    check_line(y.value(), {2, kInf, kInf, 2, -kInf, -kInf}, dt);
    sum(y).backward();
    // dx_k = Σ_{i≥k} Π_{j≤i, j≠k} x_j: row 0 (1 + inf + inf·3, 2 + 2·3, 2·inf), row 1 likewise
    check_line(x.grad(), {kInf, 8, kInf, -kInf, 3, -kInf}, dt);
  }
}
