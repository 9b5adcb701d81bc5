// The value ops of core/cpu/ops/scan.cpp and core/cpu/ops/layout.cpp on what the autograd fixtures do not
// reach: strided and bool inputs, i64 products, and pad_backward as the exact adjoint of pad (the identity <pad(x), y> =
// <x, pad_backward(y)> in every mode, with crops).
#include <doctest/doctest.h>

#include "core/ops.h"
#include "core/random.h"

using namespace tg;

TEST_CASE("cumsum and cumprod run along any dim of a strided input; i64 products wrap") {
  const Tensor x = arange(1, 7, 1, f64).reshape({2, 3}).mT();  // (3, 2): [[1, 4], [2, 5], [3, 6]]
  CHECK(cumsum(x, 0).to_vector<double>() == std::vector<double>{1, 4, 3, 9, 6, 15});
  CHECK(cumprod(x, 1).to_vector<double>() == std::vector<double>{1, 4, 2, 10, 3, 18});
  const Tensor big = index_tensor({int64_t(1) << 62, 4}, {2});
  CHECK(cumprod(big, 0).to_vector<int64_t>() == std::vector<int64_t>{int64_t(1) << 62, 0});  // 2^64 wraps to 0
}

TEST_CASE("flip, roll and repeat move bool and i64 elements of strided inputs") {
  const Tensor b = tensor({1, 0, 0, 1, 1, 0}, {2, 3}, boolean).mT();  // (3, 2)
  CHECK(flip(b, {0, 1}).to_vector<bool>() == std::vector<bool>{0, 0, 1, 0, 1, 1});  // of [[1, 1], [0, 1], [0, 0]]
  const Tensor k = index_tensor({0, 1, 2, 3, 4, 5}, {2, 3});
  CHECK(roll(k, {-1, 4}, {0, 1}).to_vector<int64_t>() == std::vector<int64_t>{5, 3, 4, 2, 0, 1});
  CHECK(repeat(k.slice(1, 0, 3, 2), {1, 2}).to_vector<int64_t>() == std::vector<int64_t>{0, 2, 0, 2, 3, 5, 3, 5});
}

TEST_CASE("pad_backward is the adjoint of pad in every mode, with crops") {
  Generator gen(5);
  const Tensor x = randn({2, 4, 5}, f64, &gen);
  const std::vector<std::vector<int64_t>> pads = {{3, 2, -1, 2}, {-2, 4}, {0, 0, 3, 3, 1, -1}};
  for (PadMode mode : {PadMode::constant, PadMode::reflect, PadMode::replicate}) {
    for (const auto& p : pads) {
      CAPTURE(int(mode));
      CAPTURE(p.size());
      const Tensor y = pad(x, p, mode);
      const Tensor v = randn(y.shape(), f64, &gen);
      CHECK(sum(y * v).item() == doctest::Approx(sum(x * pad_backward(v, x.shape(), p, mode)).item()).epsilon(1e-12));
    }
  }
}
