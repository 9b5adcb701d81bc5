// In-place writes: fill_, zero_, copy_, add_, mul_, addcmul_, addcdiv_ through views (only the view's
// elements change), with broadcasting and dtype conversion, and the storage version each one bumps.
#include <doctest/doctest.h>

#include "core/error.h"
#include "core/ops.h"
#include "reference.h"

using namespace tg;
using namespace tg::test;

TEST_CASE("fill_ and zero_ write only the view's elements and bump the shared version") {
  Tensor base = arange(0, 12, 1, f64).view({3, 4});
  CHECK(base.version() == 0);
  Tensor col = base.slice(1, 1, 4, 2);  // columns 1 and 3
  col.fill_(-1);
  CHECK(base.version() == 1);
  CHECK(col.version() == 1);  // one counter per storage, seen by every view
  check_tensor(base, {3, 4}, {0, -1, 2, -1, 4, -1, 6, -1, 8, -1, 10, -1});
  base.mT().select(0, 0).zero_();  // column 0 through the transpose
  CHECK(base.version() == 2);
  check_tensor(base, {3, 4}, {0, -1, 2, -1, 0, -1, 6, -1, 0, -1, 10, -1});
  Tensor k = zeros({2}, i64);
  k.fill_(3.9);
  check_tensor(k, {2}, {3, 3});
  Tensor empty_view = base.narrow(0, 1, 0);
  empty_view.fill_(5);
  CHECK(base.version() == 3);  // a write, even of nothing, counts
  check_tensor(base.select(0, 1), {4}, {0, -1, 6, -1});
}

TEST_CASE("copy_ broadcasts, converts dtypes and writes through strided views") {
  Tensor dst = zeros({2, 3}, f64);
  dst.copy_(tensor({1, 2, 3}, f32));
  check_tensor(dst, {2, 3}, {1, 2, 3, 1, 2, 3});
  CHECK(dst.version() == 1);
  dst.copy_(tensor({1, 2, 3, 4, 5, 6}, {3, 2}, f64).mT());  // transposed source
  check_tensor(dst, {2, 3}, {1, 3, 5, 2, 4, 6});
  Tensor t = zeros({3, 2});
  t.mT().copy_(tensor({1, 2, 3, 4, 5, 6}, {2, 3}));  // transposed destination
  check_tensor(t, {3, 2}, {1, 4, 2, 5, 3, 6});
  Tensor k = zeros({3}, i64);
  k.copy_(tensor({-1.5, 0.5, 2.5}));
  check_tensor(k, {3}, {-1, 0, 2}, 0, 0);
  Tensor m = zeros({3}, boolean);
  m.copy_(tensor({0, -0.25, 7}));
  check_tensor(m, {3}, {0, 1, 1});
  Tensor s = zeros({2, 2});
  s.copy_(scalar_tensor(4));
  check_tensor(s, {2, 2}, {4, 4, 4, 4});
}

TEST_CASE("add_ with alpha broadcasts into contiguous and strided destinations") {
  for (DType dt : {f32, f64}) {
    for (Layout l : layouts(sample(12), {3, 4}, dt)) {
      CAPTURE(dt);
      CAPTURE(l.name);
      std::vector<double> before = values(l.t);
      Tensor row = tensor({1, 2, 3, 4}, dt);
      uint64_t v0 = l.t.version();
      l.t.add_(row, -0.5);
      CHECK(l.t.version() == v0 + 1);
      std::vector<double> want;
      for (const Index& i : indices({3, 4})) want.push_back(before[flat({3, 4}, i)] - 0.5 * double(i[1] + 1));
      check_tensor(l.t, {3, 4}, want, 1e-6, 1e-6);
    }
  }
  Tensor k = tensor({1, 2, 3}, i64);
  k.add_(tensor({10}, i64), 2);
  check_tensor(k, {3}, {21, 22, 23}, 0, 0);
}

TEST_CASE("add_ with alpha 1 adds in the tensor's own type") {
  // f32: float + float rounded once, the bits of the sum in double rounded to float.
  Tensor x = tensor({1.0, 0x1p-30, -3.25}, f32), y = tensor({0x1p-24, 1.0, 1e-8}, f32);
  std::vector<float> want;
  for (int i = 0; i < 3; ++i) want.push_back(float(double(x.to_vector<float>()[i]) + double(y.to_vector<float>()[i])));
  x.add_(y);
  CHECK(x.to_vector<float>() == want);
  // i64: exact past 2^53, where a sum in double rounds (2^53 + 1 is not a double).
  Tensor k = index_tensor({(int64_t(1) << 53) + 1}, {1});
  k.add_(index_tensor({2}, {1}));
  CHECK(k.to_vector<int64_t>()[0] == (int64_t(1) << 53) + 3);
}

TEST_CASE("add_ on a big contiguous tensor (threaded path) matches the loop") {
  const int64_t n = 100000;
  std::vector<double> a = sample(n, 1.0, 1), b = sample(n, 1.0, 2);
  Tensor x = tensor(a, f64);
  x.add_(tensor(b, f64), 3.0);
  std::vector<double> want(n);
  for (int64_t i = 0; i < n; ++i) want[i] = a[i] + 3.0 * b[i];
  check_close(x, want, 0, 0);
}

TEST_CASE("mul_ by a tensor and by a double") {
  Tensor x = tensor({1, 2, 3, 4, 5, 6}, {2, 3}, f64);
  x.mul_(tensor({2, -1}, {2, 1}, f64));
  check_tensor(x, {2, 3}, {2, 4, 6, -4, -5, -6});
  x.mT().mul_(0.5);
  check_tensor(x, {2, 3}, {1, 2, 3, -2, -2.5, -3});
  CHECK(x.version() == 2);
  Tensor k = tensor({3, -4}, i64);
  k.mul_(-2.0);
  check_tensor(k, {2}, {-6, 8}, 0, 0);
}

TEST_CASE("addcmul_ and addcdiv_ do the optimizer updates elementwise") {
  // Adam's moments: m += (1 - b1)·g·1 and v += (1 - b2)·g·g; the step: p += -lr·m / (sqrt(v) + eps).
  for (DType dt : {f32, f64}) {
    CAPTURE(dt);
    std::vector<double> p0 = sample(6, 1.0, 1), g = sample(6, 1.0, 2), m0 = sample(6, 0.1, 3);
    Tensor p = tensor(p0, {2, 3}, dt), gt_ = tensor(g, {2, 3}, dt), m = tensor(m0, {2, 3}, dt);
    Tensor v = zeros({2, 3}, dt);
    v.addcmul_(gt_, gt_, 0.001);
    m.addcmul_(gt_, ones({3}, dt), 0.1);  // broadcasts the second factor
    Tensor denom = sqrt(v) + 1e-8;
    p.addcdiv_(m, denom, -0.01);
    CHECK(p.version() == 1);
    std::vector<double> want_v, want_m, want_p;
    for (int i = 0; i < 6; ++i) {
      want_v.push_back(0.001 * g[i] * g[i]);
      want_m.push_back(m0[i] + 0.1 * g[i]);
      want_p.push_back(p0[i] - 0.01 * want_m.back() / (std::sqrt(want_v.back()) + 1e-8));
    }
    const double tol = dt == f32 ? 1e-5 : 1e-12;
    check_tensor(v, {2, 3}, want_v, tol, tol);
    check_tensor(m, {2, 3}, want_m, tol, tol);
    check_tensor(p, {2, 3}, want_p, tol, tol);
  }
  Tensor q = zeros({2, 2}, f64);
  q.mT().addcmul_(tensor({1, 2, 3, 4}, {2, 2}, f64), tensor({10, 100}, {2}, f64), 1);  // into a transposed view
  check_tensor(q, {2, 2}, {10, 30, 200, 400});  // q[j][i] = a[i][j]·b[j]
}

TEST_CASE("every in-place op bumps the version once; copies start at 0") {
  Tensor x = ones({4});
  const Tensor o = ones({4});
  x.fill_(2);
  x.zero_();
  x.copy_(o);
  x.add_(o);
  x.mul_(o);
  x.mul_(2.0);
  x.addcmul_(o, o);
  x.addcdiv_(o, o);
  CHECK(x.version() == 8);
  CHECK(o.version() == 0);  // operands are not written
  check_tensor(x, {4}, {6, 6, 6, 6});
  CHECK(x.clone().version() == 0);
  CHECK(x.to(f64).version() == 0);
  CHECK((x + o).version() == 0);
  CHECK(full({2}, 3).version() == 0);
  CHECK(x.view({2, 2}).version() == 8);
}

TEST_CASE("in-place errors name the op and shapes, and do not bump the version") {
  Tensor x = ones({3});
  CHECK_THROWS_WITH_AS(x.addcmul_(ones({3}, f64), ones({3})),
                       doctest::Contains("addcmul_: dtypes differ: f32, f64 and f32"), DTypeError);
  CHECK_THROWS_WITH_AS(x.add_(ones({2, 3})), doctest::Contains("add_: operand of shape (2, 3) does not broadcast to (3,)"),
                       ShapeError);
  CHECK_THROWS_WITH_AS(x.mul_(ones({4})), doctest::Contains("mul_: shapes cannot be broadcast: (3,) vs (4,)"), ShapeError);
  CHECK_THROWS_WITH_AS(x.addcmul_(ones({3}), ones({2})), doctest::Contains("addcmul_: shapes cannot be broadcast: (3,) vs (2,)"),
                       ShapeError);
  CHECK_THROWS_WITH_AS(x.copy_(ones({2, 3})), doctest::Contains("copy_: source of shape (2, 3) does not broadcast to (3,)"),
                       ShapeError);
  Tensor k = ones({3}, i64);
  CHECK_THROWS_WITH_AS(k.addcdiv_(k, k), doctest::Contains("addcdiv_: expected a floating dtype, got i64"), DTypeError);
  Tensor m = ones({3}, boolean);
  CHECK_THROWS_WITH_AS(m.mul_(m), doctest::Contains("mul_: not defined for bool tensors"), DTypeError);
  CHECK(x.version() == 0);
  CHECK(k.version() == 0);
  CHECK(m.version() == 0);
  check_tensor(x, {3}, {1, 1, 1});
}

// PyTorch 1.13's values (torch.tensor([1., 3.]).add_(torch.tensor([2**-24 + 2**-50, 0.1], dtype=torch.float64))
// and the rest): the op runs in result_type, then rounds once into the destination's dtype.
TEST_CASE("add_ and mul_ promote as PyTorch: computed in the result's dtype, stored in the destination's") {
  const double tiny = 0x1p-24 + 0x1p-50;  // 1 + tiny rounds up to 1 + 2^-23 in f32; f32(tiny) added in f32 gives 1
  Tensor x = tensor({1, 3}, {2}, f32);
  x.add_(tensor({tiny, 0.1}, {2}, f64));
  CHECK(x.dtype() == f32);
  CHECK(x.to_vector<float>() == std::vector<float>{1.0000001192092896f, 3.0999999046325684f});
  CHECK(x.version() == 1);
  Tensor y = tensor({1, 3}, {2}, f32);
  y.mul_(tensor({1 + tiny, 0.1}, {2}, f64));
  CHECK(y.to_vector<float>() == std::vector<float>{1.0000001192092896f, 0.30000001192092896f});
  Tensor w = tensor({1, 2}, {2}, f64);  // f64 += f32: the f32 operand widened exactly
  w.add_(tensor({0.1f, 2}, {2}, f32), 0.5);
  CHECK(w.to_vector<double>() == std::vector<double>{1 + 0.5 * double(0.1f), 3});
  Tensor f = tensor({1, 2}, {2}, f32);  // f32 with i64, alpha 0.5: f32
  f.add_(tensor({1, 2}, {2}, i64), 0.5).mul_(tensor({3}, {1}, i64));
  CHECK(f.to_vector<float>() == std::vector<float>{4.5f, 9});
  Tensor n = tensor({1, 2}, {2}, i64);  // i64 with bool: i64; an integer double scalar is a Python int
  n.add_(tensor({0, 1}, {2}, boolean)).mul_(3.0).add_(tensor({1, 1}, {2}, i64), -2.0);
  CHECK(n.to_vector<int64_t>() == std::vector<int64_t>{1, 7});
  CHECK(n.version() == 3);
}

TEST_CASE("add_ and mul_ refuse what PyTorch refuses: a result that cannot be stored in the destination's dtype") {
  Tensor n = tensor({1, 2}, {2}, i64);
  CHECK_THROWS_WITH_AS(n.add_(ones({2})),
                       doctest::Contains("add_: the result's dtype f32 (of i64 with f32) cannot be stored in place "
                                         "into the i64 tensor"), DTypeError);
  CHECK_THROWS_AS(n.add_(scalar_tensor(1.5, f64)), DTypeError);  // a 0-dim float operand still makes a float result
  CHECK_THROWS_WITH_AS(n.mul_(0.5), doctest::Contains("mul_: the result's dtype f32"), DTypeError);
  CHECK_THROWS_WITH_AS(n.add_(n.clone(), 0.5), doctest::Contains("add_: alpha 0.5 is not an integer, but the "
                                                                 "result's dtype is i64"), DTypeError);
  Tensor m = tensor({1, 0}, {2}, boolean);
  CHECK_THROWS_WITH_AS(m.add_(n), doctest::Contains("add_: the result's dtype i64 (of bool with i64) cannot be stored"),
                       DTypeError);
  CHECK_THROWS_AS(m.mul_(2.0), DTypeError);  // bool * 2 is i64
  CHECK(n.version() == 0);
  CHECK(m.version() == 0);
  CHECK(n.to_vector<int64_t>() == std::vector<int64_t>{1, 2});
}

// An expanded tensor has three elements at one address: add_ used to add 1 three times to it and return
// [3, 3, 3] (PyTorch refuses); copy_ let the last write win.
TEST_CASE("in-place writes into an expanded (stride-0) tensor are refused, naming the op, shape and strides") {
  Tensor base = zeros({1});
  Tensor e = base.expand({3});
  CHECK_THROWS_WITH_AS(e.add_(ones({3})),
                       doctest::Contains("add_: cannot write in place into a tensor whose elements share memory "
                                         "(shape (3,), strides [0])"),
                       ValueError);
  CHECK_THROWS_WITH_AS(e.mul_(2.0), doctest::Contains("mul_: cannot write in place"), ValueError);
  CHECK_THROWS_WITH_AS(e.addcmul_(ones({3}), ones({3})), doctest::Contains("addcmul_: cannot write in place"), ValueError);
  CHECK_THROWS_WITH_AS(e.addcdiv_(ones({3}), ones({3})), doctest::Contains("addcdiv_: cannot write in place"), ValueError);
  CHECK_THROWS_WITH_AS(e.copy_(arange(0, 3)), doctest::Contains("copy_: cannot write in place"), ValueError);
  CHECK(base.version() == 0);
  check_tensor(base, {1}, {0});
  Tensor one_row = zeros({1, 3}).expand({1, 3});  // size-1 dims may have any stride: still writable
  one_row.add_(ones({3}));
  check_tensor(one_row, {1, 3}, {1, 1, 1});
  Tensor c = e.contiguous();
  c.add_(ones({3}));
  check_tensor(c, {3}, {1, 1, 1});
}

// x.add_(x.transpose(0, 1)) read elements the loop had already overwritten: for x = arange(9).reshape(3, 3)
// it returned [[0, 4, 8], [7, 8, 12], [14, 19, 16]], where x + xᵀ is [[0, 4, 8], [4, 8, 12], [8, 12, 16]].
// PyTorch refuses such a partial overlap.
TEST_CASE("in-place ops refuse an operand that shares elements with the destination, except the same view") {
  Tensor x = arange(0, 9).reshape({3, 3});
  CHECK_THROWS_WITH_AS(x.add_(x.transpose(0, 1)),
                       doctest::Contains("add_: the operand (shape (3, 3), strides [1, 3], offset 0) shares "
                                         "memory with the tensor written to (shape (3, 3), strides [3, 1], offset 0)"),
                       ValueError);
  CHECK_THROWS_WITH_AS(x.mul_(x.select(0, 0)), doctest::Contains("mul_: the operand (shape (3,)"), ValueError);
  CHECK_THROWS_WITH_AS(x.narrow(0, 1, 2).copy_(x.narrow(0, 0, 2)), doctest::Contains("copy_: the operand"), ValueError);
  CHECK_THROWS_WITH_AS(x.addcmul_(ones({3, 3}), x.select(1, 2)), doctest::Contains("addcmul_: the operand"), ValueError);
  CHECK_THROWS_WITH_AS(x.select(0, 0).addcdiv_(ones({3}), x.select(0, 0).select(0, 1)),
                       doctest::Contains("addcdiv_: the operand (shape (), strides [], offset 1)"), ValueError);
  CHECK(x.version() == 0);
  // The same view reads each element before writing it: allowed, as in PyTorch.
  x.add_(x);
  check_tensor(x, {3, 3}, {0, 2, 4, 6, 8, 10, 12, 14, 16});
  x.copy_(x);
  // Views of one storage that share no element are independent: row 0 from row 2; and the transpose of a clone.
  x.select(0, 0).add_(x.select(0, 2));
  check_tensor(x, {3, 3}, {12, 16, 20, 6, 8, 10, 12, 14, 16});
  x.add_(x.transpose(0, 1).clone());
  check_tensor(x, {3, 3}, {24, 22, 32, 22, 16, 24, 32, 24, 32});
  // Two columns interleave in memory but share no element.
  x.select(1, 0).add_(x.select(1, 1));
  check_tensor(x, {3, 3}, {46, 22, 32, 38, 16, 24, 56, 24, 32});
}
