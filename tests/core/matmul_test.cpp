// matmul against a naive triple loop in double, with PyTorch's rules: 1-D operands promoted and the added
// dim removed, batch dims broadcast. Operands come contiguous, transposed (mT views, which reach BLAS as
// transpose flags), strided and expanded; zero-size M, N, K and batch; f32 and f64.
#include <doctest/doctest.h>

#include <cfloat>
#include <cmath>

#include "core/error.h"
#include "core/ops.h"
#include "core/parallel.h"
#include "core/random.h"
#include "reference.h"

using namespace tg;
using namespace tg::test;

namespace {

// Broadcast of two batch shapes, by hand (sizes equal or 1).
Shape broadcast(const Shape& a, const Shape& b) {
  const size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())], db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    out[i] = da == 1 ? db : da;
  }
  return out;
}

// PyTorch matmul by definition: out[batch..., m, n] = Σ_k a[batch..., m, k] · b[batch..., k, n].
struct Naive {
  Shape shape;
  std::vector<double> values;
};
Naive naive_matmul(const Tensor& a, const Tensor& b) {
  const bool a1 = a.dim() == 1, b1 = b.dim() == 1;
  const Shape ab(a.shape().begin(), a.shape().end() - (a1 ? 1 : 2));
  const Shape bb(b.shape().begin(), b.shape().end() - (b1 ? 1 : 2));
  const int64_t M = a1 ? 1 : a.size(-2), K = a.size(-1), N = b1 ? 1 : b.size(-1);
  Naive r;
  r.shape = broadcast(ab, bb);
  const Shape batch = r.shape;
  if (!a1) r.shape.push_back(M);
  if (!b1) r.shape.push_back(N);
  for (const Index& bi : indices(batch))
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        double s = 0;
        for (int64_t k = 0; k < K; ++k) {
          Index ia = broadcast_index(bi, ab), ib = broadcast_index(bi, bb);
          if (!a1) ia.push_back(m);
          ia.push_back(k);
          ib.push_back(k);
          if (!b1) ib.push_back(n);
          s += at(a, ia) * at(b, ib);
        }
        r.values.push_back(s);
      }
  return r;
}

void check_matmul(const Tensor& a, const Tensor& b, double tol) {
  Naive want = naive_matmul(a, b);
  Tensor got = matmul(a, b);
  CHECK(got.dtype() == a.dtype());
  check_tensor(got, want.shape, want.values, tol, tol);
}

struct MatmulCase {
  Shape a, b;
};
const MatmulCase kCases[] = {
    {{3}, {3}},              // dot
    {{3}, {3, 4}},           // vector @ matrix
    {{2, 3}, {3}},           // matrix @ vector
    {{2, 3}, {3, 4}},        // matrix @ matrix
    {{1, 1}, {1, 1}},        // 1x1
    {{1, 5}, {5, 1}},        // row @ column
    {{5, 2, 3}, {3, 4}},     // batched @ matrix (one GEMM over all rows)
    {{2, 3}, {5, 3, 4}},     // matrix @ batched
    {{2, 1, 2, 3}, {3, 3, 4}},  // broadcast batch dims
    {{4}, {2, 4, 3}},        // vector @ batched
    {{2, 2, 4}, {4}},        // batched @ vector
    {{2, 0}, {0, 3}},        // K = 0: zeros
    {{0, 3}, {3, 2}},        // M = 0
    {{2, 3}, {3, 0}},        // N = 0
    {{0}, {0}},              // empty dot = 0
};

}  // namespace

TEST_CASE("matmul matches the triple loop for every operand rank and layout, f32 and f64") {
  for (DType dt : {f32, f64})
    for (const MatmulCase& c : kCases)
      for (const Layout& la : layouts(sample(c.a.numel(), 1.0, 1), c.a, dt))
        for (const Layout& lb : layouts(sample(c.b.numel(), 1.0, 2), c.b, dt)) {
          CAPTURE(dt);
          CAPTURE(c.a);
          CAPTURE(c.b);
          CAPTURE(la.name);
          CAPTURE(lb.name);
          check_matmul(la.t, lb.t, dt == f32 ? 1e-5 : 1e-13);
        }
}

TEST_CASE("matmul of mT views (transpose flags, no copy) in 2-D and batched") {
  for (DType dt : {f32, f64}) {
    CAPTURE(dt);
    const double tol = dt == f32 ? 1e-5 : 1e-13;
    Tensor x = tensor(sample(12, 1.0, 3), {4, 3}, dt), y = tensor(sample(20, 1.0, 4), {5, 4}, dt);
    check_matmul(x.mT(), y.mT(), tol);           // (3, 4) @ (4, 5), both transposed
    check_matmul(x.mT(), x, tol);                // Gram matrix
    check_matmul(y, x, tol);                     // (5, 4) @ (4, 3)
    Tensor bx = tensor(sample(24, 1.0, 5), {2, 4, 3}, dt);
    check_matmul(bx.mT(), bx, tol);              // (2, 3, 4) @ (2, 4, 3)
    check_matmul(bx.mT(), y.mT(), tol);          // batched mT @ 2-D mT
    check_matmul(y.select(0, 1), x, tol);        // a row view
    check_matmul(x.select(1, 2), x, tol);        // a strided vector @ matrix
    check_matmul(x.select(0, 1), x.mT(), tol);   // a vector @ transposed matrix
    check_matmul(x.narrow(1, 1, 1).mT(), x, tol);  // (1, 4) with row stride 1
  }
}

TEST_CASE("matmul of expanded (stride-0) operands") {
  Tensor row = tensor({1, 2, 3}, {1, 3}, f64);
  check_matmul(row.expand({4, 3}), tensor(sample(6, 1.0, 6), {3, 2}, f64), 1e-14);
  Tensor w = tensor(sample(12, 1.0, 7), {3, 4}, f64);
  check_matmul(tensor(sample(15, 1.0, 8), {5, 1, 3}, f64), w.expand({5, 3, 4}), 1e-14);
  Tensor col = tensor({1, -1, 2}, {3, 1}, f64).expand({3, 2});
  check_matmul(tensor(sample(6, 1.0, 9), {2, 3}, f64), col, 1e-14);
  check_matmul(scalar_tensor(2, f64).expand({3}), tensor(sample(6, 1.0, 9), {3, 2}, f64), 1e-14);
}

TEST_CASE("matmul with zero-size M, N, K or batch inside a batch") {
  for (const MatmulCase& c : {MatmulCase{{3, 2, 0}, {0, 4}}, MatmulCase{{2, 0, 3}, {2, 3, 4}},
                              MatmulCase{{2, 2, 3}, {2, 3, 0}}, MatmulCase{{0, 2, 3}, {3, 4}},
                              MatmulCase{{2, 2, 0}, {2, 0, 4}}, MatmulCase{{0, 2, 3}, {0, 3, 4}}}) {
    CAPTURE(c.a);
    CAPTURE(c.b);
    check_matmul(ones(c.a), ones(c.b), 0);
  }
  CHECK(matmul(ones({2, 0}), ones({0, 3})).version() == 0);  // a fresh result, not an in-place write
}

TEST_CASE("a larger product through BLAS matches the loop in f64") {
  Tensor a = tensor(sample(48 * 80, 1.0, 10), {48, 80}, f64), b = tensor(sample(80 * 40, 1.0, 11), {40, 80}, f64);
  check_matmul(a, b.mT(), 1e-12);
  check_matmul(a.reshape({4, 12, 80}), b.mT(), 1e-12);
}

TEST_CASE("f32 products past 256³ multiply-adds, split by rows over 2 threads, are within K·eps·Σ|a||b|") {
  // 37 M multiply-adds: parts of rows on 2 threads, on our own kernel where OpenBLAS's kernels are narrower than
  // the CPU's vectors (cpu::sgemm_small_takes), on OpenBLAS's otherwise; linear adds its bias in either.
  const int64_t M = 600, N = 250, K = 250;
  const Tensor a = tensor(sample(M * K, 1.0, 12), {M, K}), w = tensor(sample(N * K, 1.0, 13), {N, K});
  const Tensor bias = tensor(sample(N, 1.0, 14), {N});
  const std::vector<float> av = a.to_vector<float>(), wv = w.to_vector<float>(), bv = bias.to_vector<float>();
  const int saved = get_num_threads();
  std::vector<std::vector<float>> products, linears;
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    products.push_back(matmul(a, w.mT()).to_vector<float>());
    linears.push_back(linear(a, w, bias).to_vector<float>());
  }
  set_num_threads(saved);
  CHECK(products[0] == products[1]);  // the same bits at any thread count
  CHECK(linears[0] == linears[1]);
  double worst = 0;  // the largest error in units of the bound
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double exact = 0, magnitude = 0;
      for (int64_t k = 0; k < K; ++k) {
        const double t = double(av[size_t(i * K + k)]) * double(wv[size_t(j * K + k)]);
        exact += t, magnitude += std::abs(t);
      }
      const double bound = double(K) * FLT_EPSILON * magnitude;
      worst = std::max(worst, std::abs(products[0][size_t(i * N + j)] - exact) / bound);
      // the bias joins the sum: one more rounding, of the sum's size
      const double with_bias = exact + bv[size_t(j)];
      worst = std::max(worst, std::abs(linears[0][size_t(i * N + j)] - with_bias) /
                                  (bound + FLT_EPSILON * std::abs(with_bias)));
    }
  CHECK(worst <= 1.0);
  CHECK(worst > 0);  // f32 sums round: the comparison is not vacuous
}

TEST_CASE("matmul_out writes per-head products into a permuted layout with matmul's bits") {
  // Attention's (B, H, S, d) results into a (B, S, H, d) tensor: the GEMMs write through its strides.
  Tensor a = randn({2, 3, 5, 4}), b = randn({2, 3, 6, 4});
  for (const Tensor& rhs : {b.mT(), b.mT().contiguous()}) {  // transpose flag and plain
    Tensor storage = empty({2, 5, 3, 6}), out = storage.permute({0, 2, 1, 3});
    matmul_out(out, a, rhs);
    CHECK(values(out) == values(matmul(a, rhs)));
    CHECK(out.storage() == storage.storage());
    CHECK(out.permute({0, 2, 1, 3}).is_contiguous());
  }
  Tensor a64 = a.to(f64), b64 = b.mT().to(f64), out64 = empty({2, 5, 3, 6}, f64).permute({0, 2, 1, 3});
  CHECK(values(matmul_out(out64, a64, b64)) == values(matmul(a64, b64)));
}

TEST_CASE("matmul_out goes through a copy for an out that GEMM cannot write or that is an operand") {
  Tensor a = randn({4, 3}), b = randn({3, 5});
  Tensor column_major = empty({5, 4}).mT();  // (4, 5) with unit row stride
  CHECK(values(matmul_out(column_major, a, b)) == values(matmul(a, b)));
  Tensor x = randn({2, 3, 3});
  Tensor want = matmul(x.select(0, 0), x.select(0, 1)), first = x.select(0, 0);
  matmul_out(first, x.select(0, 0), x.select(0, 1));  // out is an operand: read wholly before written
  CHECK(values(x.select(0, 0)) == values(want));
  const uint64_t version = x.version();
  Tensor zero_k = x.narrow(2, 0, 0);  // (2, 3, 0) @ (2, 0, 3): empty sums
  Tensor out = x.select(0, 1).expand({2, 3, 3});
  CHECK_THROWS_AS(matmul_out(out, zero_k, zero_k.mT()), ValueError);  // an out whose elements overlap
  Tensor fresh = full({2, 3, 3}, 7.0);
  CHECK(values(matmul_out(fresh, zero_k, zero_k.mT())) == values(zeros({2, 3, 3})));
  CHECK(x.version() == version);
}

TEST_CASE("matmul_out names out's shape and dtype when they are not the product's") {
  Tensor out = empty({2, 2});
  CHECK_THROWS_WITH_AS(matmul_out(out, ones({2, 3}), ones({3, 4})),
                       doctest::Contains("matmul_out: out (2, 2) for (2, 3) @ (3, 4)"), ShapeError);
  Tensor out64 = empty({2, 4}, f64);
  CHECK_THROWS_WITH_AS(matmul_out(out64, ones({2, 3}), ones({3, 4})), doctest::Contains("matmul_out: out is f64"),
                       DTypeError);
  CHECK_THROWS_WITH_AS(matmul_out(out, ones({2, 3}), ones({4, 5})),
                       doctest::Contains("matmul_out: inner dimensions differ: (2, 3) @ (4, 5)"), ShapeError);
}

TEST_CASE("matmul errors name both shapes") {
  CHECK_THROWS_WITH_AS(matmul(ones({2, 3}), ones({4, 5})), doctest::Contains("matmul: inner dimensions differ: (2, 3) @ (4, 5)"),
                       ShapeError);
  CHECK_THROWS_WITH_AS(matmul(ones({3}), ones({4})), doctest::Contains("matmul: inner dimensions differ: (3,) @ (4,)"),
                       ShapeError);
  CHECK_THROWS_WITH_AS(matmul(ones({2, 2, 3}), ones({4})), doctest::Contains("matmul: inner dimensions differ: (2, 2, 3) @ (4,)"),
                       ShapeError);
  CHECK_THROWS_WITH_AS(matmul(ones({2, 3}), ones({5, 2})), doctest::Contains("(2, 3) @ (5, 2)"), ShapeError);
  CHECK_THROWS_WITH_AS(matmul(ones({2, 2, 3}), ones({3, 3, 4})), doctest::Contains("matmul: shapes cannot be broadcast: (2,) vs (3,)"),
                       ShapeError);
  CHECK_THROWS_WITH_AS(matmul(scalar_tensor(2), ones({3})), doctest::Contains("matmul: both operands need at least 1 dim: () @ (3,)"),
                       ShapeError);
  CHECK_THROWS_WITH_AS(matmul(ones({2, 2}, i64), ones({2, 2}, i64)),
                       doctest::Contains("matmul: expected f32 or f64, got i64 (shapes (2, 2) @ (2, 2))"), DTypeError);
  CHECK_THROWS_WITH_AS(matmul(ones({2, 2}), ones({2, 2}, f64)), doctest::Contains("matmul: dtypes differ: f32 vs f64"),
                       DTypeError);
}

TEST_CASE("linear is x @ weightᵀ + bias for every input rank and layout, with or without a bias") {
  // x·Wᵀ + b by hand: x = [[1, 2], [3, 4]], W = [[1, 0], [1, 1], [0, 2]], b = [10, 20, 30].
  const Tensor x = tensor({1.0, 2.0, 3.0, 4.0}, {2, 2}), w = tensor({1.0, 0.0, 1.0, 1.0, 0.0, 2.0}, {3, 2});
  const Tensor b = tensor({10.0, 20.0, 30.0});
  CHECK(linear(x, w, b).to_vector<float>() == std::vector<float>{11, 23, 34, 13, 27, 38});
  CHECK(linear(x, w, Tensor()).to_vector<float>() == std::vector<float>{1, 3, 4, 3, 7, 8});
  CHECK(linear(tensor({1.0, 2.0}), w, b).shape() == Shape{3});
  // A transposed x, an f64 one and a batch of them take matmul then add, with its values.
  for (const Tensor& v : {x.mT(), x.to(f64), x.reshape({1, 2, 2}).expand({3, 2, 2})}) {
    const Tensor want = add(matmul(v, w.to(v.dtype()).mT()), b.to(v.dtype()));
    CHECK(linear(v, w.to(v.dtype()), b.to(v.dtype())).to_vector<double>() == want.to_vector<double>());
  }
}

TEST_CASE("linear errors name the input, weight and bias shapes") {
  CHECK_THROWS_WITH_AS(linear(ones({2, 3}), ones({4, 5}), Tensor()),
                       doctest::Contains("linear: input (2, 3) does not fit weight (4, 5)"), ShapeError);
  CHECK_THROWS_WITH_AS(linear(ones({2, 3}), ones({4, 3}), ones({3})),
                       doctest::Contains("linear: bias (3,) does not fit weight (4, 3)"), ShapeError);
  CHECK_THROWS_WITH_AS(linear(ones({2, 3}), ones({3}), Tensor()), doctest::Contains("does not fit weight (3,)"),
                       ShapeError);
}
