// The Variable handle's user-facing parts: printing (operator<<, fmt) and copy_, which sets a value in place.
#include <doctest/doctest.h>

#include <sstream>

#include "autograd/check.h"
#include "autograd/functions.h"
#include "core/format.h"

using namespace tg;
using test::leaf;

TEST_CASE("a Variable prints as its value, then requires_grad or the op that made it, as PyTorch does") {
  const Variable x = leaf({1, 2});
  const std::string value = "tensor([1.0000, 2.0000], shape=(2,), dtype=f64";
  CHECK(fmt::format("{}", x) == value + ", requires_grad=True)");
  CHECK(fmt::format("{}", x * x) == "tensor([1.0000, 4.0000], shape=(2,), dtype=f64, grad_fn=<mul>)");
  CHECK(fmt::format("{}", x.detach()) == value + ")");
  CHECK(fmt::format("{}", Variable()) == "tensor(undefined)");
  std::ostringstream os;
  os << x;
  CHECK(os.str() == fmt::format("{}", x));
}

TEST_CASE("copy_ sets the value in place, seen by every handle, converting the dtype, naming both shapes") {
  Variable w = leaf({1, 2, 3});
  const Variable held = w;  // e.g. an optimizer's handle
  w.copy_(tensor({4, 5, 6}, f64));
  CHECK(held.value().to_vector<double>() == std::vector<double>{4, 5, 6});
  CHECK(w.requires_grad());
  CHECK(w.is_leaf());
  CHECK_THROWS_WITH_AS(w.copy_(zeros({2}, f64)), "Variable::copy_: shape of the source differs: (2,) vs (3,)",
                       ShapeError);
  w.copy_(tensor({0.1f, 2, -3}, {3}, f32));  // converted to f64, as PyTorch's copy_
  CHECK(w.value().to_vector<double>() == std::vector<double>{double(0.1f), 2, -3});
  CHECK(w.dtype() == f64);
}
