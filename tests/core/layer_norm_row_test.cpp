// The layer-norm rows of the kernel room (core/cpu/layer_norm.cpp), forward and backward, on every Highway
// target this CPU runs, against double references at the bounds kernels.h states: every length 1..70 (every
// tail) and a few wide rows, 1 to 9 rows (groups of 4, then one by one), rows around ±1e4 (the mean that
// cancels in a naive variance), ±0, subnormals, ±inf and NaN. The column sums dw and db are exact.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include "core/cpu/kernels.h"
#include "core/targets.h"
#include "reference.h"

using namespace tg;
using namespace tg::test;

namespace {

constexpr double kEps = 0x1p-24;  // kernels.h's ε

// A row of n: normal at several scales around 0 or around ±1e4, and with specials (±0, subnormals, 3e38 if
// `huge`, ±inf and NaN) now and then.
std::vector<float> row(std::mt19937& gen, int64_t n, bool specials, bool huge = true) {
  std::normal_distribution<float> normal;
  const float offset = gen() % 3 == 0 ? (gen() % 2 ? 1e4f : -1e4f) : 0.0f;
  const float scale = gen() % 4 == 0 ? 1e-3f : float(1 + gen() % 8);
  const float odd[] = {0.0f, -0.0f, 1e-40f, -1e-40f, 3e38f};
  std::vector<float> x(static_cast<size_t>(n));
  for (float& v : x) {
    v = offset + normal(gen) * scale;
    if (specials && gen() % 16 == 0) v = odd[gen() % (huge ? 5 : 4)];
  }
  if (specials && gen() % 5 == 0) x[gen() % n] = gen() % 2 ? INFINITY : -INFINITY;
  if (specials && gen() % 7 == 0) x[gen() % n] = NAN;
  return x;
}

// got within tol of want, or NaN where want is NaN.
void check_near(double got, double want, double tol) {
  CAPTURE(got);
  CAPTURE(want);
  CAPTURE(tol);
  CHECK(std::isnan(got) == std::isnan(want));
  if (!std::isnan(want)) CHECK((got == want || std::abs(got - want) <= tol));
}

}  // namespace

TEST_CASE("layer_norm_f32 and layer_norm_backward_f32 keep kernels.h's bounds on every target") {
  std::vector<int64_t> lengths;
  for (int64_t n = 1; n <= 70; ++n) lengths.push_back(n);
  for (int64_t n : {255, 256, 257, 1001}) lengths.push_back(n);
  for_each_target([&] {
    std::mt19937 gen(7);
    for (int64_t n : lengths)
      for (int round = 0; round < 12; ++round) {
        CAPTURE(n);
        CAPTURE(round);
        const int64_t rows = 1 + round % 9;
        const bool specials = round % 3 == 2;
        std::vector<float> x, w = row(gen, n, specials, false), b = row(gen, n, specials, false);
        for (int64_t i = 0; i < rows; ++i) {
          std::vector<float> xi = row(gen, n, specials);
          if (i == 1 && (round == 5 || round == 7)) xi.assign(xi.size(), 3.25f);  // rstd 1/sqrt(eps), inf if eps 0
          x.insert(x.end(), xi.begin(), xi.end());
        }
        const double eps = round % 4 == 3 ? 0.0 : 1e-5;
        const bool with_w = round % 4 != 1, with_b = round % 4 != 2, affine = round != 8;
        const float* pw = with_w ? w.data() : nullptr;
        const float* pb = with_b ? b.data() : nullptr;
        std::vector<float> h(x.size(), 9.0f), y(x.size(), 9.0f), mean(rows), rstd(rows);
        cpu::layer_norm_f32(x.data(), h.data(), affine ? y.data() : nullptr, pw, pb, rows, n, eps, mean.data(),
                            rstd.data());
        for (int64_t i = 0; i < rows; ++i) {
          CAPTURE(i);
          const float* xi = x.data() + i * n;
          double m = 0, v = 0, abs_sum = 0;
          for (int64_t j = 0; j < n; ++j) m += xi[j], abs_sum += std::abs(double(xi[j]));
          m /= double(n);
          for (int64_t j = 0; j < n; ++j) v += (xi[j] - m) * (xi[j] - m);
          const double rs = 1 / std::sqrt(v / double(n) + eps);
          // The double sums' error: n·2^-53 relative in the variance, 2^-53·Σ|x| absolute in the mean.
          const double dm = 0x1p-52 * abs_sum, drel = (double(n) + 8) * 0x1p-53;
          check_near(mean[i], m, kEps * std::abs(m) + dm + 0x1p-149);
          check_near(rstd[i], rs, (kEps + drel) * rs + 0x1p-149);
          for (int64_t j = 0; j < n; ++j) {
            CAPTURE(j);
            const double want = (xi[j] - m) * rs;
            check_near(h[i * n + j], want, (kEps + drel) * std::abs(want) + rs * dm + 0x1p-149);
            if (affine && with_w) {
              const float p = h[i * n + j] * w[j];  // mul then add, each rounded in f32
              CHECK(same_bits(std::vector<float>{with_b ? p + b[j] : p}, std::vector<float>{y[i * n + j]}));
            } else if (affine) {
              CHECK(same_bits(std::vector<float>{with_b ? h[i * n + j] + b[j] : h[i * n + j]},
                              std::vector<float>{y[i * n + j]}));
            }
          }
        }
        if (!affine) CHECK(y == std::vector<float>(x.size(), 9.0f));
        // The backward on that x̂, adding into column sums that already hold a chunk's earlier rows.
        std::vector<float> dy;
        for (int64_t i = 0; i < rows; ++i) {
          const std::vector<float> dyi = row(gen, n, specials, false);
          dy.insert(dy.end(), dyi.begin(), dyi.end());
        }
        std::vector<double> dw(static_cast<size_t>(n)), db(static_cast<size_t>(n));
        for (size_t j = 0; j < dw.size(); ++j) dw[j] = 0.25 * double(j) - 3.0, db[j] = 1e3 / double(j + 1);
        std::vector<double> dw_want = dw, db_want = db;
        std::vector<float> dx(x.size(), 9.0f);
        cpu::layer_norm_backward_f32(dy.data(), h.data(), pw, rstd.data(), dx.data(), with_w ? dw.data() : nullptr,
                                     with_b ? db.data() : nullptr, rows, n);
        for (int64_t i = 0; i < rows; ++i) {
          CAPTURE(i);
          const float *dyi = dy.data() + i * n, *hi = h.data() + i * n;
          std::vector<double> g(static_cast<size_t>(n));
          double sg = 0, sgx = 0, sg_abs = 0, sgx_abs = 0;
          for (int64_t j = 0; j < n; ++j) {
            g[j] = with_w ? double(dyi[j]) * w[j] : dyi[j];
            sg += g[j], sgx += g[j] * hi[j], sg_abs += std::abs(g[j]), sgx_abs += std::abs(g[j] * hi[j]);
            dw_want[j] += double(dyi[j]) * double(hi[j]), db_want[j] += double(dyi[j]);
          }
          // Where no f32 sum or product overflows (the rows with 3e38 or inf in x give such x̂).
          const bool in_range = sg_abs + sgx_abs < 1e30 && double(rstd[i]) * (sg_abs + sgx_abs) < 1e30;
          for (int64_t j = 0; j < n; ++j) {
            CAPTURE(j);
            const double want = double(rstd[i]) * (g[j] - sg / double(n) - hi[j] * (sgx / double(n)));
            const double bound = std::abs(g[j]) + sg_abs / double(n) + std::abs(double(hi[j])) * sgx_abs / double(n);
            if (in_range) check_near(dx[i * n + j], want, (double(n) + 8) * kEps * double(rstd[i]) * bound + 0x1p-149);
          }
        }
        if (with_w) CHECK(same_bits(dw, dw_want));
        if (with_b) CHECK(same_bits(db, db_want));
      }
  });
}

TEST_CASE("a layer-norm row's bits do not depend on the rows it is computed with (the thread count)") {
  // The rows run in groups of 4, then one by one: a chunk boundary moves a row from one to the other.
  for_each_target([] {
    std::mt19937 gen(11);
    for (int64_t n : {1, 7, 8, 16, 33, 256, 257}) {
      CAPTURE(n);
      const int64_t rows = 9;
      std::vector<float> x, dy, w = row(gen, n, false);
      for (int64_t i = 0; i < rows; ++i) {
        const std::vector<float> xi = row(gen, n, false), dyi = row(gen, n, false);
        x.insert(x.end(), xi.begin(), xi.end()), dy.insert(dy.end(), dyi.begin(), dyi.end());
      }
      std::vector<float> h(x.size()), y(x.size()), mean(rows), rstd(rows), dx(x.size());
      std::vector<float> h1 = h, y1 = y, mean1 = mean, rstd1 = rstd, dx1 = dx;
      cpu::layer_norm_f32(x.data(), h.data(), y.data(), w.data(), nullptr, rows, n, 1e-5, mean.data(), rstd.data());
      cpu::layer_norm_backward_f32(dy.data(), h.data(), w.data(), rstd.data(), dx.data(), nullptr, nullptr, rows, n);
      for (int64_t i = 0; i < rows; ++i) {
        const int64_t at = i * n;
        cpu::layer_norm_f32(x.data() + at, h1.data() + at, y1.data() + at, w.data(), nullptr, 1, n, 1e-5,
                            mean1.data() + i, rstd1.data() + i);
        cpu::layer_norm_backward_f32(dy.data() + at, h.data() + at, w.data(), rstd.data() + i, dx1.data() + at,
                                     nullptr, nullptr, 1, n);
      }
      CHECK(same_bits(h, h1));
      CHECK(same_bits(y, y1));
      CHECK(same_bits(mean, mean1));
      CHECK(same_bits(rstd, rstd1));
      CHECK(same_bits(dx, dx1));
    }
  });
}
