// softmax, log_softmax and normalize (layer-norm statistics) against double-precision loops along each
// dim, including the inputs that break naive versions: logits of 1e4, fully masked (-inf) lines, and a
// row with mean 1e4 and variance 1e-6 in f32.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "core/error.h"
#include "core/ops.h"
#include "core/random.h"
#include "reference.h"

using namespace tg;
using namespace tg::test;

namespace {

// softmax (or log_softmax) of x along dim by definition, in double; an all -inf line gives zeros (softmax).
std::vector<double> naive_softmax(const Tensor& x, int64_t dim, bool log_form) {
  const Shape& s = x.shape();
  std::vector<double> out;
  for (const Index& i : indices(s)) {
    Index j = i;
    double m = -INFINITY;
    for (j[dim] = 0; j[dim] < s[dim]; ++j[dim]) m = std::max(m, at(x, j));
    double z = 0;
    for (j[dim] = 0; j[dim] < s[dim]; ++j[dim]) z += std::exp(at(x, j) - m);
    const double v = at(x, i);
    out.push_back(log_form ? v - m - std::log(z) : m == -INFINITY ? 0.0 : std::exp(v - m) / z);
  }
  return out;
}

// Layer-norm statistics over the last `nn` dims, two-pass in double.
struct NaiveNorm {
  std::vector<double> out, mean, rstd;
};
NaiveNorm naive_normalize(const Tensor& x, int64_t nn, double eps) {
  std::vector<double> v = values(x);
  int64_t n = 1;
  for (int64_t d = x.dim() - nn; d < x.dim(); ++d) n *= x.shape()[d];
  NaiveNorm r;
  for (int64_t row = 0; row * n < int64_t(v.size()); ++row) {
    double m = 0, var = 0;
    for (int64_t j = 0; j < n; ++j) m += v[row * n + j] / double(n);
    for (int64_t j = 0; j < n; ++j) var += (v[row * n + j] - m) * (v[row * n + j] - m) / double(n);
    const double rs = 1 / std::sqrt(var + eps);
    for (int64_t j = 0; j < n; ++j) r.out.push_back((v[row * n + j] - m) * rs);
    r.mean.push_back(m);
    r.rstd.push_back(rs);
  }
  return r;
}

}  // namespace

TEST_CASE("softmax and log_softmax along every dim, on every layout, in f32 and f64") {
  const Shape shape = {2, 3, 4};
  for (DType dt : {f32, f64})
    for (const Layout& l : layouts(sample(24, 4.0, 2), shape, dt))
      for (int64_t dim : {0, 1, 2, -1, -3}) {
        CAPTURE(dt);
        CAPTURE(l.name);
        CAPTURE(dim);
        const int64_t d = dim < 0 ? dim + 3 : dim;
        const double tol = dt == f32 ? 1e-6 : 1e-14;
        Tensor p = softmax(l.t, dim), lp = log_softmax(l.t, dim);
        CHECK(p.dtype() == dt);
        check_tensor(p, shape, naive_softmax(l.t, d, false), tol, tol);
        check_tensor(lp, shape, naive_softmax(l.t, d, true), tol, tol);
        Shape rest = shape;
        rest.erase(rest.begin() + d);
        check_tensor(sum(p, {dim}), rest, std::vector<double>(24 / shape[d], 1.0), tol, tol);
      }
}

TEST_CASE("softmax of logits around 1e4 is finite and exact") {
  for (DType dt : {f32, f64}) {
    CAPTURE(dt);
    Tensor x = tensor({10000, 10001, 10002, -10000, 0, 10000}, {2, 3}, dt);
    const double e1 = std::exp(-1.0), e2 = std::exp(-2.0), z = 1 + e1 + e2;
    check_tensor(softmax(x, 1), {2, 3}, {e2 / z, e1 / z, 1 / z, 0, 0, 1}, 1e-6, 1e-6);
    check_tensor(log_softmax(x, 1), {2, 3}, {-2 - std::log(z), -1 - std::log(z), -std::log(z), -20000, -10000, 0},
                 1e-5, 1e-6);
    CHECK(all_finite(log_softmax(x, 0)));
    check_tensor(softmax(x, 0), {2, 3}, {1, 1, 1 / (1 + e2), 0, 0, e2 / (1 + e2)}, 1e-6, 1e-6);  // down columns
  }
}

TEST_CASE("masked lines: -inf entries get probability 0, an all -inf line gives zeros (not NaN)") {
  // Documented deviation: PyTorch gives NaN for a fully masked line; attention wants zeros.
  const double ninf = -INFINITY;
  Tensor x = tensor({0, ninf, 0, ninf, ninf, ninf}, {2, 3}, f64);
  check_tensor(softmax(x, 1), {2, 3}, {0.5, 0, 0.5, 0, 0, 0});
  check_tensor(softmax(x.mT(), 0), {3, 2}, {0.5, 0, 0, 0, 0.5, 0});
  check_tensor(log_softmax(x, 1).select(0, 0), {3}, {-std::log(2.0), ninf, -std::log(2.0)});
  // log_softmax of a fully masked line is -inf, the log of softmax's zeros (PyTorch: NaN, from -inf - -inf)
  check_tensor(log_softmax(x, 1).select(0, 1), {3}, {ninf, ninf, ninf});
  // masked_fill then softmax, as attention does it
  Tensor scores = tensor(sample(6, 1.0, 3), {2, 3});
  Tensor p = softmax(masked_fill(scores, tensor({0, 0, 1}, {3}, boolean), ninf), -1);
  check_tensor(p.narrow(1, 2, 1), {2, 1}, {0, 0});
  check_tensor(sum(p, {1}), {2}, {1, 1}, 1e-6);
}

// A NaN logit (a corrupt weight) used to vanish: the max passed it over, found -inf and took the line for a
// fully masked one, so softmax([NaN, NaN]) gave [0, 0] and a broken model predicted with confidence.
TEST_CASE("a NaN in a line makes the whole softmax line NaN, as in PyTorch, even beside -inf") {
  const double ninf = -INFINITY;
  for (DType dt : {f32, f64}) {
    Tensor x = tensor({NAN, NAN, NAN, ninf, 1, NAN, ninf, ninf}, {4, 2}, dt);
    check_tensor(softmax(x, 1), {4, 2}, {NAN, NAN, NAN, NAN, NAN, NAN, 0, 0});
    check_tensor(softmax(x.mT(), 0), {2, 4}, {NAN, NAN, NAN, 0, NAN, NAN, NAN, 0});
    check_tensor(log_softmax(x, 1).narrow(0, 0, 3), {3, 2}, {NAN, NAN, NAN, NAN, NAN, NAN});
  }
}

TEST_CASE("softmax of 0-d, size-1 and size-0 dims") {
  check_tensor(softmax(scalar_tensor(3), 0), {}, {1});
  check_tensor(log_softmax(scalar_tensor(3), -1), {}, {0});
  check_tensor(softmax(tensor({5, -5}, {2, 1}), 1), {2, 1}, {1, 1});
  check_tensor(softmax(zeros({0, 3}), 1), {0, 3}, {});
  check_tensor(softmax(zeros({3, 0}), 1), {3, 0}, {});
}

TEST_CASE("normalize over the last one and two dims on every layout, f32 and f64") {
  for (DType dt : {f32, f64})
    for (const Layout& l : layouts(sample(24, 3.0, 4), {2, 3, 4}, dt))
      for (int64_t nn : {1, 2, 3}) {
        CAPTURE(dt);
        CAPTURE(l.name);
        CAPTURE(nn);
        Normalized r = normalize(l.t, nn, 1e-5);
        NaiveNorm w = naive_normalize(l.t, nn, 1e-5);
        Shape stat = {2, 3, 4};
        for (int64_t d = 3 - nn; d < 3; ++d) stat[d] = 1;
        const double tol = dt == f32 ? 1e-5 : 1e-13;
        check_tensor(r.output, {2, 3, 4}, w.out, tol, tol);
        check_tensor(r.mean, stat, w.mean, tol, tol);
        check_tensor(r.rstd, stat, w.rstd, tol, tol);
        CHECK(r.output.dtype() == dt);
      }
}

TEST_CASE("normalize in f32 is exact for a row with mean 1e4 and variance 1e-6") {
  // The f32 inputs 1e4 + k·2^-10 (k in -2..2): E[x²] - E[x]² in f32 would cancel to noise; two passes in
  // double reproduce the double reference computed from the same f32 values.
  std::vector<double> row;
  for (int64_t j = 0; j < 64; ++j) row.push_back(10000.0 + double((j * 7) % 5 - 2) * 0x1.0p-10);
  Tensor x = tensor(row, {1, 64});
  CHECK(values(x) == row);  // every value is exact in f32
  for (double eps : {0.0, 1e-9, 1e-5}) {
    CAPTURE(eps);
    Normalized r = normalize(x, 1, eps);
    NaiveNorm w = naive_normalize(x, 1, eps);
    CHECK(w.rstd[0] > (eps == 1e-5 ? 250 : 600));  // variance about 2e-6
    check_close(r.output, w.out, 1e-6, 1e-5);
    check_close(r.mean, w.mean, 0, 1e-7);
    check_close(r.rstd, w.rstd, 0, 1e-6);
  }
}

TEST_CASE("a constant row normalizes to zeros with rstd = 1/sqrt(eps), no NaN") {
  Tensor x = tensor({3, 3, 3, 3, -1, 2, 7, 0}, {2, 4});
  Normalized r = normalize(x, 1, 1e-5);
  CHECK(all_finite(r.output));
  check_tensor(r.output.select(0, 0), {4}, {0, 0, 0, 0});
  check_tensor(r.mean, {2, 1}, {3, 2});
  check_tensor(r.rstd.select(0, 0), {1}, {1 / std::sqrt(1e-5)}, 0, 1e-6);
  check_tensor(normalize(full({2, 3}, 1e4, f64), 2, 1e-12).output, {2, 3}, std::vector<double>(6, 0.0), 0, 0);
}

TEST_CASE("normalize of rows with a zero-size dim") {
  Normalized r = normalize(zeros({0, 4}), 1, 1e-5);
  CHECK(r.output.shape() == Shape{0, 4});
  CHECK(r.mean.shape() == Shape{0, 1});
  // rows of no elements: their mean and rstd were left uninitialised
  CHECK_THROWS_WITH_AS(normalize(zeros({2, 0}), 1, 1e-5),
                       "layer_norm: no elements to normalise in the last 1 dims of shape (2, 0)", ValueError);
}

// Both used to give NaN rows silently: x - mean is inf - inf, and (x - mean)·1/√0 is 0·inf.
TEST_CASE("normalize refuses a row holding ±inf and a constant row under eps = 0, naming the row; NaN stays NaN") {
  for (DType dt : {f32, f64}) {
    CAPTURE(dt);
    CHECK_THROWS_WITH_AS(normalize(tensor({1, 2, 3, 4, 1, INFINITY, 3, 4}, {2, 4}, dt), 1, 1e-5),
                         "layer_norm: row 1 of (2, 4) holds ±inf: its mean and variance are not finite", ValueError);
    CHECK_THROWS_AS(normalize(tensor({-INFINITY, INFINITY, 0, 0}, {1, 4}, dt), 1, 1e-5), ValueError);
    CHECK_THROWS_WITH_AS(normalize(tensor({1, 2, 3, 4, 5, 5, 5, 5}, {2, 4}, dt), 1, 0.0),
                         "layer_norm: row 1 of (2, 4) is constant (or nearly) and eps is 0: rstd = 1/√(var + eps) "
                         "is not finite", ValueError);
    check_tensor(normalize(tensor({1, 2, 3, 4}, {1, 4}, dt), 1, 0.0).rstd, {1, 1}, {1 / std::sqrt(1.25)}, 1e-6);
    const Normalized r = normalize(tensor({1, NAN, INFINITY, 4, 1, 2, 3, 4}, {2, 4}, dt), 1, 1e-5);
    check_tensor(r.output.select(0, 0), {4}, {NAN, NAN, NAN, NAN});
    CHECK(all_finite(r.output.select(0, 1)));
  }
}

TEST_CASE("softmax, log_softmax and masked_softmax take the limit on +inf: 1/k on k entries, not inf - inf") {
  const double inf = INFINITY;
  for (DType dt : {f32, f64}) {
    CAPTURE(dt);
    const Tensor x = tensor({inf, 1, inf, -inf, inf, inf, inf, inf, 1, inf, NAN, 2}, {3, 4}, dt);
    check_tensor(softmax(x, 1), {3, 4}, {0.5, 0, 0.5, 0, 0.25, 0.25, 0.25, 0.25, NAN, NAN, NAN, NAN});
    check_tensor(softmax(x.mT(), 0).mT(), {3, 4}, {0.5, 0, 0.5, 0, 0.25, 0.25, 0.25, 0.25, NAN, NAN, NAN, NAN});
    const double l2 = -std::log(2.0), l4 = -std::log(4.0);
    check_tensor(log_softmax(x, 1), {3, 4}, {l2, -inf, l2, -inf, l4, l4, l4, l4, NAN, NAN, NAN, NAN});
    check_tensor(log_softmax(x.mT(), 0).mT(), {3, 4}, {l2, -inf, l2, -inf, l4, l4, l4, l4, NAN, NAN, NAN, NAN});
    // blocked +inf entries are left out; a line blocked everywhere gives zeros
    const Tensor blocked = tensor({1, 0, 0, 0, 1, 1, 1, 1, 0, 0, 1, 0}, {3, 4}, dt).to(boolean);
    check_tensor(masked_softmax(x, blocked), {3, 4}, {0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0});
    check_tensor(masked_softmax(x.mT().contiguous().mT(), blocked.mT().contiguous().mT()), {3, 4},
                 {0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0});
    // the gradient at the limit is softmax's Jacobian at y: finite
    CHECK(all_finite(softmax_backward(tensor({1, 2, 3, 4}, {1, 4}, dt), softmax(x, 1).narrow(0, 0, 1), 1)));
  }
}

TEST_CASE("softmax and normalize errors name the op, dim and shape") {
  CHECK_THROWS_WITH_AS(softmax(ones({2, 3}), 2), doctest::Contains("softmax: dim 2 out of range for a 2-d tensor (expected [-2, 1])"),
                       IndexError);
  CHECK_THROWS_WITH_AS(log_softmax(ones({2, 3}), -3), doctest::Contains("log_softmax: dim -3 out of range"), IndexError);
  CHECK_THROWS_WITH_AS(softmax(ones({2}, i64), 0), doctest::Contains("softmax: expected a floating dtype (f32 or f64), got i64"),
                       DTypeError);
  CHECK_THROWS_WITH_AS(normalize(ones({2, 3}), 0, 1e-5),
                       doctest::Contains("layer_norm: cannot normalise the last 0 dims of a tensor of shape (2, 3)"), ShapeError);
  CHECK_THROWS_WITH_AS(normalize(ones({2, 3}), 3, 1e-5),
                       doctest::Contains("layer_norm: cannot normalise the last 3 dims of a tensor of shape (2, 3)"), ShapeError);
  CHECK_THROWS_WITH_AS(normalize(ones({2, 3}), 1, -1e-5), doctest::Contains("layer_norm: eps must be finite and >= 0, got -1e-05"),
                       ValueError);
  CHECK_THROWS_WITH_AS(normalize(ones({2, 3}), 1, NAN), doctest::Contains("got nan"), ValueError);
  CHECK_THROWS_WITH_AS(normalize(ones({2, 3}, i64), 1, 1e-5), doctest::Contains("layer_norm: expected a floating dtype"),
                       DTypeError);
}

TEST_CASE("softmax_backward and log_softmax_backward match their compositions along every dim and layout") {
  const Shape shape = {2, 3, 4};
  for (DType dt : {f32, f64})
    for (const Layout& l : layouts(sample(24, 3.0, 5), shape, dt))
      for (int64_t dim : {0, 1, 2, -1}) {
        CAPTURE(dt);
        CAPTURE(l.name);
        CAPTURE(dim);
        const double tol = dt == f32 ? 1e-6 : 1e-14;
        Tensor dy = tensor(sample(24, 2.0, 6), shape, dt);
        Tensor y = softmax(l.t, dim), ly = log_softmax(l.t, dim);
        check_tensor(softmax_backward(dy, y, dim), shape, values(y * (dy - sum(dy * y, {dim}, true))), tol, tol);
        check_tensor(log_softmax_backward(dy, ly, dim), shape, values(dy - exp(ly) * sum(dy, {dim}, true)), tol, tol);
      }
}

TEST_CASE("softmax_backward of a fully masked line is zero, and mismatched shapes name both") {
  Tensor y = softmax(tensor({-INFINITY, -INFINITY, 0, 0}, {2, 2}), 1);
  check_tensor(softmax_backward(ones({2, 2}), y, 1), {2, 2}, {0, 0, 0, 0});
  CHECK_THROWS_WITH_AS(softmax_backward(ones({2, 3}), ones({2, 2}), 1), doctest::Contains("(2, 2) vs (2, 3)"), ShapeError);
}

TEST_CASE("layer_norm_backward matches the composition, with and without weight and bias") {
  for (DType dt : {f32, f64})
    for (int64_t nn : {1, 2}) {
      CAPTURE(dt);
      CAPTURE(nn);
      const Shape shape = {2, 3, 4};
      const Shape rows(shape.end() - nn, shape.end());
      const std::vector<int64_t> dims = nn == 1 ? std::vector<int64_t>{2} : std::vector<int64_t>{1, 2};
      const std::vector<int64_t> batch = nn == 1 ? std::vector<int64_t>{0, 1} : std::vector<int64_t>{0};
      const double tol = dt == f32 ? 1e-5 : 1e-13;
      Normalized r = normalize(tensor(sample(24, 3.0, 7), shape, dt), nn, 1e-5);
      Tensor dy = tensor(sample(24, 2.0, 8), shape, dt), w = tensor(sample(rows.numel(), 1.0, 9), rows, dt);
      for (bool with_weight : {true, false}) {
        CAPTURE(with_weight);
        Tensor g = with_weight ? dy * w : dy;
        Tensor dx = r.rstd * (g - mean(g, dims, true) - r.output * mean(g * r.output, dims, true));
        LayerNormGrads got = layer_norm_backward(dy, r.output, r.rstd, with_weight ? w : Tensor(), true);
        check_tensor(got.dx, shape, values(dx), tol, tol);
        check_tensor(got.dbias, {rows.numel()}, values(sum(dy, batch)), tol, tol);
        CHECK(got.dweight.defined() == with_weight);
        if (with_weight) check_tensor(got.dweight, rows, values(sum(dy * r.output, batch)), tol, tol);
      }
      CHECK_FALSE(layer_norm_backward(dy, r.output, r.rstd, w, false).dbias.defined());
    }
  CHECK_THROWS_WITH_AS(layer_norm_backward(ones({2, 4}), ones({2, 4}), ones({2, 1}), ones({3}), false),
                       doctest::Contains("weight (3,)"), ShapeError);
  CHECK_THROWS_WITH_AS(layer_norm_backward(ones({2, 3}), ones({2, 4}), ones({2, 1}), Tensor(), false),
                       doctest::Contains("dy (2, 3) vs x̂ (2, 4)"), ShapeError);
  CHECK_THROWS_WITH_AS(layer_norm_backward(ones({3, 4}), ones({3, 4}), ones({5, 1}), Tensor(), false),
                       doctest::Contains("rstd (5, 1) does not divide x̂ (3, 4) into rows"), ShapeError);
}

TEST_CASE("normalize's affine output has the bits of output·weight + bias as mul then add") {
  Generator gen(9);
  const Tensor x = randn({5, 7, 24}, f32, &gen), w = randn({24}, f32, &gen), b = randn({24}, f32, &gen);
  const Normalized plain = normalize(x, 1, 1e-5);
  CHECK_FALSE(plain.affine.defined());
  auto same = [](const Tensor& p, const Tensor& q) { return p.to_vector<float>() == q.to_vector<float>(); };
  CHECK(same(normalize(x, 1, 1e-5, w, b).affine, add(mul(plain.output, w), b)));
  CHECK(same(normalize(x, 1, 1e-5, w, Tensor()).affine, mul(plain.output, w)));
  CHECK(same(normalize(x, 1, 1e-5, Tensor(), b).affine, add(plain.output, b)));
  CHECK(same(normalize(x, 1, 1e-5, w, b).output, plain.output));
  const Tensor w2 = randn({7, 24}, f32, &gen);
  CHECK(same(normalize(x, 2, 1e-5, w2, Tensor()).affine, mul(normalize(x, 2, 1e-5).output, w2)));
  CHECK_THROWS_WITH_AS(normalize(x, 1, 1e-5, ones({7, 24}), Tensor()),
                       doctest::Contains("layer_norm: weight (7, 24) f32 does not fit the normalized shape (24,) of f32"),
                       ShapeError);
  CHECK_THROWS_WITH_AS(normalize(x, 1, 1e-5, Tensor(), ones({24}, f64)), doctest::Contains("layer_norm: bias (24,) f64"),
                       ShapeError);
}
