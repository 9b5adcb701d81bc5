// The AVX-512 layer-norm rows, forward and backward, against the portable ones bit for bit: every published
// result and fixture was computed by the portable rows, so these must not move a bit.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include "core/cpu/kernels.h"
#include "reference.h"

using namespace tg;
using namespace tg::test;

namespace {

// A row of n: normal at several scales around 0 or around ±1e4 (the mean that cancels in a naive variance),
// and with specials ±0, subnormals, ±inf and NaN now and then.
std::vector<float> row(std::mt19937& gen, int64_t n, bool specials) {
  std::normal_distribution<float> normal;
  const float offset = gen() % 3 == 0 ? (gen() % 2 ? 1e4f : -1e4f) : 0.0f;
  const float scale = gen() % 4 == 0 ? 1e-3f : float(1 + gen() % 8);
  const float odd[] = {0.0f, -0.0f, 1e-40f, -1e-40f, 3e38f};
  std::vector<float> x(static_cast<size_t>(n));
  for (float& v : x) {
    v = offset + normal(gen) * scale;
    if (specials && gen() % 16 == 0) v = odd[gen() % 5];
  }
  if (specials && gen() % 5 == 0) x[gen() % n] = gen() % 2 ? INFINITY : -INFINITY;
  if (specials && gen() % 7 == 0) x[gen() % n] = NAN;
  return x;
}

}  // namespace

TEST_CASE("the AVX-512 layer-norm rows give the portable rows' bits") {
  float probe_x = 1.0f, probe_h, probe_m, probe_r;
  if (!cpu::layer_norm_f32_avx512(&probe_x, &probe_h, nullptr, nullptr, nullptr, 1, 1, 1e-5, &probe_m, &probe_r)) {
    MESSAGE("no AVX-512 on this CPU: the portable rows run, nothing to compare");
    return;
  }
  std::mt19937 gen(7);
  std::vector<int64_t> lengths;
  for (int64_t n = 1; n <= 200; ++n) lengths.push_back(n);
  for (int64_t n : {255, 256, 257, 768, 1001}) lengths.push_back(n);
  for (int64_t n : lengths)
    for (int round = 0; round < 12; ++round) {
      CAPTURE(n);
      CAPTURE(round);
      // 1 to 9 rows: the AVX-512 rows run in groups of 4 and then one by one.
      const int64_t rows = 1 + round % 9;
      const bool specials = round % 3 == 2;
      std::vector<float> x, w = row(gen, n, specials), b = row(gen, n, specials);
      for (int64_t i = 0; i < rows; ++i) {
        std::vector<float> xi = row(gen, n, specials);
        if (i == 1 && (round == 5 || round == 7)) xi.assign(xi.size(), 3.25f);  // rstd 1/sqrt(eps), inf if eps 0
        x.insert(x.end(), xi.begin(), xi.end());
      }
      const double eps = round % 4 == 3 ? 0.0 : 1e-5;
      const bool with_w = round % 4 != 1, with_b = round % 4 != 2, affine = round != 8;
      const float* pw = with_w ? w.data() : nullptr;
      const float* pb = with_b ? b.data() : nullptr;
      std::vector<float> h0(x.size()), h1(x.size(), 9.0f), y0(x.size()), y1(x.size(), 9.0f);
      std::vector<float> mean0(rows), mean1(rows), rstd0(rows), rstd1(rows);
      cpu::layer_norm_f32_portable(x.data(), h0.data(), affine ? y0.data() : nullptr, pw, pb, rows, n, eps,
                                      mean0.data(), rstd0.data());
      REQUIRE(cpu::layer_norm_f32_avx512(x.data(), h1.data(), affine ? y1.data() : nullptr, pw, pb, rows, n, eps,
                                            mean1.data(), rstd1.data()));
      CHECK(same_bits(h0, h1));
      CHECK(same_bits(mean0, mean1));
      CHECK(same_bits(rstd0, rstd1));
      if (affine) CHECK(same_bits(y0, y1));
      // The backward on that x̂, adding into column sums that already hold a chunk's earlier rows.
      std::vector<float> dy;
      for (int64_t i = 0; i < rows; ++i) {
        const std::vector<float> dyi = row(gen, n, specials);
        dy.insert(dy.end(), dyi.begin(), dyi.end());
      }
      std::vector<double> dw0(static_cast<size_t>(n)), db0(static_cast<size_t>(n));
      for (size_t j = 0; j < dw0.size(); ++j) dw0[j] = 0.25 * double(j) - 3.0, db0[j] = 1e3 / double(j + 1);
      std::vector<double> dw1 = dw0, db1 = db0;
      std::vector<float> dx0(x.size()), dx1(x.size(), 9.0f);
      cpu::layer_norm_backward_f32_portable(dy.data(), h0.data(), pw, rstd0.data(), dx0.data(),
                                               with_w ? dw0.data() : nullptr, with_b ? db0.data() : nullptr, rows, n);
      REQUIRE(cpu::layer_norm_backward_f32_avx512(dy.data(), h0.data(), pw, rstd0.data(), dx1.data(),
                                                     with_w ? dw1.data() : nullptr, with_b ? db1.data() : nullptr,
                                                     rows, n));
      CHECK(same_bits(dx0, dx1));
      CHECK(same_bits(dw0, dw1));
      CHECK(same_bits(db0, db1));
    }
}
