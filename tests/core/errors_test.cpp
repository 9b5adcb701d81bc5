// Error paths of views, accessors and shape helpers: each pins the exception type and a message that
// names the op and the shapes or values involved ("<op>: <what>: <lhs> vs <rhs>"). Kernel errors sit
// with their kernels' tests.
#include <doctest/doctest.h>

#include <functional>

#include "core/error.h"
#include "core/ops.h"
#include "reference.h"

using namespace tg;

TEST_CASE("every error is a tg::Error and a std::runtime_error") {
  CHECK_THROWS_AS(ones({2}).view({3}), ShapeError);
  CHECK_THROWS_AS(ones({2}).view({3}), Error);
  CHECK_THROWS_AS(ones({2}).data<double>(), Error);
  CHECK_THROWS_AS(ones({2}).select(0, 5), std::runtime_error);
  CHECK_THROWS_AS(ones({2}).item(), Error);
  CHECK_THROWS_WITH_AS(check<ValueError>(false, "op: bad {} vs {}", Shape{2, 3}, 4), "op: bad (2, 3) vs 4", ValueError);
  CHECK_NOTHROW(check<ValueError>(true, "unused {}", 1));
}

TEST_CASE("reshape and view name the requested and the input shape") {
  Tensor x = ones({2, 3});
  CHECK_THROWS_WITH_AS(x.reshape({4, 4}), doctest::Contains("reshape: shape (4, 4) is invalid for input of shape (2, 3) (6 elements)"),
                       ShapeError);
  CHECK_THROWS_WITH_AS(x.view({-1, 4}), doctest::Contains("view: shape (-1, 4) is invalid for input of shape (2, 3)"), ShapeError);
  CHECK_THROWS_WITH_AS(x.reshape({-1, -1}), doctest::Contains("reshape: only one dimension can be -1, got (-1, -1)"), ShapeError);
  CHECK_THROWS_WITH_AS(x.reshape({-2, -3}), doctest::Contains("reshape: invalid size -2 in shape (-2, -3)"), ShapeError);
  CHECK_THROWS_WITH_AS(zeros({0, 3}).reshape({-1, 0}), doctest::Contains("reshape: shape (-1, 0) is invalid for input of shape (0, 3)"),
                       ShapeError);
  CHECK_THROWS_WITH_AS(x.mT().view({6}), doctest::Contains("view: cannot view a tensor of shape (3, 2) with strides (1, 3) as (6,): use reshape"),
                       ShapeError);
  CHECK_THROWS_WITH_AS(x.flatten(1, 0), doctest::Contains("flatten: start dim 1 is after end dim 0"), IndexError);
  CHECK_THROWS_WITH_AS(x.flatten(0, 2), doctest::Contains("flatten: dim 2 out of range for a 2-d tensor (expected [-2, 1])"),
                       IndexError);
}

TEST_CASE("permute, transpose and mT name the dims") {
  Tensor x = ones({2, 3, 4});
  CHECK_THROWS_WITH_AS(x.permute({0, 1}), doctest::Contains("permute: got 2 dims for a tensor of shape (2, 3, 4)"), ShapeError);
  CHECK_THROWS_WITH_AS(x.permute({1, -2, 0}), doctest::Contains("permute: dim 1 repeated in (1, -2, 0)"), IndexError);
  CHECK_THROWS_WITH_AS(x.permute({0, 1, 3}), doctest::Contains("permute: dim 3 out of range for a 3-d tensor (expected [-3, 2])"),
                       IndexError);
  CHECK_THROWS_WITH_AS(x.transpose(0, -4), doctest::Contains("transpose: dim -4 out of range for a 3-d tensor"), IndexError);
  CHECK_THROWS_WITH_AS(ones({3}).mT(), doctest::Contains("mT: expected at least 2 dims, got shape (3,)"), ShapeError);
  CHECK_THROWS_WITH_AS(scalar_tensor(1).transpose(5, 7), doctest::Contains("transpose: dim 5 out of range for a 0-d tensor (expected [-1, 0])"),
                       IndexError);
  CHECK(scalar_tensor(1).transpose(0, -1).dim() == 0);  // PyTorch allows dims 0 and -1 on a scalar
}

TEST_CASE("slice, narrow and select name the dim, the range and the size") {
  Tensor x = ones({4, 3});
  CHECK_THROWS_WITH_AS(x.slice(0, 0, 4, 0), doctest::Contains("slice: step must be positive, got 0"), ValueError);
  CHECK_THROWS_WITH_AS(x.slice(0, 4, 0, -1), doctest::Contains("slice: step must be positive, got -1"), ValueError);
  CHECK_THROWS_WITH_AS(x.slice(2, 0, 1), doctest::Contains("slice: dim 2 out of range for a 2-d tensor"), IndexError);
  CHECK_THROWS_WITH_AS(x.narrow(0, 2, 3), doctest::Contains("narrow: range [2, 5) out of bounds for dim 0 of shape (4, 3)"),
                       IndexError);
  CHECK_THROWS_WITH_AS(x.narrow(1, -4, 1), doctest::Contains("narrow: range [-4, -3) out of bounds for dim 1 of shape (4, 3)"),
                       IndexError);
  CHECK_THROWS_WITH_AS(x.narrow(1, -1, 2), doctest::Contains("narrow: range [2, 4) out of bounds for dim 1 of shape (4, 3)"),
                       IndexError);
  CHECK_THROWS_WITH_AS(x.select(1, 3), doctest::Contains("select: index 3 out of range for dim 1 of size 3"), IndexError);
  CHECK_THROWS_WITH_AS(x.select(0, -5), doctest::Contains("select: index -5 out of range for dim 0 of size 4"), IndexError);
  CHECK_THROWS_WITH_AS(zeros({0}).select(0, 0), doctest::Contains("select: index 0 out of range for dim 0 of size 0"), IndexError);
}

TEST_CASE("a 0-d tensor has no size to read, select, slice or narrow") {
  Tensor s = scalar_tensor(1);
  CHECK_THROWS_WITH_AS(s.size(0), doctest::Contains("size: dim 0 of a 0-d tensor: it has no dims"), IndexError);
  CHECK_THROWS_WITH_AS(s.select(0, 0), doctest::Contains("select: dim 0 of a 0-d tensor"), IndexError);
  CHECK_THROWS_WITH_AS(s.slice(-1, 0, 1), doctest::Contains("slice: dim -1 of a 0-d tensor"), IndexError);
  CHECK_THROWS_WITH_AS(s.narrow(0, 0, 1), doctest::Contains("narrow: dim 0 of a 0-d tensor"), IndexError);
  CHECK_THROWS_WITH_AS(ones({2}).size(1), doctest::Contains("size: dim 1 out of range for a 1-d tensor (expected [-1, 0])"),
                       IndexError);
  CHECK_THROWS_WITH_AS(s.unsqueeze(2), doctest::Contains("unsqueeze: dim 2 out of range for a 1-d tensor"), IndexError);
  CHECK(s.squeeze(0).dim() == 0);
}

TEST_CASE("expand names both shapes") {
  Tensor x = ones({2, 1});
  CHECK_THROWS_WITH_AS(x.expand({3}), doctest::Contains("expand: cannot expand shape (2, 1) to (3,): fewer dims"), ShapeError);
  CHECK_THROWS_WITH_AS(x.expand({3, 4}), doctest::Contains("expand: shape (2, 1) cannot be expanded to (3, 4)"), ShapeError);
  CHECK_THROWS_WITH_AS(x.expand({-1, 2, 4}), doctest::Contains("expand: size -1 not allowed for new leading dim in (-1, 2, 4)"),
                       ShapeError);
  CHECK_THROWS_WITH_AS(x.expand({2, -2}), doctest::Contains("expand: shape (2, 1) cannot be expanded to (2, -2)"), ShapeError);
}

TEST_CASE("accessors name the dtype or the shape they needed") {
  Tensor x = ones({2});
  CHECK_THROWS_WITH_AS(x.data<double>(), doctest::Contains("data: tensor has dtype f32, accessed as f64"), DTypeError);
  CHECK_THROWS_WITH_AS(ones({2}, boolean).data<int64_t>(), doctest::Contains("data: tensor has dtype bool, accessed as i64"),
                       DTypeError);
  CHECK_THROWS_WITH_AS(Tensor().data<float>(), doctest::Contains("data: the tensor is undefined"), DTypeError);
  CHECK_THROWS_WITH_AS(x.item(), doctest::Contains("item: expected a tensor with one element, got shape (2,)"), ValueError);
  CHECK_THROWS_WITH_AS(zeros({0}).item(), doctest::Contains("got shape (0,)"), ValueError);
  CHECK(x.data<float>() == static_cast<float*>(x.storage()->data));
  CHECK(x.slice(0, 1, 2).data<float>() == static_cast<float*>(x.storage()->data) + 1);  // data() includes the offset
}

TEST_CASE("shape helpers: numel, contiguous strides, broadcasting and dim wrapping") {
  CHECK(Shape{}.numel() == 1);
  CHECK(Shape{2, 0, 5}.numel() == 0);
  CHECK_THROWS_WITH_AS(Shape({3, -1}).numel(), doctest::Contains("shape (3, -1): negative size -1"), ValueError);
  CHECK_THROWS_WITH_AS(Shape({int64_t(1) << 40, int64_t(1) << 40}).numel(), doctest::Contains("number of elements overflows int64"),
                       ValueError);
  CHECK(contiguous_strides({2, 3, 4}) == Strides{12, 4, 1});
  CHECK(contiguous_strides({}) == Strides{});
  CHECK(broadcast_shapes({2, 1, 4}, {3, 1}, "op") == Shape{2, 3, 4});
  CHECK(broadcast_shapes({}, {0}, "op") == Shape{0});
  CHECK_THROWS_WITH_AS(broadcast_shapes({2, 3}, {3, 2}, "myop"), doctest::Contains("myop: shapes cannot be broadcast: (2, 3) vs (3, 2)"),
                       ShapeError);
  CHECK(normalize_dim(-1, 3, "op") == 2);
  CHECK(normalize_dim(0, 0, "op") == 0);
  CHECK(normalize_dim(-1, 0, "op") == 0);
  CHECK_THROWS_WITH_AS(normalize_dim(3, 3, "myop"), doctest::Contains("myop: dim 3 out of range for a 3-d tensor (expected [-3, 2])"),
                       IndexError);
  CHECK_THROWS_WITH_AS(normalize_dim(1, 0, "myop"), doctest::Contains("expected [-1, 0]"), IndexError);
}

// A default-constructed Tensor looks 0-d and empty, so ops used to report a wrong shape ("reshape: shape (2, 3) is
// invalid for input of shape ()", "item: expected a tensor with one element, got shape ()"), or to return a view
// with no storage (unsqueeze, expand), or an uninitialised 0-d tensor (zeros_like).
TEST_CASE("ops given an undefined tensor say it is undefined, naming the op") {
  const Tensor u{}, x = ones({2, 3}), idx = index_tensor({0}, {1});
  struct Case {
    const char* want;
    std::function<void()> call;
  };
  const Case cases[] = {
      {"reshape: the input is undefined", [&] { u.reshape({2, 3}); }},
      {"view: the input is undefined", [&] { u.view({2}); }},
      {"item: the input is undefined", [&] { u.item(); }},
      {"size: the input is undefined", [&] { u.size(0); }},
      {"transpose: the input is undefined", [&] { u.transpose(0, 1); }},
      {"mT: the input is undefined", [&] { u.mT(); }},
      {"unsqueeze: the input is undefined", [&] { u.unsqueeze(0); }},
      {"expand: the input is undefined", [&] { u.expand({2, 3}); }},
      {"select: the input is undefined", [&] { u.select(0, 0); }},
      {"to: the input is undefined", [&] { u.to(f64); }},
      {"index_select: the input is undefined", [&] { index_select(u, 0, idx); }},
      {"index_select: the index is undefined", [&] { index_select(x, 0, u); }},
      {"matmul: an operand is undefined", [&] { matmul(x, u); }},
      {"exp: the input is undefined", [&] { exp(u); }},
      {"where: the condition is undefined", [&] { where(u, x, x); }},
      {"masked_fill: the mask is undefined", [&] { masked_fill(x, u, 0.0); }},
      {"cat: a tensor is undefined", [&] { cat({x, u}, 0); }},
      {"softmax: an input is undefined", [&] { softmax(u, 0); }},
      {"zeros_like: the input is undefined", [&] { zeros_like(u); }},
      {"copy_: the source is undefined", [&] { x.clone().copy_(u); }},
      {"fill_: the input is undefined", [&] { Tensor(u).fill_(1.0); }},
  };
  for (const Case& c : cases) {
    CAPTURE(c.want);
    CHECK_THROWS_WITH_AS(c.call(), doctest::Contains(fmt::format("{} (a default-constructed Tensor)", c.want).c_str()),
                         DTypeError);
  }
}
