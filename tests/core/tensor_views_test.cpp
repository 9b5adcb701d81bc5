// Views: every view op checked element by element against the base tensor through strides, storage
// sharing (a write through one view is read through another), and when reshape / contiguous copy.
#include <doctest/doctest.h>

#include "core/error.h"
#include "core/ops.h"
#include "reference.h"

using namespace tg;
using tg::test::at;
using tg::test::check_tensor;
using tg::test::values;

namespace {

// arange(n) as f32 laid out as `shape` (row-major values 0, 1, 2, ...).
Tensor iota(const Shape& shape) { return arange(0, double(shape.numel())).view(shape); }

}  // namespace

TEST_CASE("reshape with -1 of a contiguous tensor is a view in row-major order") {
  Tensor x = iota({2, 3, 4});
  Tensor y = x.reshape({4, -1});
  CHECK(y.shape() == Shape{4, 6});
  CHECK(y.storage() == x.storage());
  CHECK(y.strides() == Strides{6, 1});
  CHECK(at(y, {2, 5}) == 17);
  CHECK(x.reshape({-1}).shape() == Shape{24});
  CHECK(x.reshape({2, -1, 2}).shape() == Shape{2, 6, 2});
  CHECK(iota({1}).reshape({}).dim() == 0);
  CHECK(scalar_tensor(3).reshape({1, 1}).shape() == Shape{1, 1});
}

TEST_CASE("reshape of a transposed tensor copies and keeps the logical order") {
  Tensor x = iota({3, 4});
  Tensor t = x.mT();  // (4, 3): t[i][j] = 4j + i
  Tensor y = t.reshape({12});
  CHECK(y.storage() != x.storage());
  CHECK(values(y) == std::vector<double>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11});
}

TEST_CASE("reshape of a zero-size tensor") {
  Tensor x = zeros({0, 3});
  CHECK(x.reshape({3, 0, 5}).shape() == Shape{3, 0, 5});
  CHECK(x.reshape({-1}).shape() == Shape{0});
}

TEST_CASE("view splits and merges compatible dims without copying, and refuses the rest") {
  Tensor x = iota({4, 6});
  SUBCASE("every other column: dims split, but the strided dim cannot merge") {
    Tensor s = x.slice(1, 0, 4, 2);  // columns 0 and 2: (4, 2), strides (6, 2)
    Tensor v = s.view({2, 2, 2});
    CHECK(v.storage() == x.storage());
    CHECK(v.strides() == Strides{12, 6, 2});
    CHECK(values(v) == values(s));
    CHECK_THROWS_WITH_AS(s.view({8}), doctest::Contains("view: cannot view a tensor of shape (4, 2) with strides (6, 2) as (8,)"),
                         ShapeError);
    CHECK(values(s.reshape({8})) == values(s));
    // columns 0, 2, 4 are every even element, so that one does flatten
    CHECK(x.slice(1, 0, 6, 2).view({12}).strides() == Strides{2});
  }
  SUBCASE("a transposed matrix cannot be flattened by view") {
    CHECK_THROWS_WITH_AS(x.mT().view({-1}), doctest::Contains("strides (1, 6)"), ShapeError);
    CHECK(x.mT().view({6, 2, 2}).strides() == Strides{1, 12, 6});
  }
  SUBCASE("expanded dims keep stride 0") {
    Tensor e = iota({3, 1}).expand({3, 4});
    Tensor v = e.view({3, 2, 2});
    CHECK(v.strides() == Strides{1, 0, 0});
    CHECK(at(v, {2, 1, 1}) == 2);
  }
}

TEST_CASE("flatten merges a range of dims") {
  Tensor x = iota({2, 3, 4});
  CHECK(x.flatten().shape() == Shape{24});
  CHECK(x.flatten(1).shape() == Shape{2, 12});
  CHECK(x.flatten(0, 1).shape() == Shape{6, 4});
  CHECK(x.flatten(-2, -1).storage() == x.storage());
  CHECK(scalar_tensor(5).flatten().shape() == Shape{1});
  Tensor t = x.transpose(0, 2).flatten(1);  // (4, 6), a copy
  CHECK(t.shape() == Shape{4, 6});
  CHECK(at(t, {3, 5}) == at(x, {1, 2, 3}));  // t[k][j*2 + i] = x[i][j][k]
}

TEST_CASE("transpose, permute and mT only move strides") {
  Tensor x = iota({2, 3, 4});
  Tensor t = x.transpose(0, 2);
  CHECK(t.shape() == Shape{4, 3, 2});
  CHECK(t.strides() == Strides{1, 4, 12});
  CHECK_FALSE(t.is_contiguous());
  Tensor p = x.permute({1, -1, 0});
  CHECK(p.shape() == Shape{3, 4, 2});
  Tensor m = x.mT();
  CHECK(m.shape() == Shape{2, 4, 3});
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j)
      for (int64_t k = 0; k < 4; ++k) {
        CAPTURE(i);
        CAPTURE(j);
        CAPTURE(k);
        CHECK(at(t, {k, j, i}) == at(x, {i, j, k}));
        CHECK(at(p, {j, k, i}) == at(x, {i, j, k}));
        CHECK(at(m, {i, k, j}) == at(x, {i, j, k}));
      }
  CHECK(x.transpose(1, 1).strides() == x.strides());
  CHECK(x.transpose(-1, 0).shape() == Shape{4, 3, 2});
}

TEST_CASE("slice with a step, negative indices and Python clamping") {
  Tensor x = arange(0, 10);
  check_tensor(x.slice(0, 1, 8, 3), {3}, {1, 4, 7});
  check_tensor(x.slice(0, -7, -1, 2), {3}, {3, 5, 7});
  check_tensor(x.slice(0, -100, 100, 4), {3}, {0, 4, 8});
  check_tensor(x.slice(0, 8, 3), {0}, {});
  check_tensor(x.slice(0, 9, 10, 5), {1}, {9});
  Tensor s = x.slice(0, 2, 9, 3);
  CHECK(s.offset() == 2);
  CHECK(s.strides() == Strides{3});

  Tensor m = iota({3, 5});
  Tensor c = m.slice(-1, 1, 5, 2);  // columns 1 and 3
  check_tensor(c, {3, 2}, {1, 3, 6, 8, 11, 13});
  Tensor cc = c.slice(0, 1, 3, 1).slice(1, -1, 2);  // a slice of a slice
  check_tensor(cc, {2, 1}, {8, 13});
}

TEST_CASE("narrow and select") {
  Tensor x = iota({3, 4});
  check_tensor(x.narrow(1, 1, 2), {3, 2}, {1, 2, 5, 6, 9, 10});
  check_tensor(x.narrow(0, 3, 0), {0, 4}, {});
  check_tensor(x.narrow(1, -2, 2), {3, 2}, {2, 3, 6, 7, 10, 11});  // a negative start counts from the end
  check_tensor(x.narrow(0, -3, 1), {1, 4}, {0, 1, 2, 3});
  check_tensor(x.select(0, 1), {4}, {4, 5, 6, 7});
  check_tensor(x.select(1, -1), {3}, {3, 7, 11});
  check_tensor(x.select(0, -3).select(0, 2), {}, {2});
  CHECK(x.select(1, 2).storage() == x.storage());
}

TEST_CASE("unsqueeze and squeeze") {
  Tensor x = iota({2, 3});
  CHECK(x.unsqueeze(0).shape() == Shape{1, 2, 3});
  CHECK(x.unsqueeze(1).shape() == Shape{2, 1, 3});
  CHECK(x.unsqueeze(2).shape() == Shape{2, 3, 1});
  CHECK(x.unsqueeze(-1).shape() == Shape{2, 3, 1});
  CHECK(x.unsqueeze(-3).shape() == Shape{1, 2, 3});
  CHECK(scalar_tensor(4).unsqueeze(0).shape() == Shape{1});
  // an unsqueezed view stays contiguous and can be viewed further
  CHECK(x.unsqueeze(1).is_contiguous());
  CHECK(x.mT().unsqueeze(0).strides() == Strides{3, 1, 3});  // PyTorch's size*stride rule

  Tensor y = iota({1, 3, 1});
  CHECK(y.squeeze(0).shape() == Shape{3, 1});
  CHECK(y.squeeze(-1).shape() == Shape{1, 3});
  CHECK(y.squeeze(1).shape() == Shape{1, 3, 1});  // size 3: unchanged
  CHECK(y.squeeze().shape() == Shape{3});
  CHECK(iota({1, 1}).squeeze().dim() == 0);
  CHECK(values(y.squeeze()) == std::vector<double>{0, 1, 2});
}

TEST_CASE("expand broadcasts size-1 dims with stride 0 and adds leading dims") {
  Tensor x = iota({3, 1});
  Tensor e = x.expand({2, 3, 4});
  CHECK(e.shape() == Shape{2, 3, 4});
  CHECK(e.strides() == Strides{0, 1, 0});
  CHECK(values(e) == std::vector<double>{0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2});
  CHECK(x.expand({-1, 5}).shape() == Shape{3, 5});
  CHECK(x.expand({3, 0}).shape() == Shape{3, 0});
  CHECK(scalar_tensor(7).expand({2, 2}).strides() == Strides{0, 0});
  CHECK_FALSE(e.is_contiguous());
  Tensor c = e.contiguous();
  CHECK(c.is_contiguous());
  CHECK(values(c) == values(e));
}

TEST_CASE("views share storage: a write through one is read through the others") {
  Tensor base = zeros({3, 4});
  base.select(1, 2).fill_(5);  // column 2
  CHECK(values(base.select(1, 2)) == std::vector<double>{5, 5, 5});
  CHECK(at(base, {1, 2}) == 5);
  base.mT().narrow(0, 0, 1).fill_(-1);  // column 0 via the transpose
  CHECK(values(base.select(0, 2)) == std::vector<double>{-1, 0, 5, 0});
  base.view({12}).slice(0, 1, 12, 4).fill_(9);  // flat positions 1, 5, 9
  CHECK(values(base.select(1, 1)) == std::vector<double>{9, 9, 9});
  Tensor u = base.unsqueeze(0).expand({2, 3, 4});
  base.select(0, 0).select(0, 3).fill_(42);
  CHECK(at(u, {1, 0, 3}) == 42);
  CHECK(at(u, {0, 0, 3}) == 42);
}

TEST_CASE("contiguous() returns the same tensor when already contiguous, else a packed copy") {
  Tensor x = iota({2, 3});
  Tensor same = x.contiguous();
  CHECK(same.storage() == x.storage());
  CHECK(same.offset() == x.offset());
  Tensor row = x.select(0, 1);  // contiguous with an offset
  CHECK(row.is_contiguous());
  CHECK(row.contiguous().storage() == x.storage());
  Tensor col = x.select(1, 1);
  CHECK_FALSE(col.is_contiguous());
  Tensor cc = col.contiguous();
  CHECK(cc.storage() != x.storage());
  CHECK(cc.strides() == Strides{1});
  CHECK(values(cc) == std::vector<double>{1, 4});
  // size-1 dims with any stride do not break contiguity
  Tensor odd(x.storage(), {2, 1, 3}, {3, 100, 1}, 0, f32);
  CHECK(odd.is_contiguous());
  CHECK(odd.contiguous().storage() == x.storage());
}

TEST_CASE("clone shares nothing and packs a strided input") {
  Tensor x = iota({3, 4});
  Tensor c = x.mT().clone();
  CHECK(c.storage() != x.storage());
  CHECK(c.is_contiguous());
  CHECK(values(c) == values(x.mT()));
  c.fill_(0);
  CHECK(at(x, {2, 3}) == 11);
  CHECK(c.version() == 1);
  CHECK(x.clone().version() == 0);
}

// tensor({NAN, INFINITY, 1e30}).to(i64) gave -9223372036854775808 for each: undefined behaviour in C++.
TEST_CASE("to(i64) and copy_ into i64 refuse NaN, inf and out-of-range floats, writing nothing") {
  CHECK_THROWS_WITH_AS(tensor({1, NAN}).to(i64), "copy_: value nan does not fit dtype i64", ValueError);
  CHECK_THROWS_WITH_AS(tensor({-INFINITY}, {1}, f64).to(i64), "copy_: value -inf does not fit dtype i64", ValueError);
  CHECK_THROWS_WITH_AS(tensor({1e30}).to(i64), doctest::Contains("does not fit dtype i64"), ValueError);
  Tensor dst = index_tensor({7, 8}, {2});
  CHECK_THROWS_AS(dst.copy_(tensor({3, NAN}, {2}, f64).expand({2})), ValueError);
  CHECK(dst.to_vector<int64_t>() == std::vector<int64_t>{7, 8});  // nothing written
  CHECK(tensor({-9.2e18, 9.2e18}, {2}, f64).to(i64).to_vector<int64_t>() ==
        std::vector<int64_t>{-9200000000000000000, 9200000000000000000});  // in range: converted
}

TEST_CASE("to(dtype) converts, and returns the same tensor for the same dtype") {
  Tensor x = tensor({-1.75, -0.5, 0, 0.25, 2.5, 3e9});
  CHECK(x.to(f32).storage() == x.storage());
  Tensor d = x.to(f64);
  CHECK(d.dtype() == f64);
  CHECK(d.to_vector<double>() == std::vector<double>{-1.75, -0.5, 0, 0.25, 2.5, 3e9});
  CHECK(x.to(i64).to_vector<int64_t>() == std::vector<int64_t>{-1, 0, 0, 0, 2, 3000000000});  // toward zero
  CHECK(x.to(boolean).to_vector<bool>() == std::vector<bool>{true, true, false, true, true, true});
  // a strided source converts in logical order
  Tensor m = tensor({1, 2, 3, 4, 5, 6}, {2, 3}, f64).mT().to(f32);
  CHECK(m.shape() == Shape{3, 2});
  CHECK(m.to_vector<float>() == std::vector<float>{1, 4, 2, 5, 3, 6});
}

TEST_CASE("item and to_vector read through strides") {
  CHECK(scalar_tensor(2.5).item() == 2.5);
  CHECK(tensor({7}, {1, 1}, i64).item() == 7);
  Tensor x = iota({2, 3}).mT();
  CHECK(x.to_vector<double>() == std::vector<double>{0, 3, 1, 4, 2, 5});
  CHECK(x.to_vector<int64_t>() == std::vector<int64_t>{0, 3, 1, 4, 2, 5});
  CHECK(Tensor().to_vector<float>().empty());
  CHECK_FALSE(Tensor().defined());
}

TEST_CASE("size, dim and numel, including zero-size and 0-d tensors") {
  Tensor x = zeros({2, 0, 3});
  CHECK(x.dim() == 3);
  CHECK(x.numel() == 0);
  CHECK(x.size(-1) == 3);
  CHECK(x.size(1) == 0);
  Tensor s = scalar_tensor(1);
  CHECK(s.dim() == 0);
  CHECK(s.numel() == 1);
  CHECK(s.shape().empty());
}
