// Binary elementwise kernels against a naive broadcast loop: arithmetic, minimum/maximum, pow,
// comparisons, logical ops, where and masked_fill, over contiguous, transposed, strided and expanded
// inputs, size-0 and 0-d shapes, in f32, f64 and (where defined) i64 and bool.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <iterator>
#include <limits>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/ops.h"
#include "reference.h"
#include "targets.h"

using namespace tg;
using namespace tg::test;

namespace {

// Shape pairs and the broadcast shape they give.
struct BroadcastCase {
  Shape a, b, out;
};
const BroadcastCase kShapes[] = {
    {{2, 3, 4}, {2, 3, 4}, {2, 3, 4}},  // same shape
    {{2, 3, 4}, {4}, {2, 3, 4}},        // trailing vector (a bias: the row-by-row path)
    {{4}, {2, 3, 4}, {2, 3, 4}},        // the same with the vector first
    {{1, 3, 4}, {2, 3, 4}, {2, 3, 4}},  // a (3, 4) block repeated
    {{2, 3, 4}, {1, 1, 4}, {2, 3, 4}},  // a vector behind leading 1s
    {{3, 1}, {1, 4}, {3, 4}},           // both broadcast
    {{2, 1, 4}, {3, 1}, {2, 3, 4}},     // different ndim, both broadcast
    {{}, {2, 3}, {2, 3}},               // 0-d with a matrix
    {{5}, {}, {5}},                     // vector with 0-d
    {{}, {}, {}},                       // 0-d with 0-d
    {{0, 3}, {1, 3}, {0, 3}},           // size-0 dim
    {{2, 0}, {2, 1}, {2, 0}},
};

using Ref = std::function<double(double, double)>;

// Checks op(a, b) for every shape pair and every layout of both operands against ref.
void check_binary(const std::string& name, Tensor (*op)(const Tensor&, const Tensor&), const Ref& ref, DType dt,
                  double lo_b = -2.0, double tol = 1e-6) {
  for (const BroadcastCase& c : kShapes) {
    std::vector<double> va = sample(c.a.numel(), 2.0, 1), vb = sample(c.b.numel(), 2.0, 2);
    for (double& v : vb) v = std::max(v, lo_b);  // keeps divisors and pow bases away from 0 when asked
    if (dt == i64)
      for (double& v : va) v = std::round(v * 3);
    if (dt == i64)
      for (double& v : vb) v = std::round(v * 3);
    for (const Layout& la : layouts(va, c.a, dt))
      for (const Layout& lb : layouts(vb, c.b, dt)) {
        CAPTURE(name);
        CAPTURE(dt);
        CAPTURE(c.a);
        CAPTURE(c.b);
        CAPTURE(la.name);
        CAPTURE(lb.name);
        std::vector<double> want;
        for (const Index& i : indices(c.out))
          want.push_back(ref(at(la.t, broadcast_index(i, c.a)), at(lb.t, broadcast_index(i, c.b))));
        Tensor got = op(la.t, lb.t);
        CHECK(got.dtype() == dt);
        CHECK(got.is_contiguous());
        check_tensor(got, c.out, want, tol, tol);
      }
  }
}

}  // namespace

TEST_CASE("add, sub, mul broadcast over every layout in f32, f64 and i64") {
  for (DType dt : {f32, f64, i64}) {
    check_binary("add", add, [](double x, double y) { return x + y; }, dt);
    check_binary("sub", sub, [](double x, double y) { return x - y; }, dt);
    check_binary("mul", mul, [](double x, double y) { return x * y; }, dt);
  }
}

TEST_CASE("div and pow broadcast over every layout in f32 and f64") {
  for (DType dt : {f32, f64}) {
    check_binary("div", div, [](double x, double y) { return x / y; }, dt, 0.25);
    check_binary("pow", pow, [](double x, double y) { return std::pow(x, y); }, dt, 0.25);
  }
}

TEST_CASE("minimum and maximum broadcast, and propagate NaN") {
  for (DType dt : {f32, f64, i64}) {
    check_binary("minimum", minimum, [](double x, double y) { return std::min(x, y); }, dt);
    check_binary("maximum", maximum, [](double x, double y) { return std::max(x, y); }, dt);
  }
  Tensor a = tensor({NAN, 1, 2}), b = tensor({0, NAN, 3});
  check_close(minimum(a, b), {NAN, NAN, 2});
  check_close(maximum(a, b), {NAN, NAN, 3});
}

TEST_CASE("operands expanded to stride 0 read the broadcast value") {
  Tensor a = tensor({1, 2, 3}, {3, 1}).expand({3, 4});  // strides (1, 0)
  Tensor b = arange(0, 12).view({3, 4});
  std::vector<double> want;
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 4; ++j) want.push_back((i + 1) * (4 * i + j));
  check_tensor(mul(a, b), {3, 4}, want);
  check_tensor(mul(b, a), {3, 4}, want);
  Tensor e = scalar_tensor(2).expand({2, 3});
  check_tensor(add(e, e), {2, 3}, std::vector<double>(6, 4));
}

TEST_CASE("large contiguous inputs take the threaded path and match the strided one") {
  const int64_t n = 300000;
  Tensor a = tensor(sample(n, 3.0, 1), {n}), b = tensor(sample(n, 3.0, 2), {n});
  Tensor s = tensor({0.5}, {1});
  Tensor sum_ab = a + b, scaled = a * s;
  std::vector<double> va = a.to_vector<double>(), vb = b.to_vector<double>();
  std::vector<double> w1(n), w2(n);
  for (int64_t i = 0; i < n; ++i) w1[i] = double(float(va[i]) + float(vb[i])), w2[i] = va[i] * 0.5;
  check_close(sum_ab, w1, 0, 0);
  check_close(scaled, w2, 0, 0);
  // the same through a strided view of the same values
  Tensor bs = layouts(vb, {n}, f32)[1].t;
  check_close(a + bs, w1, 0, 0);
}

TEST_CASE("operators with a double take the tensor's dtype") {
  Tensor x = tensor({1, 2, 4}, f64);
  check_tensor(x + 1.5, {3}, {2.5, 3.5, 5.5});
  check_tensor(x - 1, {3}, {0, 1, 3});
  check_tensor(x * -2, {3}, {-2, -4, -8});
  check_tensor(x / 4, {3}, {0.25, 0.5, 1});
  check_tensor(1.5 + x, {3}, {2.5, 3.5, 5.5});
  check_tensor(10 - x, {3}, {9, 8, 6});
  check_tensor(3 * x, {3}, {3, 6, 12});
  check_tensor(8 / x, {3}, {8, 4, 2});
  check_tensor(-x, {3}, {-1, -2, -4});
  CHECK((x + 1.5).dtype() == f64);
  Tensor k = tensor({3, -5}, i64);
  check_tensor(k * 2, {2}, {6, -10}, 0, 0);
  CHECK((k * 2).dtype() == i64);
}

TEST_CASE("an i64 tensor meeting a fraction, a huge double or a division is computed in f32, as in PyTorch") {
  Tensor k = tensor({3, -5}, i64);
  for (const Tensor& t : {k + 2.5, k - 0.5, k * 1.5, k / 2, 7 - k * 1.5, 2.5 + k, 1 / k, k * 1e30}) CHECK(t.dtype() == f32);
  check_tensor(k + 2.5, {2}, {5.5, -2.5});  // not 5 and -3, as truncating 2.5 to 2 would give
  check_tensor(k / 2, {2}, {1.5, -2.5});
  check_tensor(7 - k * 1.5, {2}, {2.5, 14.5});
  check_tensor(1 / k, {2}, {1.0f / 3, -0.2f});
  check_tensor(k * 1e30, {2}, {3e30f, -5e30f});
  // comparisons with a fraction compare the values, not a truncated scalar
  check_tensor(lt(k, 3.5), {2}, {1, 1}, 0, 0);
  check_tensor(eq(k, 3.0), {2}, {1, 0}, 0, 0);
  check_tensor(eq(k, 3.5), {2}, {0, 0}, 0, 0);
  check_tensor(gt(k, -INFINITY), {2}, {1, 1}, 0, 0);
  // clamp keeps the dtype, so a fractional bound (where PyTorch would promote) is refused, not truncated
  CHECK_THROWS_WITH_AS(clamp(k, 0.5, std::nullopt), doctest::Contains("clamp: bound 0.5 of an i64 tensor is not an integer"),
                       ValueError);
  CHECK_THROWS_WITH_AS(clamp(k, std::nullopt, -0.5), doctest::Contains("clamp: bound -0.5 of an i64 tensor is not an integer"),
                       ValueError);
  check_tensor(clamp(k, -4.0, 2.0), {2}, {2, -4}, 0, 0);
}

TEST_CASE("pow with a scalar exponent, including the squaring shortcut") {
  for (const Layout& l : layouts({0.5, 1, 3, 9}, {2, 2}, f64)) {
    CAPTURE(l.name);
    check_tensor(pow(l.t, 2.0), {2, 2}, {0.25, 1, 9, 81});
    check_tensor(pow(l.t, 0.5), {2, 2}, {std::sqrt(0.5), 1, std::sqrt(3.0), 3}, 1e-15);
    check_tensor(pow(l.t, -1.0), {2, 2}, {2, 1, 1.0 / 3, 1.0 / 9}, 1e-15);
  }
  check_tensor(pow(tensor({-2, 3}), 2.0), {2}, {4, 9});
  check_tensor(pow(tensor({-8, 4}), 1.0 / 3), {2}, {NAN, std::cbrt(4.0)});  // negative base, fractional power
}

// PyTorch 1.13: torch.tensor([2, 1, -1, 0]) ** torch.tensor([-1, -2, -3, -1]) is [0, 1, -1, 0], 3 ** 40 wraps to
// -6289078614652622815, 2 ** 63 to -2^63; torch.tensor([2]) ** -1 raises.
TEST_CASE("pow of integers is exact in i64 as PyTorch's: wrapping, truncated negative powers, a scalar -1 refused") {
  const Tensor base = tensor({2, 3, -2, 0, 3, 2}, {6}, i64), exponent = tensor({3, 0, 3, 2, 40, 63}, {6}, i64);
  const Tensor y = pow(base, exponent);
  CHECK(y.dtype() == i64);
  CHECK(y.to_vector<int64_t>() ==
        std::vector<int64_t>{8, 1, -8, 0, -6289078614652622815, std::numeric_limits<int64_t>::min()});
  CHECK(pow(tensor({2, 1, -1, 0, -1}, {5}, i64), tensor({-1, -2, -3, -1, -4}, {5}, i64)).to_vector<int64_t>() ==
        std::vector<int64_t>{0, 1, -1, 0, 1});
  CHECK(pow(tensor({1, 0}, {2}, boolean), tensor({2, 3}, {2}, i64)).to_vector<int64_t>() == std::vector<int64_t>{1, 0});
  CHECK(pow(tensor({3, -2}, {2}, i64), 2.0).to_vector<int64_t>() == std::vector<int64_t>{9, 4});
  CHECK(pow(tensor({2}, {1}, i64), 0.5).dtype() == f32);  // a float exponent: the default float dtype
  CHECK_THROWS_WITH_AS(pow(tensor({2}, {1}, i64), -1.0),
                       doctest::Contains("pow: integers to negative integer powers are not allowed (i64 tensor ** -1"),
                       DTypeError);
  CHECK_THROWS_WITH_AS(pow(tensor({1}, {1}, boolean), tensor({1}, {1}, boolean)),
                       doctest::Contains("pow: not defined for two bool operands"), DTypeError);
}

TEST_CASE("comparisons give bool masks, with broadcasting and NaN") {
  using Cmp = Tensor (*)(const Tensor&, const Tensor&);
  struct Row {
    std::string name;
    Cmp op;
    std::function<bool(double, double)> ref;
  };
  const Row rows[] = {
      {"eq", eq, [](double x, double y) { return x == y; }}, {"ne", ne, [](double x, double y) { return x != y; }},
      {"lt", lt, [](double x, double y) { return x < y; }},  {"le", le, [](double x, double y) { return x <= y; }},
      {"gt", gt, [](double x, double y) { return x > y; }},  {"ge", ge, [](double x, double y) { return x >= y; }},
  };
  // values with ties so that eq/le/ge see equal pairs
  Tensor a = tensor({1, 2, 3, NAN, 2, 0}, {2, 3}), b = tensor({2, 2, NAN}, {3});
  for (DType dt : {f32, f64})
    for (const Layout& l : layouts(values(a), {2, 3}, dt))
      for (const Row& r : rows) {
        CAPTURE(r.name);
        CAPTURE(dt);
        CAPTURE(l.name);
        Tensor got = r.op(l.t, b.to(dt));
        CHECK(got.dtype() == boolean);
        std::vector<double> want;
        for (const Index& i : indices({2, 3})) want.push_back(r.ref(at(a, i), at(b, {i[1]})) ? 1 : 0);
        check_tensor(got, {2, 3}, want, 0, 0);
      }
  Tensor k = tensor({-1, 0, 5}, i64);
  check_tensor(lt(k, 0.0), {3}, {1, 0, 0});
  check_tensor(ge(k, 5.0), {3}, {0, 0, 1});
  check_tensor(eq(k, tensor({0}, i64)), {3}, {0, 1, 0});
  Tensor m = tensor({1, 0}, boolean);
  check_tensor(eq(m, 1.0), {2}, {1, 0});
  check_tensor(ne(scalar_tensor(2), 2.0), {}, {0});
}

TEST_CASE("logical_and, logical_or, logical_not on bool masks") {
  Tensor a = tensor({1, 1, 0, 0}, {2, 2}, boolean), b = tensor({1, 0}, {2, 1}, boolean);  // b broadcasts over columns
  check_tensor(logical_and(a, b), {2, 2}, {1, 1, 0, 0});
  check_tensor(logical_or(a, b), {2, 2}, {1, 1, 0, 0});
  check_tensor(logical_or(a, b.mT()), {2, 2}, {1, 1, 1, 0});
  check_tensor(logical_not(a.mT()), {2, 2}, {0, 1, 0, 1});
  CHECK(logical_not(a).dtype() == boolean);
}

TEST_CASE("where broadcasts condition and both branches, in every dtype") {
  Tensor cond = tensor({1, 0, 1}, {3, 1}, boolean);
  for (DType dt : {f32, f64, i64, boolean}) {
    CAPTURE(dt);
    Tensor a = tensor({1, 2, 3, 4}, {4}, dt), b = tensor({0}, {}, dt);
    Tensor got = where(cond, a, b);
    CHECK(got.dtype() == dt);
    std::vector<double> want;
    for (const Index& i : indices({3, 4})) want.push_back(at(cond, {i[0], 0}) ? at(a, {i[1]}) : 0);
    check_tensor(got, {3, 4}, want, 0, 0);
  }
  Tensor x = tensor({1, 2, 3, 4, 5, 6}, {2, 3}, f64);
  check_tensor(where(gt(x.mT(), 2.5), x.mT(), -x.mT()), {3, 2}, {-1, 4, -2, 5, 3, 6});
  check_tensor(where(scalar_tensor(0, boolean), scalar_tensor(1), scalar_tensor(2)), {}, {2});
  check_tensor(where(zeros({0, 2}, boolean), ones({2}), zeros({2})), {0, 2}, {});
}

TEST_CASE("masked_fill broadcasts the mask and keeps the input's shape and dtype") {
  Tensor x = arange(0, 6, 1, f64).view({2, 3});
  Tensor mask = tensor({0, 1, 1}, {3}, boolean);
  Tensor got = masked_fill(x, mask, -INFINITY);
  CHECK(got.dtype() == f64);
  check_tensor(got, {2, 3}, {0, -INFINITY, -INFINITY, 3, -INFINITY, -INFINITY});
  check_tensor(masked_fill(x.mT(), tensor({1, 0}, {1, 2}, boolean), 9), {3, 2}, {9, 3, 9, 4, 9, 5});
  check_tensor(masked_fill(tensor({5, 6}, i64), tensor({0, 1}, boolean), 2.9), {2}, {5, 2});  // as PyTorch: 2.9 -> 2
  check_tensor(x, {2, 3}, {0, 1, 2, 3, 4, 5});  // the input is untouched
}

TEST_CASE("binary ops refuse bool arithmetic, naming the op") {
  CHECK_THROWS_WITH_AS(mul(ones({2}, boolean), ones({2}, boolean)), doctest::Contains("mul: not defined for bool tensors"),
                       DTypeError);
  CHECK_THROWS_WITH_AS(sub(ones({2}), ones({2}, boolean)),
                       doctest::Contains("sub: not defined for bool tensors (use logical_not), got f32 and bool"), DTypeError);
  CHECK_THROWS_WITH_AS(logical_and(ones({2}, boolean), ones({2})),
                       doctest::Contains("logical_and: expected bool masks, got bool and f32"), DTypeError);
  CHECK_THROWS_WITH_AS(where(ones({2}), ones({2}), ones({2})), doctest::Contains("where: condition must be bool, got f32"),
                       DTypeError);
  CHECK_THROWS_WITH_AS(add(Tensor(), ones({2})), doctest::Contains("add: an operand is undefined"), DTypeError);
}

// The full table against PyTorch is tests/autograd/promotion_test.cpp; these pin the kernels' paths.
TEST_CASE("mixed dtypes promote as PyTorch: f32 with f64 gives f64, i64 with f32 gives f32") {
  const Tensor x = tensor({1.5, -2}, {2}), y = tensor({0.25, 4}, {2}, f64), k = tensor({3, -5}, i64);
  check_tensor(add(x, y), {2}, {1.75, 2});
  CHECK(add(x, y).dtype() == f64);
  CHECK(mul(k, x).dtype() == f32);
  check_tensor(mul(k, x), {2}, {4.5, 10});
  check_tensor(div(k, tensor({2, 2}, i64)), {2}, {1.5, -2.5});  // true division of integers, in f32
  CHECK(div(k, tensor({2, 2}, i64)).dtype() == f32);
  check_tensor(lt(x, k), {2}, {1, 0});
  check_tensor(where(tensor({1, 0}, {2}, boolean), k, y), {2}, {3, 4});
  CHECK(where(tensor({1, 0}, {2}, boolean), k, y).dtype() == f64);
  CHECK(add(x, scalar_tensor(1, f64)).dtype() == f32);  // a 0-dim operand of the same category does not widen
  check_tensor(add(x.view({2, 1}), y), {2, 2}, {1.75, 5.5, -1.75, 2});  // broadcasting after the conversion
}

TEST_CASE("binary ops name both shapes when they do not broadcast") {
  CHECK_THROWS_WITH_AS(add(ones({2, 3}), ones({4})), doctest::Contains("add: shapes cannot be broadcast: (2, 3) vs (4,)"),
                       ShapeError);
  CHECK_THROWS_WITH_AS(maximum(ones({2, 3}), ones({3, 3})), doctest::Contains("maximum: shapes cannot be broadcast: (2, 3) vs (3, 3)"),
                       ShapeError);
  CHECK_THROWS_WITH_AS(eq(ones({0}), ones({2})), doctest::Contains("eq: shapes cannot be broadcast: (0,) vs (2,)"), ShapeError);
  CHECK_THROWS_WITH_AS(where(ones({3}, boolean), ones({2}), ones({2})),
                       doctest::Contains("where: shapes cannot be broadcast: (3,) vs (2,)"), ShapeError);
  CHECK_THROWS_WITH_AS(masked_fill(ones({3}), ones({2, 3}, boolean), 0),
                       doctest::Contains("masked_fill: mask of shape (2, 3) does not broadcast to input shape (3,)"),
                       ShapeError);
  CHECK_THROWS_WITH_AS(masked_fill(ones({3}), ones({2}, boolean), 0),
                       doctest::Contains("masked_fill: shapes cannot be broadcast: (3,) vs (2,)"), ShapeError);
}

// The flat lines (the kernel room's, on every Highway target): the same IEEE operation per element as a scalar
// loop, at every length (whole vectors and every tail), with specials, with a scalar or a repeated row on either
// side, in f32 and f64.
template <class T>
void check_arith_bits(DType dt) {
  const T specials[] = {T(NAN), T(INFINITY), -T(INFINITY), T(0), -T(0), T(1e-40), -T(1e-40), T(3e38), T(1e-30)};
  using Op = Tensor (*)(const Tensor&, const Tensor&);
  const std::pair<Op, T (*)(T, T)> ops[] = {{add, [](T x, T y) { return x + y; }}, {sub, [](T x, T y) { return x - y; }},
                                            {mul, [](T x, T y) { return x * y; }}, {div, [](T x, T y) { return x / y; }}};
  const T k = T(0.7);
  for (int64_t n = 0; n <= 70; ++n) {
    std::vector<T> xs(static_cast<size_t>(n)), ys(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      xs[size_t(i)] = i % 5 == 0 ? specials[size_t(i / 5) % std::size(specials)] : T(std::sin(double(i))) * 7;
      ys[size_t(i)] = i % 3 == 0 ? specials[size_t(i / 3) % std::size(specials)] : T(std::cos(double(i))) + T(0.1);
    }
    const Tensor x = tensor(std::vector<double>(xs.begin(), xs.end()), {n}, dt);
    const Tensor y = tensor(std::vector<double>(ys.begin(), ys.end()), {n}, dt);
    const Tensor s = scalar_tensor(double(k), dt);
    std::vector<double> xy(xs.begin(), xs.end());
    xy.insert(xy.end(), ys.begin(), ys.end());
    const Tensor rows = tensor(xy, {2, n}, dt);
    for (const auto& [op, f] : ops) {
      CAPTURE(n);
      std::vector<T> both(static_cast<size_t>(n)), right(both), left(both);
      for (size_t i = 0; i < size_t(n); ++i) both[i] = f(xs[i], ys[i]), right[i] = f(xs[i], k), left[i] = f(k, ys[i]);
      CHECK(same_bits(op(x, y).template to_vector<T>(), both));
      CHECK(same_bits(op(x, s).template to_vector<T>(), right));
      CHECK(same_bits(op(s, y).template to_vector<T>(), left));
      // A row repeated (a bias): rows (x, y) against y on either side.
      std::vector<T> row_right(both), row_left(both);
      for (size_t i = 0; i < size_t(n); ++i) row_right.push_back(f(ys[i], ys[i])), row_left.push_back(f(ys[i], ys[i]));
      for (size_t i = 0; i < size_t(n); ++i) row_left[i] = f(ys[i], xs[i]);
      CHECK(same_bits(op(rows, y).template to_vector<T>(), row_right));
      CHECK(same_bits(op(y, rows).template to_vector<T>(), row_left));
    }
  }
}

TEST_CASE("f32 and f64 add, sub, mul and div of contiguous operands give a scalar loop's bits on every target") {
  for_each_target([] {
    check_arith_bits<float>(f32);
    check_arith_bits<double>(f64);
  });
}
