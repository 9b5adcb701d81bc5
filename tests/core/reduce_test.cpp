// Reductions against a naive grouping loop: every input element is filed under the output element it
// reduces into, then each group is summed / averaged / maxed by hand. One and several dims, negative dims,
// keepdim, all dims, empty dims, 0-d inputs, every layout, f32/f64 and i64/bool where defined.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "core/error.h"
#include "core/ops.h"
#include "reference.h"
#include "targets.h"

using namespace tg;
using namespace tg::test;

namespace {

// The elements of x grouped by output position (row-major over the reduced dims within a group), and the
// output shape. `dims` empty means all.
struct Groups {
  std::vector<std::vector<double>> of;
  Shape shape;
};
Groups group(const Tensor& x, std::vector<int64_t> dims, bool keepdim) {
  const int64_t nd = x.dim();
  std::vector<bool> red(nd, dims.empty());
  for (int64_t d : dims) red[d < 0 ? d + nd : d] = true;
  Groups g;
  for (int64_t d = 0; d < nd; ++d)
    if (!red[d]) g.shape.push_back(x.shape()[d]);
    else if (keepdim) g.shape.push_back(1);
  Shape kept;  // the output shape without keepdim's 1s
  for (int64_t d = 0; d < nd; ++d)
    if (!red[d]) kept.push_back(x.shape()[d]);
  g.of.resize(kept.numel());
  for (const Index& i : indices(x.shape())) {
    Index k;
    for (int64_t d = 0; d < nd; ++d)
      if (!red[d]) k.push_back(i[d]);
    g.of[flat(kept, k)].push_back(at(x, i));
  }
  return g;
}

using RowFn = std::function<double(const std::vector<double>&)>;

// Checks op(x, dims, keepdim) on every layout of a (2, 3, 4) input against fn applied per group.
void check_reduce(const std::string& name, const std::function<Tensor(const Tensor&, const std::vector<int64_t>&, bool)>& op,
                  const RowFn& fn, DType dt) {
  const std::vector<std::vector<int64_t>> dim_sets = {{}, {0}, {1}, {2}, {-1}, {0, 2}, {2, 0}, {-3, -2}, {0, 1, 2}};
  for (const Layout& l : layouts(sample(24, 3.0, 7), {2, 3, 4}, dt))
    for (const std::vector<int64_t>& dims : dim_sets)
      for (bool keepdim : {false, true}) {
        CAPTURE(name);
        CAPTURE(dt);
        CAPTURE(l.name);
        CAPTURE(Shape(dims));
        CAPTURE(keepdim);
        Groups g = group(l.t, dims, keepdim);
        std::vector<double> want;
        for (const auto& row : g.of) want.push_back(fn(row));
        check_tensor(op(l.t, dims, keepdim), g.shape, want, dt == f32 ? 1e-5 : 1e-12, dt == f32 ? 1e-5 : 1e-12);
      }
}

double row_sum(const std::vector<double>& r) {
  double s = 0;
  for (double v : r) s += v;
  return s;
}
double row_var(const std::vector<double>& r, int64_t correction) {
  double m = row_sum(r) / double(r.size()), ss = 0;
  for (double v : r) ss += (v - m) * (v - m);
  return ss / double(int64_t(r.size()) - correction);
}
double row_lse(const std::vector<double>& r) {
  double m = *std::max_element(r.begin(), r.end()), s = 0;
  for (double v : r) s += std::exp(v - m);
  return m + std::log(s);
}

}  // namespace

TEST_CASE("sum and mean over one, several and all dims, with keepdim, on every layout") {
  for (DType dt : {f32, f64}) {
    check_reduce("sum", [](const Tensor& x, const auto& d, bool k) { return sum(x, d, k); }, row_sum, dt);
    check_reduce("mean", [](const Tensor& x, const auto& d, bool k) { return mean(x, d, k); },
                 [](const auto& r) { return row_sum(r) / double(r.size()); }, dt);
  }
}

TEST_CASE("var: biased, unbiased and larger corrections") {
  for (DType dt : {f32, f64})
    for (int64_t c : {0, 1})  // 2 would leave dim 0 (of size 2) no degrees of freedom: by hand below
      check_reduce(fmt::format("var correction={}", c),
                   [c](const Tensor& x, const auto& d, bool k) { return var(x, d, c, k); },
                   [c](const auto& r) { return row_var(r, c); }, dt);
  // by hand: {1, 2, 3, 4} has mean 2.5 and squared deviations summing to 5
  check_tensor(var(tensor({1, 2, 3, 4}), {}, 0), {}, {1.25});
  check_tensor(var(tensor({1, 2, 3, 4}), {}, 1), {}, {5.0 / 3});
  check_tensor(var(tensor({1, 2, 3, 4}), {}, 3), {}, {5.0});
  // one sample, or fewer than correction + 1: no degrees of freedom (PyTorch: 0/0 = NaN, or inf)
  CHECK_THROWS_WITH_AS(var(tensor({7}), {}, 1), doctest::Contains("var: 1 elements over dims () of shape (1,) leave no "
                       "degrees of freedom with correction 1"), ValueError);
}

TEST_CASE("logsumexp matches the max-shifted loop, is stable at 1000, and all -inf gives -inf") {
  for (DType dt : {f32, f64})
    check_reduce("logsumexp", [](const Tensor& x, const auto& d, bool k) { return logsumexp(x, d, k); }, row_lse, dt);
  for (DType dt : {f32, f64}) {
    CAPTURE(dt);
    Tensor x = tensor({1000, 1000, -INFINITY, -INFINITY, -1000, -INFINITY, 0, INFINITY}, {4, 2}, dt);
    check_tensor(logsumexp(x, {1}), {4}, {1000 + std::log(2.0), -INFINITY, -1000, INFINITY});
    check_tensor(logsumexp(x.mT(), {0}, true), {1, 4}, {1000 + std::log(2.0), -INFINITY, -1000, INFINITY});
  }
  check_tensor(logsumexp(tensor({1, NAN})), {}, {NAN});
}

TEST_CASE("amax and amin over one and several dims; ties and NaN") {
  for (DType dt : {f32, f64, i64}) {
    check_reduce("amax", [](const Tensor& x, const auto& d, bool k) { return amax(x, d, k); },
                 [](const auto& r) { return *std::max_element(r.begin(), r.end()); }, dt);
    check_reduce("amin", [](const Tensor& x, const auto& d, bool k) { return amin(x, d, k); },
                 [](const auto& r) { return *std::min_element(r.begin(), r.end()); }, dt);
  }
  check_tensor(amax(tensor({1, NAN, 3, 2, 5, 4}, {2, 3}), {1}), {2}, {NAN, 5});
  check_tensor(amin(tensor({NAN, 1, 3, 2, 5, 4}, {2, 3}), {1}), {2}, {NAN, 2});
  check_tensor(amax(tensor({-INFINITY, -INFINITY})), {}, {-INFINITY});
  check_tensor(amax(index_tensor({INT64_MIN, INT64_MAX - 1}, {2})), {}, {double(INT64_MAX - 1)});
}

TEST_CASE("max, min and argmax give values and first-occurrence indices along a dim") {
  for (const Layout& l : layouts({3, 7, 7, 1, 2, 2, 9, 0, 5, 5, 5, 5}, {3, 4}, f64)) {
    CAPTURE(l.name);
    ValuesIndices r = max(l.t, 1);
    CHECK(r.indices.dtype() == i64);
    check_tensor(r.values, {3}, {7, 9, 5});
    check_tensor(r.indices, {3}, {1, 2, 0});
    ValuesIndices c = min(l.t, 0, true);
    check_tensor(c.values, {1, 4}, {2, 2, 5, 0});
    check_tensor(c.indices, {1, 4}, {1, 1, 2, 1});
    check_tensor(argmax(l.t, -2), {4}, {2, 0, 1, 2});
    check_tensor(argmax(l.t, 1, true), {3, 1}, {1, 2, 0});
  }
  // NaN wins, at its first position
  ValuesIndices n = max(tensor({1, NAN, 5, NAN}), 0);
  CHECK(std::isnan(n.values.item()));
  CHECK(n.indices.item() == 1);
  check_tensor(argmax(tensor({2, 8, -1, 8}, i64), 0), {}, {1});
  check_tensor(max(scalar_tensor(4), 0).values, {}, {4});
  check_tensor(max(scalar_tensor(4), -1, true).indices, {}, {0});
}

TEST_CASE("reducing a 0-d tensor returns its value") {
  Tensor s = scalar_tensor(2.5, f64);
  check_tensor(sum(s), {}, {2.5});
  check_tensor(sum(s, {0}), {}, {2.5});
  check_tensor(mean(s, {-1}, true), {}, {2.5});
  check_tensor(amax(s), {}, {2.5});
  check_tensor(logsumexp(s), {}, {2.5});
}

TEST_CASE("empty dims: sum 0, logsumexp -inf; mean, var and max refuse") {
  Tensor x = zeros({2, 0, 3});
  check_tensor(sum(x, {1}), {2, 3}, std::vector<double>(6, 0.0));
  check_tensor(sum(x, {1}, true), {2, 1, 3}, std::vector<double>(6, 0.0));
  check_tensor(sum(x), {}, {0});
  // PyTorch gives NaN (0/0) for these: an average of nothing is refused instead
  CHECK_THROWS_WITH_AS(mean(x, {1}), doctest::Contains("mean: no elements to average over dims (1) of shape (2, 0, 3)"),
                       ValueError);
  CHECK_THROWS_WITH_AS(var(x, {1}), doctest::Contains("var: 0 elements over dims (1) of shape (2, 0, 3)"), ValueError);
  check_tensor(mean(x, {2}), {2, 0}, {});  // no output: nothing to refuse
  check_tensor(var(x, {0}, 1), {0, 3}, {});
  check_tensor(logsumexp(x, {1}), {2, 3}, std::vector<double>(6, -INFINITY));
  check_tensor(sum(x, {2}), {2, 0}, {});  // reducing a non-empty dim of an empty tensor
  check_tensor(amax(x, {0}), {0, 3}, {});
  check_tensor(sum(zeros({0}, i64)), {}, {0});
  CHECK_THROWS_WITH_AS(amax(x, {1}), doctest::Contains("amax: cannot reduce over an empty dim (input shape (2, 0, 3))"),
                       IndexError);
  CHECK_THROWS_WITH_AS(amin(x), doctest::Contains("amin: cannot reduce over an empty dim"), IndexError);
  CHECK_THROWS_WITH_AS(max(x, 1), doctest::Contains("max: cannot reduce over an empty dim (input shape (2, 0, 3))"),
                       IndexError);
  CHECK_THROWS_WITH_AS(argmax(zeros({0}), 0), doctest::Contains("argmax: cannot reduce over an empty dim (input shape (0,))"),
                       IndexError);
}

TEST_CASE("sum of i64 and bool gives exact i64") {
  const int64_t big = (int64_t(1) << 53) + 1;
  Tensor k = index_tensor({big, 1, -3, 4}, {2, 2});
  Tensor s = sum(k, {0});
  CHECK(s.dtype() == i64);
  CHECK(s.to_vector<int64_t>() == std::vector<int64_t>{big - 3, 5});
  CHECK(sum(k).to_vector<int64_t>()[0] == big + 2);
  Tensor m = tensor({1, 0, 1, 1, 1, 0}, {2, 3}, boolean);
  CHECK(sum(m).dtype() == i64);
  check_tensor(sum(m, {1}), {2}, {2, 2}, 0, 0);
  check_tensor(sum(m.mT(), {0}, true), {1, 2}, {2, 2}, 0, 0);
  // Overflow wraps around as in PyTorch (defined behaviour here: the UBSan build checks it).
  const int64_t max = std::numeric_limits<int64_t>::max();
  CHECK(sum(index_tensor({max, 1}, {2})).to_vector<int64_t>()[0] == std::numeric_limits<int64_t>::min());
}

TEST_CASE("f32 sums accumulate in double") {
  // 2^20 copies of 0.1f: an f32 running sum drifts by ~1%; a double one is exact to f32 rounding.
  const int64_t n = int64_t(1) << 20;
  Tensor x = full({n}, 0.1);
  const double want = double(n) * double(0.1f);
  CHECK(sum(x).item() == doctest::Approx(want).epsilon(1e-7));
  CHECK(mean(x).item() == doctest::Approx(double(0.1f)).epsilon(1e-7));
  CHECK(var(x).item() == doctest::Approx(0.0).epsilon(1e-12));
  // many short rows (the threaded path) against the loop
  Tensor r = tensor(sample(40000, 1.0, 4), {10000, 4});
  Groups g = group(r, {1}, false);
  std::vector<double> w;
  for (const auto& row : g.of) w.push_back(row_sum(row));
  check_close(sum(r, {1}), w, 1e-6, 1e-6);
}

// The column sums of a leading-dim sum (a bias gradient) run the kernel room's line: each column's terms widened
// to double and added in row order, the bits of that loop, for every count of columns (every tail) on every target.
TEST_CASE("f32 sums over leading dims give the bits of an in-order double sum per column, on every target") {
  for_each_target([] {
    for (int64_t m = 1; m <= 70; ++m) {
      const int64_t rows = 7;
      const std::vector<double> v = sample(rows * m, 1e3, int(m));
      std::vector<double> want(size_t(m), 0.0);
      for (int64_t j = 0; j < rows; ++j)
        for (int64_t i = 0; i < m; ++i) want[size_t(i)] += double(float(v[size_t(j * m + i)]));
      std::vector<float> want_f32(want.begin(), want.end());
      CAPTURE(m);
      CHECK(same_bits(sum(tensor(v, {rows, m}), {0}).to_vector<float>(), want_f32));
    }
  });
}

TEST_CASE("reduction errors name the op and the dims") {
  Tensor x = ones({2, 3});
  CHECK_THROWS_WITH_AS(sum(x, {1, -1}), doctest::Contains("sum: dim -1 appears more than once"), IndexError);
  CHECK_THROWS_WITH_AS(mean(x, {2}), doctest::Contains("mean: dim 2 out of range for a 2-d tensor (expected [-2, 1])"),
                       IndexError);
  CHECK_THROWS_WITH_AS(max(x, -3), doctest::Contains("max: dim -3 out of range for a 2-d tensor"), IndexError);
  CHECK_THROWS_WITH_AS(mean(ones({2}, i64)), doctest::Contains("mean: expected a floating dtype (f32 or f64), got i64"),
                       DTypeError);
  CHECK_THROWS_WITH_AS(var(ones({2}, boolean)), doctest::Contains("var: expected a floating dtype"), DTypeError);
  CHECK_THROWS_WITH_AS(logsumexp(ones({2}, i64)), doctest::Contains("logsumexp: expected a floating dtype"), DTypeError);
  CHECK_THROWS_WITH_AS(amax(ones({2}, boolean)), doctest::Contains("amax: not defined for bool tensors"), DTypeError);
  CHECK_THROWS_WITH_AS(sum(Tensor()), doctest::Contains("sum: the input is undefined"), DTypeError);
}
