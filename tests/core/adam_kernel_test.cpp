// Adam's f32 kernel (core/cpu/adam.cpp) on every Highway target against its scalar definition (optim/adam.cpp,
// written out here as torch 1.13's op-by-op roundings), bit for bit: every length to 70 and a long one, each
// decay and amsgrad, with gradients of 0, ±inf, NaN and squares past f32's range.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <random>
#include <vector>

#include "core/cpu/kernels.h"
#include "targets.h"

namespace {

struct State {
  std::vector<float> p, g, m, v, v_max;
};

State reference(State s, const tg::cpu::AdamScalars& a) {
  const float b1 = float(a.beta1), b2 = float(a.beta2), shrink = float(1 - a.lr * a.weight_decay),
              sbc2 = float(a.sqrt_bias_correction2), eps = float(a.eps);
  for (size_t i = 0; i < s.p.size(); ++i) {
    float gi = s.g[i];
    if (a.decoupled) s.p[i] = s.p[i] * shrink;
    else if (a.weight_decay != 0) gi = float(gi + a.weight_decay * s.p[i]);
    s.m[i] = float(s.m[i] * b1 + (1 - a.beta1) * gi);
    s.v[i] = float(float(s.v[i] * b2) + (1 - a.beta2) * gi * gi);
    float v_used = s.v[i];
    if (a.amsgrad) v_used = s.v_max[i] = s.v_max[i] < s.v[i] ? s.v[i] : s.v_max[i];
    const float denom = float(std::sqrt(v_used) / sbc2) + eps;
    s.p[i] = float(s.p[i] + -a.step_size * s.m[i] / denom);
  }
  return s;
}

State random_state(int64_t n, std::mt19937& gen) {
  std::normal_distribution<float> normal;
  const float inf = std::numeric_limits<float>::infinity();
  const float specials[] = {0.0f, -0.0f, inf, -inf, std::numeric_limits<float>::quiet_NaN(), 3e30f, -1e25f};
  State s;
  for (int64_t i = 0; i < n; ++i) {
    s.p.push_back(normal(gen));
    s.g.push_back(gen() % 9 == 0 ? specials[gen() % std::size(specials)] : normal(gen) * 1e-2f);
    s.m.push_back(normal(gen) * 1e-2f);
    s.v.push_back(std::abs(normal(gen)) * 1e-4f);
    s.v_max.push_back(std::abs(normal(gen)) * 1e-4f);
  }
  return s;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

}  // namespace

TEST_CASE("adam_f32 gives the scalar definition's bits on every target, length, decay and amsgrad") {
  std::mt19937 gen(3);
  std::vector<int64_t> lengths;
  for (int64_t n = 0; n <= 70; ++n) lengths.push_back(n);
  lengths.push_back(1000 + 13);
  for (const bool decoupled : {false, true})
    for (const double weight_decay : {0.0, 0.01})
      for (const bool amsgrad : {false, true})
        for (const int64_t n : lengths) {
          CAPTURE(decoupled);
          CAPTURE(weight_decay);
          CAPTURE(amsgrad);
          CAPTURE(n);
          const double t = 3, beta1 = 0.9, beta2 = 0.999, lr = 1e-3;
          const tg::cpu::AdamScalars a{beta1, beta2, lr, weight_decay, 1e-8, lr / (1 - std::pow(beta1, t)),
                                       std::sqrt(1 - std::pow(beta2, t)), decoupled, amsgrad};
          const State start = random_state(n, gen), want = reference(start, a);
          tg::test::for_each_target([&] {
            State s = start;
            tg::cpu::adam_f32(s.p.data(), s.g.data(), s.m.data(), s.v.data(), amsgrad ? s.v_max.data() : nullptr, n, a);
            CHECK(same_bits(s.p, want.p));
            CHECK(same_bits(s.m, want.m));
            CHECK(same_bits(s.v, want.v));
            CHECK(same_bits(s.v_max, want.v_max));
          });
        }
}
