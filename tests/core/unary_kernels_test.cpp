// The kernel room's f32 unary lines (core/cpu/kernels.h) on every Highway target this CPU runs: each within the
// accuracy its doc comment states, against the function in double, over sweeps of f32 values (both tails,
// denormal results and overflow included), at every line length 0..70 (every tail of a vector) without
// writing past the line, and at ±0, ±inf, NaN and large |x|.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <numbers>
#include <string>
#include <vector>

#include "core/cpu/kernels.h"
#include "targets.h"

using namespace tg;
using tg::test::for_each_target;

namespace {

using Line = void (*)(const float*, float*, int64_t);

// The f32 ulp at |v|: the denormal step below FLT_MIN.
double ulp_f32(double v) { return std::ldexp(1.0, std::max(std::ilogb(std::fabs(v)), -126) - 23); }

double phi_cdf(double x) { return 0.5 * std::erfc(-x / std::numbers::sqrt2); }
double x_phi_pdf(double x) { return x * std::exp(-0.5 * x * x) / std::sqrt(2 * std::numbers::pi); }
double gelu_tanh_u(double x) { return 0.7978845608028654 * (x + 0.044715 * x * x * x); }

// gelu'(x) on a line, with dy = 1.
void gelu_grad_f32(const float* x, float* y, int64_t n) {
  const std::vector<float> ones(size_t(n), 1.0f);
  cpu::gelu_backward_f32(ones.data(), x, y, n);
}

struct Kernel {
  const char* name;
  Line line;
  double (*ref)(double);
  double (*unit)(double x, double want);  // what the bound counts: an ulp of the result unless said otherwise
  double bound;                           // kernels.h's stated accuracy, in units
  double bound_without_fma;               // on targets without fused multiply-adds (SSE4, scalar)
  uint32_t max_bits;                      // the sweep runs over |x| up to this f32
};

double ulp_of_want(double, double want) { return ulp_f32(want); }

const Kernel kKernels[] = {
    {"exp", cpu::exp_f32, [](double x) { return std::exp(x); }, ulp_of_want, 1.0, 1.0, 0x42D00000u},  // 104
    {"tanh", cpu::tanh_f32, [](double x) { return std::tanh(x); }, ulp_of_want, 4.0, 4.0, 0x41200000u},  // 10
    {"sigmoid", cpu::sigmoid_f32, [](double x) { return 1 / (1 + std::exp(-x)); }, ulp_of_want, 3.0, 3.0, 0x42D00000u},
    // where σ(x) is denormal (x < -87.3), its rounding to the denormal step is multiplied by |x|
    {"silu", cpu::silu_f32, [](double x) { return x / (1 + std::exp(-x)); },
     [](double x, double want) { return std::max(ulp_f32(want), std::fabs(x) * 0x1p-149); }, 4.0, 4.0, 0x42D00000u},
    {"gelu", cpu::gelu_f32, [](double x) { return x * phi_cdf(x); }, ulp_of_want, 8.0, 8.0, 0x41800000u},  // 16
    // the formula's rounding of u is amplified by |2u| in e^(-2u) where u < 0
    {"gelu_tanh", cpu::gelu_tanh_f32, [](double x) { return x / (1 + std::exp(-2 * gelu_tanh_u(x))); },
     [](double x, double want) { return ulp_f32(want) * (gelu_tanh_u(x) < 0 ? 1 - 2 * gelu_tanh_u(x) : 1); }, 4.0,
     4.0, 0x41200000u},
    // in ulp of the larger of Φ(x) and |x|·φ(x), which cancel near x = -0.75
    {"gelu_backward", gelu_grad_f32, [](double x) { return phi_cdf(x) + x_phi_pdf(x); },
     [](double x, double) { return ulp_f32(std::max(phi_cdf(x), std::fabs(x_phi_pdf(x)))); }, 4.0, 5.0, 0x41800000u},
};

// The error of got against the kernel's reference at x, in its units; overflow must give inf.
double error_of(const Kernel& k, float x, float got) {
  const double want = k.ref(x);
  if (std::isinf(float(want))) return got == float(want) ? 0 : INFINITY;
  return std::fabs(got - want) / k.unit(x, want);
}

// Every `step`-th f32 from 0 up to the one with bits `max_bits`, and their negatives.
std::vector<float> sweep(uint32_t max_bits, uint32_t step) {
  std::vector<float> xs;
  for (uint32_t sign : {0u, 0x80000000u})
    for (uint32_t b = 0; b <= max_bits; b += step) xs.push_back(std::bit_cast<float>(b | sign));
  return xs;
}

}  // namespace

TEST_CASE("the f32 unary kernels are within their stated accuracy on every target, tails and denormals included") {
  for_each_target([](int64_t target) {
    const bool fma = target != HWY_SSE4 && target != HWY_SCALAR && target != HWY_EMU128;
    for (const Kernel& k : kKernels) {
      const std::vector<float> xs = sweep(k.max_bits, 997);
      std::vector<float> ys(xs.size());
      k.line(xs.data(), ys.data(), int64_t(xs.size()));
      double worst = 0;
      float at = 0;
      for (size_t i = 0; i < xs.size(); ++i)
        if (const double e = error_of(k, xs[i], ys[i]); !(e <= worst)) worst = e, at = xs[i];
      INFO(std::string(k.name), " worst at ", at);
      CHECK(worst <= (fma ? k.bound : k.bound_without_fma));
    }
  });
}

// Lines of every length to 70 (whole vectors and each tail of 16, 8, 4 lanes), written beside guard values that
// must stay; in place (y = x) too.
TEST_CASE("the f32 unary kernels handle every line length and write nothing past it") {
  for_each_target([](int64_t target) {
    const bool fma = target != HWY_SSE4 && target != HWY_SCALAR && target != HWY_EMU128;
    for (const Kernel& k : kKernels)
      for (int64_t n = 0; n <= 70; ++n) {
        std::vector<float> x(size_t(n) + 20, 0.25f), y(size_t(n) + 20, -7.0f);
        for (int64_t i = 0; i < n; ++i) x[size_t(i)] = float(std::sin(double(i + n)) * 6);
        k.line(x.data(), y.data(), n);
        double worst = 0;
        for (int64_t i = 0; i < n; ++i) worst = std::max(worst, error_of(k, x[size_t(i)], y[size_t(i)]));
        int64_t touched = 0;
        for (size_t i = size_t(n); i < y.size(); ++i) touched += y[i] != -7.0f;
        std::vector<float> in_place = x;
        k.line(in_place.data(), in_place.data(), n);
        INFO(std::string(k.name), " n = ", n);
        CHECK(worst <= (fma ? k.bound : k.bound_without_fma));
        CHECK(touched == 0);
        CHECK(std::equal(in_place.begin(), in_place.begin() + n, y.begin()));
        CHECK(std::equal(in_place.begin() + n, in_place.end(), x.begin() + n));
      }
  });
}

namespace {
struct Special {
  float x, want;      // want NaN: any NaN
  bool sign = true;  // a zero of want's sign
};
bool matches(float got, const Special& s) {
  if (std::isnan(s.want)) return std::isnan(got);
  return got == s.want && (!s.sign || std::signbit(got) == std::signbit(s.want));
}
}  // namespace

TEST_CASE("the f32 unary kernels at ±0, ±inf, NaN, overflow and underflow") {
  const float inf = INFINITY, nan = NAN, tiny = std::numeric_limits<float>::denorm_min();
  const std::pair<Line, std::vector<Special>> cases[] = {
      {cpu::exp_f32, {{0, 1}, {-0.0f, 1}, {inf, inf}, {-inf, 0}, {nan, nan}, {-nan, nan}, {88.8f, inf}, {89, inf},
                      {200, inf}, {1e30f, inf}, {-103.9f, tiny}, {-104, 0}, {-200, 0}, {-1e30f, 0}}},
      {cpu::tanh_f32, {{0, 0}, {-0.0f, -0.0f}, {inf, 1}, {-inf, -1}, {nan, nan}, {20, 1}, {-20, -1}, {1e30f, 1},
                       {1e-40f, 1e-40f}}},
      {cpu::sigmoid_f32, {{0, 0.5f}, {-0.0f, 0.5f}, {inf, 1}, {-inf, 0}, {nan, nan}, {1000, 1}, {-1000, 0}, {200, 1}}},
      {cpu::silu_f32, {{0, 0}, {-0.0f, -0.0f}, {inf, inf}, {-inf, -0.0f}, {nan, nan}, {1000, 1000}, {-1000, -0.0f},
                       {3e38f, 3e38f}}},
      {cpu::gelu_f32, {{0, 0}, {-0.0f, -0.0f}, {inf, inf}, {-inf, -0.0f}, {nan, nan}, {-nan, nan}, {-20, -0.0f},
                       {20, 20}, {1e30f, 1e30f}, {3e38f, 3e38f}}},
      {cpu::gelu_tanh_f32, {{0, 0}, {-0.0f, -0.0f}, {inf, inf}, {-inf, -0.0f}, {nan, nan}, {-20, -0.0f}, {20, 20},
                            {1e30f, 1e30f}, {-1e30f, -0.0f}}},
      {gelu_grad_f32, {{0, 0.5f}, {-0.0f, 0.5f}, {-20, 0, false}, {20, 1}, {inf, 1}, {-inf, 0}, {nan, nan}}},
  };
  for_each_target([&] {
    for (const auto& [line, specials] : cases)
      for (const Special& s : specials) {
        float got = 0;
        line(&s.x, &got, 1);
        CAPTURE(s.x);
        CAPTURE(got);
        CHECK(matches(got, s));
      }
  });
}

TEST_CASE("gelu_backward multiplies gelu' by dy") {
  for_each_target([] {
    const float dy[] = {2, -3, 0.5f, 0, INFINITY}, x[] = {0, 0, 1, 1, 1};
    float dx[5];
    cpu::gelu_backward_f32(dy, x, dx, 5);
    float g1 = 0;
    gelu_grad_f32(&x[2], &g1, 1);
    CHECK(dx[0] == 1.0f);
    CHECK(dx[1] == -1.5f);
    CHECK(dx[2] == 0.5f * g1);
    CHECK(dx[3] == 0.0f);
    CHECK(dx[4] == INFINITY);
  });
}
