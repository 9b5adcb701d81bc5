// Factories: constant fills, arange, eye, tensors from values, index tensors and 0-d tensors, in every
// dtype they accept.
#include <doctest/doctest.h>

#include "core/error.h"
#include "core/ops.h"
#include "reference.h"

using namespace tg;
using tg::test::check_tensor;
using tg::test::values;

TEST_CASE("zeros, ones, full and the *_like factories are contiguous and filled in every dtype") {
  for (DType dt : {f32, f64, i64, boolean}) {
    CAPTURE(dt);
    Tensor z = zeros({2, 3}, dt), o = ones({2, 3}, dt);
    CHECK(z.dtype() == dt);
    CHECK(z.is_contiguous());
    CHECK(z.strides() == Strides{3, 1});
    CHECK(values(z) == std::vector<double>(6, 0.0));
    CHECK(values(o) == std::vector<double>(6, 1.0));
    CHECK(values(zeros_like(o)) == std::vector<double>(6, 0.0));
    CHECK(ones_like(z).dtype() == dt);
    CHECK(z.version() == 0);
  }
  check_tensor(full({2}, -2.5), {2}, {-2.5, -2.5});
  check_tensor(full({2}, -2.5, i64), {2}, {-2, -2});
  check_tensor(full({}, 3, f64), {}, {3});
  CHECK(zeros({4, 0}).numel() == 0);
  CHECK(empty({3, 2}, f64).shape() == Shape{3, 2});
}

TEST_CASE("arange: float and negative steps, i64, empty ranges") {
  check_tensor(arange(0, 5), {5}, {0, 1, 2, 3, 4});
  check_tensor(arange(2, 3, 0.25, f64), {4}, {2, 2.25, 2.5, 2.75});
  check_tensor(arange(5, 0, -1.5), {4}, {5, 3.5, 2, 0.5});
  check_tensor(arange(0, 1, 0.1, f64), {10}, {0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9}, 1e-15);
  check_tensor(arange(-3, 3, 2, i64), {3}, {-3, -1, 1});
  CHECK(arange(-3, 3, 2, i64).dtype() == i64);
  check_tensor(arange(3, 3), {0}, {});
  check_tensor(arange(3, 1), {0}, {});
  check_tensor(arange(0, 1, 7), {1}, {0});
}

TEST_CASE("eye is the identity in each dtype, and empty for n = 0") {
  check_tensor(eye(3), {3, 3}, {1, 0, 0, 0, 1, 0, 0, 0, 1});
  check_tensor(eye(2, f64), {2, 2}, {1, 0, 0, 1});
  CHECK(eye(2, i64).to_vector<int64_t>() == std::vector<int64_t>{1, 0, 0, 1});
  CHECK(eye(2, boolean).to_vector<bool>() == std::vector<bool>{true, false, false, true});
  CHECK(eye(0).shape() == Shape{0, 0});
}

TEST_CASE("tensor(values, shape) fills row-major and converts to the dtype") {
  Tensor t = tensor({1, 2, 3, 4, 5, 6}, {3, 2});
  CHECK(t.shape() == Shape{3, 2});
  CHECK(tg::test::at(t, {2, 0}) == 5);
  check_tensor(tensor({1.5, -2.5}, f64), {2}, {1.5, -2.5});
  CHECK(tensor({1.9, -1.9}, i64).to_vector<int64_t>() == std::vector<int64_t>{1, -1});
  CHECK(tensor({0, 2, -0.5}, boolean).to_vector<bool>() == std::vector<bool>{false, true, true});
  check_tensor(tensor({4}, Shape{}), {}, {4});  // plain {} would pick the dtype overload
  check_tensor(tensor({}, {2, 0}), {2, 0}, {});
  CHECK(tensor(std::vector<double>{}).shape() == Shape{0});
}

TEST_CASE("index_tensor holds every int64 exactly") {
  const int64_t big = (int64_t(1) << 53) + 1;  // not representable as a double
  Tensor t = index_tensor({big, -big, INT64_MAX, INT64_MIN}, {2, 2});
  CHECK(t.dtype() == i64);
  CHECK(t.shape() == Shape{2, 2});
  CHECK(t.to_vector<int64_t>() == std::vector<int64_t>{big, -big, INT64_MAX, INT64_MIN});
  CHECK(index_tensor({5}, {}).dim() == 0);
}

TEST_CASE("scalar_tensor is 0-d") {
  Tensor s = scalar_tensor(-4.5, f64);
  CHECK(s.dim() == 0);
  CHECK(s.dtype() == f64);
  CHECK(s.item() == -4.5);
  CHECK(scalar_tensor(3.7, i64).item() == 3);
  CHECK(scalar_tensor(2, boolean).item() == 1);
}

TEST_CASE("factory errors name the factory and the values") {
  CHECK_THROWS_WITH_AS(tensor({1, 2, 3}, {2, 2}), doctest::Contains("tensor: 3 values do not fill shape (2, 2)"),
                       ShapeError);
  CHECK_THROWS_WITH_AS(index_tensor({1, 2}, {3}), doctest::Contains("index_tensor: 2 values do not fill shape (3,)"),
                       ShapeError);
  CHECK_THROWS_WITH_AS(arange(0, 3, 0), doctest::Contains("arange: step must be nonzero"), ValueError);
  CHECK_THROWS_WITH_AS(arange(0, INFINITY), doctest::Contains("arange: start 0, end inf and step 1 must be finite"),
                       ValueError);
  CHECK_THROWS_WITH_AS(zeros({2, -3}), doctest::Contains("negative size -3"), ValueError);
  CHECK_THROWS_WITH_AS(empty({INT64_MAX, 4}), doctest::Contains("overflows int64"), ValueError);
  CHECK_THROWS_WITH_AS(empty({INT64_MAX / 4, 2}, f64), doctest::Contains("empty: shape (2305843009213693951, 2) is too large"),
                       ValueError);
}

// 2^47 bytes is all of x86-64's user address space, so the mapping fails whatever the memory; it was a bare
// std::bad_alloc, which the sentiment program printed as "error: std::bad_alloc" for d_model 1e12.
TEST_CASE("a tensor too large for memory is an Error naming the bytes and the shape, not std::bad_alloc") {
  CHECK_THROWS_WITH_AS(zeros({int64_t(1) << 45}),
                       "zeros: cannot allocate 140737488355328 bytes for shape (35184372088832,) of f32: out of memory",
                       Error);
}
