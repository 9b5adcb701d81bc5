// Printing: exact strings for small tensors of each dtype, 0-d and empty tensors, scientific notation,
// nan/inf, nested brackets, strided views, and "..." elision past 1000 elements.
#include <doctest/doctest.h>

#include <sstream>

#include "core/format.h"
#include "core/ops.h"
#include "reference.h"

using namespace tg;

TEST_CASE("a small f32 vector and matrix print with 4 decimals in one width") {
  CHECK(to_string(tensor({1, 2.5, -3})) == "tensor([ 1.0000,  2.5000, -3.0000], shape=(3,), dtype=f32)");
  CHECK(to_string(tensor({1, 2, 3, 4, 5, 6}, {2, 3})) ==
        "tensor([[1.0000, 2.0000, 3.0000],\n"
        "        [4.0000, 5.0000, 6.0000]], shape=(2, 3), dtype=f32)");
  CHECK(to_string(tensor({0.125, -10.5}, f64)) == "tensor([  0.1250, -10.5000], shape=(2,), dtype=f64)");
}

TEST_CASE("i64 and bool print as integers and True/False") {
  CHECK(to_string(index_tensor({1, -20, 300}, {3})) == "tensor([  1, -20, 300], shape=(3,), dtype=i64)");
  CHECK(to_string(gt(tensor({1, 2}), 1.5)) == "tensor([False,  True], shape=(2,), dtype=bool)");
  CHECK(to_string(tensor({1, 0, 0, 1}, {2, 2}, boolean)) ==
        "tensor([[ True, False],\n"
        "        [False,  True]], shape=(2, 2), dtype=bool)");
}

TEST_CASE("i64 beyond 2^53 prints exactly") {
  CHECK(to_string(index_tensor({9007199254740993, INT64_MIN}, {2})) ==
        "tensor([    9007199254740993, -9223372036854775808], shape=(2,), dtype=i64)");
}

TEST_CASE("0-d, empty and undefined tensors") {
  CHECK(to_string(scalar_tensor(3.25)) == "tensor(3.2500, shape=(), dtype=f32)");
  CHECK(to_string(scalar_tensor(-7, i64)) == "tensor(-7, shape=(), dtype=i64)");
  CHECK(to_string(scalar_tensor(1, boolean)) == "tensor(True, shape=(), dtype=bool)");
  CHECK(to_string(zeros({0})) == "tensor([], shape=(0,), dtype=f32)");
  CHECK(to_string(zeros({2, 0})) == "tensor([[],\n        []], shape=(2, 0), dtype=f32)");
  CHECK(to_string(Tensor()) == "tensor(undefined)");
}

TEST_CASE("scientific notation when magnitudes are tiny, huge or far apart") {
  CHECK(to_string(tensor({1e-5, 1})) == "tensor([1.0000e-05, 1.0000e+00], shape=(2,), dtype=f32)");
  CHECK(to_string(tensor({2e8}, f64)) == "tensor([2.0000e+08], shape=(1,), dtype=f64)");
  CHECK(to_string(tensor({1, 5000}, f64)) == "tensor([1.0000e+00, 5.0000e+03], shape=(2,), dtype=f64)");
  CHECK(to_string(tensor({0, 1, 999}, f64)) == "tensor([  0.0000,   1.0000, 999.0000], shape=(3,), dtype=f64)");
}

TEST_CASE("nan and inf print as words") {
  CHECK(to_string(tensor({NAN, INFINITY, -1})) == "tensor([    nan,     inf, -1.0000], shape=(3,), dtype=f32)");
  CHECK(to_string(tensor({-INFINITY}, f64)) == "tensor([-inf], shape=(1,), dtype=f64)");
}

TEST_CASE("3-d tensors separate blocks by a blank line, and views print in logical order") {
  CHECK(to_string(arange(0, 8, 1, i64).view({2, 2, 2})) ==
        "tensor([[[0, 1],\n"
        "         [2, 3]],\n"
        "\n"
        "        [[4, 5],\n"
        "         [6, 7]]], shape=(2, 2, 2), dtype=i64)");
  CHECK(to_string(index_tensor({1, 2, 3, 4, 5, 6}, {2, 3}).mT()) ==
        "tensor([[1, 4],\n"
        "        [2, 5],\n"
        "        [3, 6]], shape=(3, 2), dtype=i64)");
  CHECK(to_string(arange(0, 10, 1, i64).slice(0, 1, 10, 4)) == "tensor([1, 5, 9], shape=(3,), dtype=i64)");
}

TEST_CASE("past 1000 elements, three items at each edge and '...' between") {
  CHECK(to_string(arange(0, 2000, 1, i64)) ==
        "tensor([   0,    1,    2, ..., 1997, 1998, 1999], shape=(2000,), dtype=i64)");
  CHECK(to_string(full({2000}, 0.5)) ==
        "tensor([0.5000, 0.5000, 0.5000, ..., 0.5000, 0.5000, 0.5000], shape=(2000,), dtype=f32)");
  CHECK(to_string(arange(0, 1000, 1, i64)).find("...") == std::string::npos);  // 1000 is not past 1000
  CHECK(to_string(arange(0, 1001, 1, i64)).find("...") != std::string::npos);
  const std::string m = to_string(arange(0, 2000, 1, i64).view({40, 50}));
  CHECK(m ==
        "tensor([[   0,    1,    2, ...,   47,   48,   49],\n"
        "        [  50,   51,   52, ...,   97,   98,   99],\n"
        "        [ 100,  101,  102, ...,  147,  148,  149],\n"
        "        ...,\n"
        "        [1850, 1851, 1852, ..., 1897, 1898, 1899],\n"
        "        [1900, 1901, 1902, ..., 1947, 1948, 1949],\n"
        "        [1950, 1951, 1952, ..., 1997, 1998, 1999]], shape=(40, 50), dtype=i64)");
}

TEST_CASE("operator<< and fmt print the same text as to_string") {
  Tensor t = tensor({1.5, -2}, f64);
  std::ostringstream os;
  os << t;
  CHECK(os.str() == to_string(t));
  CHECK(fmt::format("{}", t) == to_string(t));
  CHECK(fmt::format("{}", Shape{2, 3}) == "(2, 3)");
  CHECK(fmt::format("{}", Shape{4}) == "(4,)");
  CHECK(fmt::format("{}", Shape{}) == "()");
  CHECK(fmt::format("{}", f64) == "f64");
}

TEST_CASE("a Shape prints through operator<< as through fmt") {
  for (const Shape& s : {Shape{2, 3}, Shape{4}, Shape{}}) {
    std::ostringstream os;
    os << s;
    CHECK(os.str() == fmt::format("{}", s));
  }
  std::ostringstream os;
  os << Shape{2, 3} << ' ' << Shape{4} << ' ' << Shape{};
  CHECK(os.str() == "(2, 3) (4,) ()");
}

TEST_CASE("a DType prints through operator<< by its name, as through fmt") {
  std::ostringstream os;
  os << f32 << ' ' << f64 << ' ' << i64 << ' ' << boolean;
  CHECK(os.str() == "f32 f64 i64 bool");
  CHECK(os.str() == fmt::format("{} {} {} {}", f32, f64, i64, boolean));
}
