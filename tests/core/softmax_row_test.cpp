// The softmax and log_softmax lines of the kernel room (core/cpu/softmax.cpp), forward and backward, and its
// log-sum-exp and max/min lines, on every Highway target this CPU runs, against double references at the
// bounds kernels.h states: every length 0..70 (every tail) and a few long lines, with -inf (masked keys),
// fully masked lines, ±0, inf, NaN, subnormals.
// And masked_softmax against the masked_fill + softmax it replaces in attention, bit for bit.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <memory>
#include <random>
#include <vector>

#include "core/cpu/kernels.h"
#include "core/error.h"
#include "core/ops.h"
#include "core/random.h"
#include "core/targets.h"
#include "reference.h"

using namespace tg;
using namespace tg::test;

namespace {

// A line of n scores: normal at several scales, with -inf (masked keys), +-0, +inf, NaN, subnormals and
// values far enough below the max that exp underflows, each now and then.
std::vector<float> line(std::mt19937& gen, int64_t n, bool specials) {
  std::normal_distribution<float> normal;
  const float odd[] = {-INFINITY, -INFINITY, -INFINITY, 0.0f, -0.0f, 1e-40f, -1e-40f, -200.0f, 88.0f, 100.0f};
  std::vector<float> x(static_cast<size_t>(n));
  for (float& v : x) {
    const unsigned pick = gen() % 40;
    v = normal(gen) * float(1 + gen() % 8);
    if (specials && pick < 10) v = odd[pick];
  }
  if (specials && n && gen() % 7 == 0) x[gen() % n] = INFINITY;
  if (specials && n && gen() % 9 == 0) x[gen() % n] = NAN;
  return x;
}

bool same_bits(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape() || a.dtype() != b.dtype()) return false;
  return a.dtype() == f32 ? test::same_bits(a.to_vector<float>(), b.to_vector<float>())
                          : test::same_bits(a.to_vector<double>(), b.to_vector<double>());
}

constexpr double kEps = 0x1p-24;  // kernels.h's ε

// Every length 0..70 (each tail length of every target) and a few long lines.
std::vector<int64_t> lengths() {
  std::vector<int64_t> n;
  for (int64_t k = 0; k <= 70; ++k) n.push_back(k);
  for (int64_t k : {127, 128, 129, 1000, 5000}) n.push_back(k);
  return n;
}

// A line's max in double (NaNs passed over), whether it holds a NaN, and Σ exp(x - max).
struct Stats {
  double m = -INFINITY;
  bool nan = false;
  double z = 0;
  int64_t k = 0;  // +inf entries
};
Stats stats(const std::vector<float>& x) {
  Stats st;
  for (float v : x) st.m = std::isnan(v) ? st.m : std::max(st.m, double(v)), st.nan = st.nan || std::isnan(v);
  for (float v : x) st.k += v == INFINITY;
  for (float v : x) st.z += std::exp(double(v) - st.m);
  return st;
}

// kernel(x, out, n) run in place gives the bits it gave into `out` (as masked_softmax runs softmax_f32).
template <class Kernel>
void check_in_place(Kernel kernel, std::vector<float> x, const std::vector<float>& out) {
  kernel(x.data(), x.data(), int64_t(x.size()));
  CHECK(test::same_bits(x, out));
}

// got within tol of want, or both NaN, or equal (infinities).
void check_near(double got, double want, double tol) {
  CAPTURE(got);
  CAPTURE(want);
  CAPTURE(tol);
  if (std::isnan(want) || std::isnan(got) || want == got) {
    CHECK(std::isnan(got) == std::isnan(want));
    CHECK((std::isnan(want) || got == want || std::abs(got - want) <= tol));
    return;
  }
  CHECK(std::abs(got - want) <= tol);
}

}  // namespace

TEST_CASE("softmax_f32 and softmax_backward_f32 keep kernels.h's bounds on every target") {
  for_each_target([] {
    std::mt19937 gen(3);
    for (int64_t n : lengths())
      for (int round = 0; round < (n > 70 ? 4 : 16); ++round) {
        CAPTURE(n);
        CAPTURE(round);
        const std::vector<float> x = line(gen, n, round % 2 == 1), g = line(gen, n, false);
        std::vector<float> p(x.size(), 9.0f);
        cpu::softmax_f32(x.data(), p.data(), n);
        const auto [m, nan, z, k] = stats(x);
        for (int64_t j = 0; j < n; ++j) {
          CAPTURE(j);
          if (nan) CHECK(std::isnan(p[j]));
          else if (m == INFINITY) CHECK(p[j] == (x[j] == INFINITY ? float(1.0 / double(k)) : 0.0f));  // the limit
          else if (m == -INFINITY) CHECK(std::bit_cast<uint32_t>(p[j]) == 0u);  // fully masked: +0
          else {
            const double want = std::exp(double(x[j]) - m) / z;
            check_near(p[j], want, want * (std::abs(double(x[j]) - m) + double(n) + 8) * kEps + 0x1p-149);
          }
        }
        check_in_place(cpu::softmax_f32, x, p);
        // The gradient at that p, against p·(g - Σ g·p) in double from the same f32 p.
        std::vector<float> dx(x.size(), 9.0f);
        cpu::softmax_backward_f32(g.data(), p.data(), dx.data(), n);
        double dot = 0, dot_abs = 0;
        for (int64_t j = 0; j < n; ++j) dot += double(g[j]) * p[j], dot_abs += std::abs(double(g[j]) * p[j]);
        for (int64_t j = 0; j < n; ++j) {
          CAPTURE(j);
          const double want = double(p[j]) * (double(g[j]) - dot);
          check_near(dx[j], want,
                     (double(n) + 4) * kEps * std::abs(double(p[j])) * (std::abs(double(g[j])) + dot_abs) + 0x1p-149);
        }
        if (m == -INFINITY && !nan)
          for (float v : dx) CHECK(v == 0.0f);  // a fully masked line's gradient: zeros, not NaN
      }
  });
}

TEST_CASE("masked_softmax_f32 gives the bits of the filled line's softmax_f32 on every target") {
  for_each_target([] {
    std::mt19937 gen(4);
    for (int64_t n : lengths())
      for (int round = 0; round < (n > 70 ? 2 : 8); ++round) {
        CAPTURE(n);
        CAPTURE(round);
        const std::vector<float> x = line(gen, n, round % 2 == 1);
        std::unique_ptr<bool[]> blocked(new bool[size_t(n) + 1]);
        std::vector<float> filled = x;
        for (int64_t j = 0; j < n; ++j) {
          blocked[j] = round == 6 || gen() % 3 == 0;  // round 6: every key blocked
          if (blocked[j]) filled[j] = -INFINITY;
        }
        std::vector<float> want(x.size()), got(x.size(), 9.0f);
        cpu::softmax_f32(filled.data(), want.data(), n);
        cpu::masked_softmax_f32(x.data(), blocked.get(), got.data(), n);
        CHECK(same_bits(want, got));
        if (round == 6) CHECK(std::all_of(got.begin(), got.end(), [](float v) { return v == 0.0f; }));
      }
  });
}

TEST_CASE("log_softmax_f32 and log_softmax_backward_f32 keep kernels.h's bounds on every target") {
  for_each_target([] {
    std::mt19937 gen(5);
    for (int64_t n : lengths())
      for (int round = 0; round < (n > 70 ? 4 : 16); ++round) {
        CAPTURE(n);
        CAPTURE(round);
        const std::vector<float> x = line(gen, n, round % 2 == 1), g = line(gen, n, false);
        std::vector<float> ly(x.size(), 9.0f);
        cpu::log_softmax_f32(x.data(), ly.data(), n);
        const auto [m, nan, z, k] = stats(x);
        for (int64_t j = 0; j < n; ++j) {
          CAPTURE(j);
          if (nan) {
            CHECK(std::isnan(ly[j]));
          } else if (!std::isfinite(m)) {  // the limit: -log k on the k +inf entries, -inf elsewhere
            CHECK(ly[j] == (x[j] == INFINITY ? float(-std::log(double(k))) : -INFINITY));
          } else {
            const double want = double(x[j]) - m - std::log(z);
            check_near(ly[j], want, (std::abs(double(x[j]) - m) + std::abs(want) + 2.0 * double(n) + 16) * kEps);
          }
        }
        check_in_place(cpu::log_softmax_f32, x, ly);
        std::vector<float> dx(x.size(), 9.0f);
        cpu::log_softmax_backward_f32(g.data(), ly.data(), dx.data(), n);
        double total = 0, total_abs = 0;
        for (float v : g) total += v, total_abs += std::abs(double(v));
        for (int64_t j = 0; j < n; ++j) {
          CAPTURE(j);
          const double e = std::exp(double(ly[j]));
          if (m == -INFINITY && !nan) CHECK(dx[j] == 0.0f);  // a fully masked line: zeros, as softmax's gradient
          else check_near(dx[j], double(g[j]) - e * total, (double(n) + 4) * kEps * (std::abs(double(g[j])) + e * total_abs));
        }
      }
  });
}

TEST_CASE("logsumexp_f32 and extreme_f32 keep kernels.h's bounds on every target") {
  for_each_target([] {
    std::mt19937 gen(6);
    for (int64_t n : lengths())
      for (int round = 0; round < (n > 70 ? 4 : 16); ++round) {
        CAPTURE(n);
        CAPTURE(round);
        const std::vector<float> x = line(gen, n, round % 2 == 1);
        const auto [m, nan, z, k] = stats(x);
        const float lse = cpu::logsumexp_f32(x.data(), n);
        if (nan) CHECK(std::isnan(lse));
        else if (!std::isfinite(m)) CHECK(lse == float(m));  // -inf for all -inf (and n = 0), +inf
        else check_near(lse, m + std::log(z), (std::abs(m + std::log(z)) + double(n) + 8) * kEps);
        if (n == 0) continue;
        float hi = x[0], lo = x[0];
        for (float v : x) hi = std::max(hi, v), lo = std::min(lo, v);
        for (bool largest : {true, false}) {
          CAPTURE(largest);
          const float got = cpu::extreme_f32(x.data(), n, largest);
          if (nan) CHECK(std::isnan(got));
          else CHECK(got == (largest ? hi : lo));
        }
      }
    // A NaN in the last partial vector, and in the first lane, is seen.
    for (int64_t at : {int64_t(0), int64_t(36)}) {
      std::vector<float> x(37, 1.0f);
      x[size_t(at)] = NAN;
      CHECK(std::isnan(cpu::extreme_f32(x.data(), 37, true)));
      CHECK(std::isnan(cpu::extreme_f32(x.data(), 37, false)));
      CHECK(std::isnan(cpu::logsumexp_f32(x.data(), 37)));
    }
  });
}

TEST_CASE("masked_softmax gives the bits of masked_fill(-inf) then softmax, in f32 and f64") {
  const Tensor x4 = randn({3, 2, 5, 33});
  const Tensor pad = lt(rand({3, 33}), 0.3);  // key padding, broadcast over heads and queries
  Tensor pad_rows = pad.clone();
  pad_rows.select(0, 1).fill_(1.0);  // batch entry 1 fully masked: zeros, not NaN
  const Tensor causal = gt(arange(0, 33, 1, f64).unsqueeze(0), arange(0, 5, 1, f64).unsqueeze(1));  // (5, 33)
  for (DType dt : {f32, f64}) {
    const Tensor x = x4.to(dt);
    struct Case {
      const char* name;
      Tensor x, mask;
    };
    Tensor with_nan = x.clone();
    with_nan.select(3, 4).fill_(NAN);
    const Case cases[] = {
        {"key padding (B, 1, 1, S)", x, pad.reshape({3, 1, 1, 33})},
        {"a fully masked batch entry", x, pad_rows.reshape({3, 1, 1, 33})},
        {"causal (S_q, S_k)", x, causal},
        {"full-size mask", x, lt(rand({3, 2, 5, 33}), 0.5)},
        {"transposed input", x.transpose(0, 1), pad.reshape({1, 3, 1, 33})},
        {"NaN in a masked and an unmasked column", with_nan, pad.reshape({3, 1, 1, 33})},
        {"short lines", x.narrow(3, 0, 7), pad.narrow(1, 0, 7).reshape({3, 1, 1, 7})},
        {"a mask per query (B, H, S_q, 1), constant along the line", x, lt(rand({3, 2, 5, 1}), 0.5)},
        {"lines of 16", x.narrow(3, 0, 16), pad.narrow(1, 0, 16).reshape({3, 1, 1, 16})},
        {"long lines, a mask per line", randn({4, 70}).to(dt), lt(rand({4, 70}), 0.4)},
    };
    for (const Case& c : cases) {
      CAPTURE(dt);
      CAPTURE(c.name);
      const Tensor want = softmax(masked_fill(c.x, c.mask, -INFINITY), -1);
      const Tensor got = masked_softmax(c.x, c.mask);
      CHECK(same_bits(want, got));
      CHECK(got.shape() == c.x.shape());
    }
    CHECK(same_bits(masked_softmax(x, Tensor()), softmax(x, -1)));
  }
  // Real values: [0, -inf'd, 0] -> [1/2, 0, 1/2]; a fully masked line -> zeros.
  const Tensor m = tensor({0, 1, 0, 1, 1, 1}, {2, 3}, f32).to(boolean);
  const Tensor p = masked_softmax(tensor({0, 5, 0, 1, 2, 3}, {2, 3}, f32), m);
  CHECK(p.to_vector<float>() == std::vector<float>{0.5f, 0.0f, 0.5f, 0.0f, 0.0f, 0.0f});
}

TEST_CASE("masked_softmax names the op, the shapes and the dtype of a bad mask") {
  const Tensor x = randn({2, 3, 4});
  CHECK_THROWS_WITH_AS(masked_softmax(x, zeros({3, 5}, boolean)),
                       doctest::Contains("masked_softmax: shapes cannot be broadcast: (2, 3, 4) vs (3, 5)"),
                       ShapeError);
  CHECK_THROWS_WITH_AS(masked_softmax(x, zeros({3, 4}, f32)),
                       doctest::Contains("masked_softmax: mask must be bool"), DTypeError);
  CHECK_THROWS_WITH_AS(masked_softmax(scalar_tensor(1.0, f32), scalar_tensor(1.0, f32).to(boolean)),
                       doctest::Contains("masked_softmax: expected at least 1 dim"), ShapeError);
}
