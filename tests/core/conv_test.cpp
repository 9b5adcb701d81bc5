// Sliding windows (core/conv.h): PyTorch's output sizes, im2col's columns, col2im as its adjoint, and max
// pooling's argmax.
#include <doctest/doctest.h>

#include "core/conv.h"
#include "core/ops.h"
#include "core/random.h"

using namespace tg;

TEST_CASE("window gives PyTorch's output sizes, ceil_mode dropping a window that starts in the end padding") {
  CHECK(window("t", {1, 1, 8, 8}, {.kernel = {3, 3}, .padding = {1, 1}, .padding_end = {1, 1}}).output ==
        std::array<int64_t, 2>{8, 8});
  CHECK(window("t", {1, 1, 7, 9}, {.kernel = {2, 3}, .stride = {2, 2}, .dilation = {2, 1}}).output ==
        std::array<int64_t, 2>{3, 4});
  // Width 5, kernel 2, stride 2: floor gives 2 windows, ceil 3 (the last one half outside).
  CHECK(window("t", {1, 1, 4, 5}, {.kernel = {2, 2}, .stride = {2, 2}, .ceil_mode = true}).output ==
        std::array<int64_t, 2>{2, 3});
  // Size 5 with padding 1: ceil would give 4, but the 4th window would start at 6 - 1 = 5, in the end padding.
  CHECK(window("t", {1, 1, 5, 5}, {.kernel = {2, 2}, .stride = {2, 2}, .padding = {1, 1}, .padding_end = {1, 1},
                                   .ceil_mode = true})
            .output == std::array<int64_t, 2>{3, 3});
}

TEST_CASE("im2col lays each window out as a column, zeros on padding") {
  const Tensor x = arange(1, 10, 1, f64).reshape({1, 1, 3, 3});  // 1 2 3 / 4 5 6 / 7 8 9
  const Window w = window("t", x.shape(), {.kernel = {2, 2}, .stride = {2, 2}, .padding = {1, 1}, .padding_end = {1, 1}});
  const Tensor col = im2col(x, w);  // 4 taps x 4 positions
  CHECK(col.shape() == Shape{1, 4, 4});
  CHECK(col.to_vector<double>() == std::vector<double>{0, 0, 0, 5,    // tap (0, 0)
                                                       0, 0, 4, 6,    // tap (0, 1)
                                                       0, 2, 0, 8,    // tap (1, 0)
                                                       1, 3, 7, 9});  // tap (1, 1)
}

TEST_CASE("col2im is im2col's adjoint: <im2col(x), c> = <x, col2im(c)>, in f32 and f64") {
  Generator gen(5);
  for (DType dt : {f64, f32}) {
    const Tensor x = randn({2, 3, 7, 6}, dt, &gen);
    const Window w = window("t", x.shape(), {.kernel = {3, 2}, .stride = {2, 3}, .padding = {1, 2},
                                             .padding_end = {1, 2}, .dilation = {2, 1}});
    const Tensor c = randn(im2col(x, w).shape(), dt, &gen);
    const double lhs = sum(mul(im2col(x, w), c)).to(f64).item(), rhs = sum(mul(x, col2im(c, 3, w))).to(f64).item();
    CHECK(lhs == doctest::Approx(rhs).epsilon(dt == f64 ? 1e-12 : 1e-5));
  }
}

TEST_CASE("max_pool_indices points at each window's first maximum, as flat indices into x") {
  const Tensor x = tensor({3, 3, 1, 2, 0, 5, 5, 4}, {2, 1, 1, 4}, f64);  // a tie in the first window
  const Window w = window("t", x.shape(), {.kernel = {1, 2}, .stride = {1, 2}});
  CHECK(max_pool_indices(x, w).to_vector<int64_t>() == std::vector<int64_t>{0, 3, 5, 6});
}
