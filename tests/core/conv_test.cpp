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

// im2col and col2im_add by their definitions, entry by entry in (c, i, j, y, x) order.
std::pair<std::vector<double>, std::vector<double>> naive_im2col_col2im(const Tensor& x, const Tensor& c,
                                                                          const Window& w) {
  const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3), L = w.output[0] * w.output[1];
  const std::vector<double> xv = x.to_vector<double>(), cv = c.to_vector<double>();
  std::vector<double> col(cv.size(), 0.0), dx(xv.size(), 0.0);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t ch = 0; ch < C; ++ch)
      for (int64_t i = 0; i < w.kernel[0]; ++i)
        for (int64_t j = 0; j < w.kernel[1]; ++j)
          for (int64_t y = 0; y < w.output[0]; ++y)
            for (int64_t q = 0; q < w.output[1]; ++q) {
              const int64_t ih = y * w.stride[0] - w.padding[0] + i * w.dilation[0];
              const int64_t iw = q * w.stride[1] - w.padding[1] + j * w.dilation[1];
              const size_t e = size_t(((n * C + ch) * w.kernel[0] * w.kernel[1] + i * w.kernel[1] + j) * L +
                                      y * w.output[1] + q);
              if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
              const size_t at = size_t(((n * C + ch) * H + ih) * W + iw);
              col[e] = xv[at];
              dx[at] += cv[e];
            }
  return {col, dx};
}

TEST_CASE("im2col and col2im give their definitions' values on narrow and wide outputs") {
  // Outputs up to 8 wide take the kernels' bordered / gathered path, wider ones the row copies.
  Generator gen(7);
  struct Geometry {
    Shape x;
    WindowSpec spec;
  };
  const std::vector<Geometry> cases = {
      {{2, 3, 4, 4}, {.kernel = {3, 3}, .padding = {1, 1}, .padding_end = {1, 1}}},
      {{2, 2, 5, 7}, {.kernel = {2, 3}, .stride = {2, 1}, .padding = {2, 0}, .padding_end = {2, 0}, .dilation = {1, 2}}},
      {{1, 2, 1, 6}, {.kernel = {1, 3}, .stride = {1, 2}, .padding = {0, 1}, .padding_end = {0, 1}}},
      {{2, 2, 6, 20}, {.kernel = {3, 3}, .padding = {1, 1}, .padding_end = {1, 1}}},
      {{1, 3, 9, 25}, {.kernel = {3, 2}, .stride = {2, 3}, .padding = {1, 2}, .padding_end = {1, 2}, .dilation = {2, 1}}},
  };
  for (const Geometry& g : cases) {
    const Tensor x = randn(g.x, f64, &gen);
    const Window w = window("t", x.shape(), g.spec);
    const Tensor c = randn({g.x[0], g.x[1] * w.kernel[0] * w.kernel[1], w.output[0] * w.output[1]}, f64, &gen);
    const auto want = naive_im2col_col2im(x, c, w);
    INFO("input ", g.x, ", output ", w.output[0], "x", w.output[1]);
    CHECK(im2col(x, w).to_vector<double>() == want.first);
    CHECK(col2im(c, g.x[1], w).to_vector<double>() == want.second);
  }
}

TEST_CASE("max_pool_indices points at each window's first maximum, as flat indices into x") {
  const Tensor x = tensor({3, 3, 1, 2, 0, 5, 5, 4}, {2, 1, 1, 4}, f64);  // a tie in the first window
  const Window w = window("t", x.shape(), {.kernel = {1, 2}, .stride = {1, 2}});
  CHECK(max_pool_indices(x, w).to_vector<int64_t>() == std::vector<int64_t>{0, 3, 5, 6});
}
