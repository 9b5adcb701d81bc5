// Unary elementwise ops against std:: on every layout, plus the values that matter: gelu in both forms against
// closed-form numbers, gelu's one-pass backward, sigmoid at ±1000, clamp with missing bounds and NaN, all_finite.
// The f32 kernels' accuracy on every Highway target: unary_kernels_test.cpp.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <numbers>

#include "core/error.h"
#include "core/ops.h"
#include "reference.h"

using namespace tg;
using namespace tg::test;

namespace {

struct UnaryCase {
  std::string name;
  std::function<Tensor(const Tensor&)> op;
  std::function<double(double)> ref;
  bool positive_only;  // log, sqrt, rsqrt: inputs shifted into (0, ∞)
};

const UnaryCase kFloat[] = {
    {"neg", [](const Tensor& x) { return neg(x); }, [](double v) { return -v; }, false},
    {"abs", [](const Tensor& x) { return abs(x); }, [](double v) { return std::abs(v); }, false},
    {"sign", [](const Tensor& x) { return sign(x); }, [](double v) { return double((v > 0) - (v < 0)); }, false},
    {"relu", [](const Tensor& x) { return relu(x); }, [](double v) { return v > 0 ? v : 0; }, false},
    {"exp", [](const Tensor& x) { return exp(x); }, [](double v) { return std::exp(v); }, false},
    {"log", [](const Tensor& x) { return log(x); }, [](double v) { return std::log(v); }, true},
    {"log1p", [](const Tensor& x) { return log1p(x); }, [](double v) { return std::log1p(v); }, true},
    {"expm1", [](const Tensor& x) { return expm1(x); }, [](double v) { return std::expm1(v); }, false},
    {"sqrt", [](const Tensor& x) { return sqrt(x); }, [](double v) { return std::sqrt(v); }, true},
    {"rsqrt", [](const Tensor& x) { return rsqrt(x); }, [](double v) { return 1 / std::sqrt(v); }, true},
    {"tanh", [](const Tensor& x) { return tanh(x); }, [](double v) { return std::tanh(v); }, false},
    {"erf", [](const Tensor& x) { return erf(x); }, [](double v) { return std::erf(v); }, false},
    {"sigmoid", [](const Tensor& x) { return sigmoid(x); }, [](double v) { return 1 / (1 + std::exp(-v)); }, false},
    {"silu", [](const Tensor& x) { return silu(x); }, [](double v) { return v / (1 + std::exp(-v)); }, false},
    {"gelu", [](const Tensor& x) { return gelu(x); },
     [](double v) { return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); }, false},
    {"gelu_tanh", [](const Tensor& x) { return gelu(x, true); },
     [](double v) { return 0.5 * v * (1 + std::tanh(std::sqrt(2 / std::numbers::pi) * (v + 0.044715 * v * v * v))); }, false},
};

const Shape kShapes[] = {{2, 3, 4}, {5}, {}, {0, 3}, {3, 1}};

}  // namespace

TEST_CASE("float unary ops match std:: on every layout in f32 and f64") {
  for (const UnaryCase& c : kFloat)
    for (DType dt : {f32, f64})
      for (const Shape& s : kShapes) {
        std::vector<double> v = sample(s.numel(), 3.0, 3);
        if (c.positive_only)
          for (double& x : v) x = std::abs(x) + 0.05;
        for (const Layout& l : layouts(v, s, dt)) {
          CAPTURE(c.name);
          CAPTURE(dt);
          CAPTURE(s);
          CAPTURE(l.name);
          std::vector<double> want;
          for (double x : values(l.t)) want.push_back(c.ref(x));
          Tensor got = c.op(l.t);
          CHECK(got.dtype() == dt);
          check_tensor(got, s, want, dt == f32 ? 1e-6 : 1e-14, dt == f32 ? 1e-6 : 1e-14);
        }
      }
}

TEST_CASE("relu keeps NaN (as PyTorch does) instead of turning it into 0") {
  for (DType dt : {f32, f64}) check_tensor(relu(tensor({NAN, -1, 2, -INFINITY}, {4}, dt)), {4}, {NAN, 0, 2, 0});
}

TEST_CASE("neg, abs, sign and relu keep i64 exact") {
  Tensor k = tensor({-3, 0, 7, -9, 2, -1}, {2, 3}, i64).mT();  // (3, 2): -3 -9 / 0 2 / 7 -1
  CHECK(neg(k).dtype() == i64);
  check_tensor(neg(k), {3, 2}, {3, 9, 0, -2, -7, 1}, 0, 0);
  check_tensor(abs(k), {3, 2}, {3, 9, 0, 2, 7, 1}, 0, 0);
  check_tensor(sign(k), {3, 2}, {-1, -1, 0, 1, 1, -1}, 0, 0);
  check_tensor(relu(k), {3, 2}, {0, 0, 0, 2, 7, 0}, 0, 0);
  const int64_t big = (int64_t(1) << 53) + 1;
  CHECK(neg(index_tensor({big}, {1})).to_vector<int64_t>()[0] == -big);
}

TEST_CASE("a big contiguous unary input (threaded path) matches the strided one") {
  const int64_t n = 200000;
  std::vector<double> v = sample(n, 4.0, 5);
  std::vector<Layout> ls = layouts(v, {n}, f32);
  Tensor a = tanh(ls[0].t), b = tanh(ls[1].t);
  CHECK(a.to_vector<float>() == b.to_vector<float>());
  check_close(a, [&] {
    std::vector<double> w;
    for (double x : ls[0].t.to_vector<double>()) w.push_back(std::tanh(x));
    return w;
  }(), 1e-6, 1e-6);
}

TEST_CASE("gelu matches closed-form values in both forms") {
  // x·Φ(x) and the tanh approximation, evaluated in double at these points.
  const std::vector<double> x = {-3, -1, -0.5, 0, 0.5, 1, 2, 3};
  const std::vector<double> exact = {-0.00404969409489031, -0.15865525393145707, -0.15426876936299344, 0.0,
                                     0.34573123063700656,  0.8413447460685429,   1.9544997361036416,   2.99595030590511};
  const std::vector<double> approx = {-0.0036373920817729943, -0.15880800939172324, -0.15428599017485606, 0.0,
                                      0.34571400982514394,    0.8411919906082768,   1.954597694087775,    2.996362607918227};
  check_tensor(gelu(tensor(x, f64)), {8}, exact, 1e-15, 1e-14);
  check_tensor(gelu(tensor(x, f64), true), {8}, approx, 1e-15, 1e-14);
  check_tensor(gelu(tensor(x)), {8}, exact, 1e-7, 1e-6);
  check_tensor(gelu(tensor(x), true), {8}, approx, 1e-7, 1e-6);
  // far tails: gelu(x) -> x for large x and -> 0 for very negative x, never NaN
  check_tensor(gelu(tensor({-1000, 1000})), {2}, {0, 1000}, 0, 0);
  check_tensor(gelu(tensor({-1000, 1000}), true), {2}, {0, 1000}, 0, 0);
}

TEST_CASE("gelu_backward is dy·(Φ(x) + x·φ(x)) on every layout, and names mismatched operands") {
  const Shape shape = {3, 4};
  for (DType dt : {f32, f64})
    for (const Layout& l : layouts(sample(12, 4.0, 7), shape, dt)) {
      CAPTURE(dt);
      CAPTURE(l.name);
      Tensor dy = tensor(sample(12, 2.0, 8), shape, dt);
      std::vector<double> want, g = values(dy), x = values(l.t);
      for (size_t i = 0; i < x.size(); ++i)
        want.push_back(g[i] * (0.5 * std::erfc(-x[i] / std::numbers::sqrt2) +
                               x[i] * std::exp(-0.5 * x[i] * x[i]) / std::sqrt(2 * std::numbers::pi)));
      const double tol = dt == f32 ? 2e-6 : 1e-14;
      check_tensor(gelu_backward(dy, l.t), shape, want, tol, tol);
    }
  CHECK_THROWS_WITH_AS(gelu_backward(ones({2, 3}), ones({3, 2})),
                       doctest::Contains("gelu_backward: shapes differ: (2, 3) vs (3, 2)"), ShapeError);
  CHECK_THROWS_WITH_AS(gelu_backward(ones({2}), ones({2}, f64)), doctest::Contains("gelu_backward: dtypes differ: f32 vs f64"),
                       DTypeError);
  CHECK_THROWS_WITH_AS(gelu_backward(ones({2}, i64), ones({2}, i64)), doctest::Contains("gelu_backward"), DTypeError);
}

TEST_CASE("tanh_backward gives the bits of dy·(1 - y·y) composed of three ops, on every layout") {
  const Shape shape = {3, 4};
  for (DType dt : {f32, f64})
    for (const Layout& l : layouts(sample(12, 0.99, 5), shape, dt)) {
      CAPTURE(dt);
      CAPTURE(l.name);
      const Tensor dy = tensor(sample(12, 3.0, 6), shape, dt);
      const Tensor want = mul(dy, sub(scalar_tensor(1.0, dt), mul(l.t, l.t)));
      const Tensor got = tanh_backward(dy, l.t);
      CHECK(got.shape() == shape);
      CHECK(got.dtype() == dt);
      CHECK(got.to_vector<double>() == want.to_vector<double>());
      CHECK(got.to_vector<double>() != dy.to_vector<double>());
    }
  CHECK_THROWS_WITH_AS(tanh_backward(ones({2, 3}), ones({3, 2})),
                       doctest::Contains("tanh_backward: shapes differ: (2, 3) vs (3, 2)"), ShapeError);
  CHECK_THROWS_WITH_AS(tanh_backward(ones({2}), ones({2}, f64)),
                       doctest::Contains("tanh_backward: dtypes differ: f32 vs f64"), DTypeError);
  CHECK_THROWS_WITH_AS(tanh_backward(ones({2}, i64), ones({2}, i64)), doctest::Contains("tanh_backward"), DTypeError);
}

TEST_CASE("sigmoid saturates at ±1000 without NaN or inf, and is accurate in the tails") {
  for (DType dt : {f32, f64}) {
    CAPTURE(dt);
    Tensor s = sigmoid(tensor({-1000, -20, 0, 20, 1000}, dt));
    CHECK(all_finite(s));
    std::vector<double> v = s.to_vector<double>();
    CHECK(v[0] == 0);
    CHECK(v[1] == doctest::Approx(2.0611536181902037e-09).epsilon(1e-6));  // e^-20 / (1 + e^-20), not 1 - 1
    CHECK(v[2] == 0.5);
    CHECK(v[3] == doctest::Approx(1 - 2.0611536181902037e-09).epsilon(dt == f32 ? 1e-7 : 1e-15));
    CHECK(v[4] == 1);
  }
}

// log(1 + 1e-20) is log(1) = 0 and e^1e-20 - 1 is 0 in any float: the fused forms keep the value.
TEST_CASE("log1p and expm1 keep tiny arguments that the plain forms round away") {
  for (DType dt : {f32, f64}) {
    CHECK(log1p(tensor({1e-20}, {1}, dt)).to_vector<double>()[0] == doctest::Approx(1e-20).epsilon(1e-6));
    CHECK(expm1(tensor({-1e-20}, {1}, dt)).to_vector<double>()[0] == doctest::Approx(-1e-20).epsilon(1e-6));
    check_tensor(log1p(tensor({-1, 0, INFINITY}, {3}, dt)), {3}, {-INFINITY, 0, INFINITY});
  }
}

TEST_CASE("exp, log and sqrt at the edges of their domains") {
  check_tensor(exp(tensor({-INFINITY, 0, 1000})), {3}, {0, 1, INFINITY});
  check_tensor(log(tensor({0, 1, -1})), {3}, {-INFINITY, 0, NAN});
  check_tensor(sqrt(tensor({0, 4, -1}, f64)), {3}, {0, 2, NAN});
  check_tensor(rsqrt(tensor({0, 4})), {2}, {INFINITY, 0.5});
  check_tensor(tanh(tensor({-1000, 1000})), {2}, {-1, 1});
}

TEST_CASE("clamp with both, one or no bounds; NaN passes through") {
  for (const Layout& l : layouts({-3, -0.5, 0, 0.5, 2, NAN}, {2, 3}, f64)) {
    CAPTURE(l.name);
    check_tensor(clamp(l.t, -1.0, 1.0), {2, 3}, {-1, -0.5, 0, 0.5, 1, NAN});
    check_tensor(clamp(l.t, 0.0, std::nullopt), {2, 3}, {0, 0, 0, 0.5, 2, NAN});
    check_tensor(clamp(l.t, std::nullopt, 0.0), {2, 3}, {-3, -0.5, 0, 0, 0, NAN});
    check_tensor(clamp(l.t, std::nullopt, std::nullopt), {2, 3}, {-3, -0.5, 0, 0.5, 2, NAN});
    check_tensor(clamp(l.t, 0.5, 0.5), {2, 3}, {0.5, 0.5, 0.5, 0.5, 0.5, NAN});
  }
  check_tensor(clamp(tensor({-5, 0, 5}, i64), -2.0, 3.0), {3}, {-2, 0, 3}, 0, 0);
  CHECK(clamp(tensor({-5, 0, 5}, i64), -2.0, 3.0).dtype() == i64);
  check_tensor(clamp(scalar_tensor(7), 0.0, 1.0), {}, {1});
}

TEST_CASE("all_finite sees NaN and inf anywhere, through any layout") {
  CHECK(all_finite(tensor({1, 2, 3})));
  CHECK_FALSE(all_finite(tensor({1, NAN, 3})));
  CHECK_FALSE(all_finite(tensor({1, 2, -INFINITY}, f64)));
  CHECK(all_finite(zeros({0})));
  CHECK(all_finite(tensor({1, 2}, i64)));
  CHECK(all_finite(tensor({1, 0}, boolean)));
  std::vector<double> v = sample(12);
  v[7] = INFINITY;
  for (const Layout& l : layouts(v, {3, 4})) {
    CAPTURE(l.name);
    CHECK_FALSE(all_finite(l.t));
    CHECK(all_finite(l.t.narrow(1, 0, 3)));  // the inf sits in column 3
  }
  // The loop tests exponent bits: the largest finite values and denormals pass, NaN and inf of either sign
  // fail at every position of a vector long enough for the vectorised loop and its tail.
  for (DType dt : {f32, f64}) {
    CAPTURE(dt);
    const double big = dt == f32 ? double(std::numeric_limits<float>::max()) : std::numeric_limits<double>::max();
    const double tiny = dt == f32 ? double(std::numeric_limits<float>::denorm_min()) : 5e-324;
    CHECK(all_finite(tensor({big, -big, tiny, -tiny, 0.0, -0.0}, {6}, dt)));
    for (double bad : {double(NAN), -double(NAN), double(INFINITY), -double(INFINITY)})
      for (int64_t i = 0; i < 37; i += 3) {
        std::vector<double> w(37, 1.0);
        w[size_t(i)] = bad;
        CAPTURE(i);
        CHECK_FALSE(all_finite(tensor(w, {37}, dt)));
      }
  }
}

TEST_CASE("unary errors name the op and the dtype") {
  CHECK_THROWS_WITH_AS(exp(ones({2}, i64)), doctest::Contains("exp: expected a floating dtype (f32 or f64), got i64"),
                       DTypeError);
  CHECK_THROWS_WITH_AS(sigmoid(ones({2}, boolean)), doctest::Contains("sigmoid: expected a floating dtype (f32 or f64), got bool"),
                       DTypeError);
  CHECK_THROWS_WITH_AS(gelu(ones({2}, i64), true), doctest::Contains("gelu: expected a floating dtype"), DTypeError);
  CHECK_THROWS_WITH_AS(neg(ones({2}, boolean)), doctest::Contains("neg: not defined for bool tensors"), DTypeError);
  CHECK_THROWS_WITH_AS(relu(ones({2}, boolean)), doctest::Contains("relu: not defined for bool tensors"), DTypeError);
  CHECK_THROWS_WITH_AS(clamp(ones({2}), 1.0, -1.0), doctest::Contains("clamp: min 1 is greater than max -1"), ValueError);
  CHECK_THROWS_WITH_AS(clamp(ones({2}, boolean), 0.0, 1.0), doctest::Contains("clamp: not defined for bool tensors"),
                       DTypeError);
}
