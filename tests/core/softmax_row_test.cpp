// The AVX-512 softmax and log_softmax lines against the portable ones, bit for bit, and masked_softmax against the
// masked_fill + softmax it replaces in attention: every published result was computed by the portable lines
// and the two ops, so these must not move a bit.
#include <doctest/doctest.h>

#include <cmath>
#include <algorithm>
#include <random>
#include <vector>

#include "core/cpu/kernels.h"
#include "core/error.h"
#include "core/ops.h"
#include "core/random.h"
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
  if (specials && gen() % 7 == 0) x[gen() % n] = INFINITY;
  if (specials && gen() % 9 == 0) x[gen() % n] = NAN;
  return x;
}

bool same_bits(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape() || a.dtype() != b.dtype()) return false;
  return a.dtype() == f32 ? test::same_bits(a.to_vector<float>(), b.to_vector<float>())
                          : test::same_bits(a.to_vector<double>(), b.to_vector<double>());
}

}  // namespace

TEST_CASE("the AVX-512 softmax lines give the portable lines' bits") {
  std::vector<float> probe(1, 0.0f);
  if (!cpu::softmax_f32_avx512(probe.data(), probe.data(), 1)) {
    MESSAGE("no AVX-512 on this CPU: the portable lines run, nothing to compare");
    return;
  }
  std::mt19937 gen(3);
  for (int64_t n = 1; n <= 200; ++n)
    for (int round = 0; round < 20; ++round) {
      CAPTURE(n);
      CAPTURE(round);
      const std::vector<float> x = line(gen, n, round % 2 == 1), g = line(gen, n, false);
      std::vector<float> want(static_cast<size_t>(n)), got(static_cast<size_t>(n), 9.0f);
      cpu::softmax_f32_portable(x.data(), want.data(), n);
      if (!cpu::softmax_f32_avx512(x.data(), got.data(), n)) {  // max -inf: the portable line's zeros run
        CHECK(std::all_of(x.begin(), x.end(), [](float v) { return v == -INFINITY || std::isnan(v); }));
        continue;
      }
      CHECK(same_bits(want, got));
      std::vector<float> dwant(static_cast<size_t>(n)), dgot(static_cast<size_t>(n));
      cpu::softmax_backward_f32_portable(g.data(), want.data(), dwant.data(), n);
      REQUIRE(cpu::softmax_backward_f32_avx512(g.data(), want.data(), dgot.data(), n));
      CHECK(same_bits(dwant, dgot));
    }
  // In place, as masked_softmax runs it.
  std::vector<float> x = line(gen, 37, true), want(37);
  x[0] = 1.0f;
  cpu::softmax_f32_portable(x.data(), want.data(), 37);
  REQUIRE(cpu::softmax_f32_avx512(x.data(), x.data(), 37));
  CHECK(same_bits(want, x));
}

TEST_CASE("the AVX-512 log_softmax line gives the portable line's bits, also in place") {
  std::vector<float> probe(1, 0.0f);
  if (!cpu::log_softmax_f32_avx512(probe.data(), probe.data(), 1)) {
    MESSAGE("no AVX-512 on this CPU: the portable line runs, nothing to compare");
    return;
  }
  std::mt19937 gen(5);
  for (int64_t n = 1; n <= 200; ++n)
    for (int round = 0; round < 20; ++round) {
      CAPTURE(n);
      CAPTURE(round);
      std::vector<float> x = line(gen, n, round % 2 == 1), want(static_cast<size_t>(n)), got(want.size(), 9.0f);
      cpu::log_softmax_f32_portable(x.data(), want.data(), n);
      if (!cpu::log_softmax_f32_avx512(x.data(), got.data(), n)) {  // max ±inf or all NaN: the portable line
        const bool finite_max = std::any_of(x.begin(), x.end(), [](float v) { return std::isfinite(v); }) &&
                                std::count(x.begin(), x.end(), INFINITY) == 0;
        CHECK_FALSE(finite_max);
        CHECK(got == std::vector<float>(want.size(), 9.0f));  // nothing written
        continue;
      }
      CHECK(same_bits(want, got));
      REQUIRE(cpu::log_softmax_f32_avx512(x.data(), x.data(), n));
      CHECK(same_bits(want, x));
    }
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
