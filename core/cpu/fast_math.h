#pragma once
// Internal to core's .cpp files: f32 building blocks written so that g++ -O3 vectorises the loops that call
// them (no libm call, no branch, no float reduction the compiler may not reorder). libm's expf is a call per
// element; softmax spends most of its time there.
#include <bit>
#include <cmath>
#include <cstdint>

namespace tg::cpu {

/// e^x in f32: Cody-Waite reduction x = n·ln2 + r, |r| ≤ ln2/2, a degree-6 polynomial for e^r (Cephes
/// expf's coefficients), and 2^n applied in two halves so that denormal results and n = 128 come out right.
/// Error at most 1 ulp against std::exp in double (0.99 ulp measured on [-110, 90] in steps of 1e-4),
/// denormal results within one denormal step; exp(-inf) = 0, exp(+inf) = inf, exp(NaN) = NaN
/// (tests/core/normalize_test.cpp).
inline float exp_f32(float x) {
  // n must fit the exponent trick: above 89, x is clamped to 89 (the result is inf); below -104 the result
  // is +0, set by a mask at the end while the arithmetic runs on x = 0, because a product that underflows
  // costs a microcode assist (~100 cycles on Intel cores) and softmax meets -inf at every masked key
  // (clamping to -104 made padded attention rows 7x slower). NaN is kept. On the bits, with masks: g++
  // (under the default -ftrapping-math) vectorises no loop in which a float comparison selects a value.
  uint32_t u = std::bit_cast<uint32_t>(x);
  const uint32_t low = -uint32_t(u > 0xC2D00000u && u <= 0xFF800000u);             // -inf <= x < -104
  const uint32_t high = -uint32_t(int32_t(u) > 0x42B20000 && u <= 0x7F800000u);    // 89 < x <= inf
  u = (u & ~(low | high)) | (high & 0x42B20000u);                                  // 0.0f, 89.0f
  x = std::bit_cast<float>(u);
  // Round x·log2(e) to the nearest integer by adding 1.5·2^23 (the low mantissa bits then hold n).
  constexpr float kShift = 12582912.0f;
  const float t = x * 1.44269504088896341f + kShift;
  const float n = t - kShift;
  const int32_t ni = int32_t(std::bit_cast<uint32_t>(t) - std::bit_cast<uint32_t>(kShift));
  const float r = (x - n * 0.693359375f) + n * 2.12194440e-4f;  // ln2 split in a short high and a low part
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const int32_t n1 = ni >> 1, n2 = ni - n1;  // each in [-75, 64]: 2^n1 and 2^n2 are normal floats
  const float s1 = std::bit_cast<float>(uint32_t(n1 + 127) << 23), s2 = std::bit_cast<float>(uint32_t(n2 + 127) << 23);
  return std::bit_cast<float>(std::bit_cast<uint32_t>(p * s1 * s2) & ~low);
}

// Exact gelu in f32. Both functions below use explicit fmas (std::fma: one rounding on every path, so that
// the AVX-512, AVX2+FMA and portable builds of their loops give the same bits under -ffp-contract=off; a
// CPU without FMA gets them from libm, correct but slow). No branch; the one division (of the rational) costs
// no time in the AVX-512 loop, which is bound by its ~33 multiply-adds (replacing it by a product: same speed).

/// The pieces of the normal distribution's left tail at a = min(|x|, 15) (beyond, a·φ(a) rounds to 0 in f32):
/// e^(-a²/2) = p·s·2^-64 and Φ(-a) = (p·r)·s, with s = 2^(n+64) a power of two and r = Φ(-a)·e^(a²/2)·2^-64
/// (Mills' ratio over √(2π), scaled so that p·r stays a normal float and the last product rounds once,
/// also into denormals). -a²/2 - n·ln2 is formed exactly with fmas (rounding a² first would cost up to 100
/// ulp at a = 14); e^r is a degree-6 polynomial (minimax, 2e-9) on |r| ≤ ln2/2; r is a (4, 5) rational in a,
/// the form of Cody's and Hart's erfc/Φ rationals, fitted minimax to Φ(-a)·e^(a²/2) on [0, 14.5] for f32
/// (relative error 1e-8 with these f32 coefficients; tools/fit_gelu.py computes all the constants). Left-tail
/// values keep their relative accuracy, where PyTorch's f32 0.5·x·(1 + erf(x/√2)) cancels to 0 below -5.7.
struct NormalTail {
  float a, p, r, s;
};
inline NormalTail normal_tail_f32(float x) {
  const uint32_t u = std::bit_cast<uint32_t>(x) & 0x7FFFFFFFu;
  const float a = std::bit_cast<float>(u < 0x41700000u ? u : 0x41700000u);  // min(|x|, 15); NaN and inf: 15
  // n = round(-a²/(2 ln2)) from a² rounded; the low bits of t hold n + 191, so t's bits << 23 are 2^(n+64).
  constexpr float kShift = 12582912.0f + 191.0f;  // 1.5·2^23 + 191
  const float t = std::fma(a * a, -0.72134752f, kShift);
  const float n = t - kShift;
  const float s = std::bit_cast<float>(std::bit_cast<uint32_t>(t) << 23);
  // rho = -a² - 2n·ln2 = 2r: 2·ln2 = 1.38629150390625 (16 bits, so n·that is exact) + 2.85721364e-6.
  const float rho = std::fma(n, -2.85721364e-6f, std::fma(-a, a, -(n * 1.38629150f)));
  float p = 2.163067802e-5f;  // e^(rho/2): coefficient k is the minimax one of r^k divided by 2^k
  p = std::fma(p, rho, 2.616928541e-4f);
  p = std::fma(p, rho, 2.604250098e-3f);
  p = std::fma(p, rho, 2.083303966e-2f);
  p = std::fma(p, rho, 1.249999851e-1f);
  p = std::fma(p, rho, 0.5f);
  p = std::fma(p, rho, 1.0f);
  constexpr float k = 5.42101086e-20f;  // 2^-64
  float num = 3.989469111e-1f * k;
  num = std::fma(num, a, 3.938210011e+0f * k);
  num = std::fma(num, a, 1.775957680e+1f * k);
  num = std::fma(num, a, 4.248104477e+1f * k);
  num = std::fma(num, a, 4.846231842e+1f * k);
  float den = a + 9.872253418e+0f;
  den = std::fma(den, a, 4.550214767e+1f);
  den = std::fma(den, a, 1.165504837e+2f);
  den = std::fma(den, a, 1.622967987e+2f);
  den = std::fma(den, a, 9.692463684e+1f);
  return {a, p, num / den, s};
}

/// 1 for x ≥ +0, 0 for x ≤ -0, from the sign bit (NaN too), so that x·step(x) keeps NaN of either sign.
inline float step_f32(float x) {
  return std::bit_cast<float>(~uint32_t(std::bit_cast<int32_t>(x) >> 31) & 0x3F800000u);
}

/// gelu(x) = x·Φ(x) in f32, as x·step(x) - |x|·Φ(-|x|) with one rounding: within 8 ulp of x·Φ(x) in double
/// (7.11 at worst over every f32 in [-16, 16]), where below FLT_MIN (x from about -13.1 to -14.1) an ulp is the
/// denormal step.
/// gelu(±0) = ±0, gelu(inf) = inf, gelu(-inf) = NaN (as PyTorch's), gelu(NaN) = NaN.
inline float gelu_f32(float x) {
  const NormalTail t = normal_tail_f32(x);
  return std::fma(-(t.p * t.r), t.a * t.s, x * step_f32(x));
}

/// gelu'(x) = Φ(x) + x·φ(x) in f32: D = Φ(-a) - a·φ(a) for x < 0 and 1 - D for x ≥ 0, within 4 ulp of the
/// larger of Φ(x) and |x|·φ(x) (3.74 at worst; D crosses 0 at x ≈ -0.75). NaN for NaN and ±inf, as PyTorch's.
inline float gelu_grad_f32(float x) {
  const NormalTail t = normal_tail_f32(x);
  const float d = (t.p * std::fma(t.a, -2.16267054e-20f, t.r)) * t.s;  // 2^-64/√(2π): φ(a) = p·s·that
  const uint32_t negative = uint32_t(std::bit_cast<int32_t>(x) >> 31);
  const float g = std::bit_cast<float>((std::bit_cast<uint32_t>(1.0f - d) & ~negative) |
                                       (std::bit_cast<uint32_t>(d) & negative));
  return std::fma(x, 0.0f, g);  // + x·0: NaN for NaN and ±inf
}

/// tanh in f32: for |x| < 0.5493 (where e^(-2|x|) = 1/3) x + x³·P(x²), P of degree 4 fitted minimax for f32
/// (relative error 2.6e-9); above, (1 - e)/(1 + e) with e = exp_f32(-2|x|), which no longer cancels; the sign
/// is x's. Within 3 ulp of tanh in double; tanh(±inf) = ±1, tanh(NaN) = NaN. No fma, no branch.
inline float tanh_f32(float x) {
  const uint32_t u = std::bit_cast<uint32_t>(x) & 0x7FFFFFFFu;
  const float a = std::bit_cast<float>(u), z = a * a;
  float p = -6.129085552e-3f;
  p = p * z + 2.096994221e-2f;
  p = p * z - 5.382796377e-2f;
  p = p * z + 1.333235502e-1f;
  p = p * z - 3.333331048e-1f;
  const float small = a + a * z * p;
  const float e = exp_f32(-2.0f * a);
  const float large = (1.0f - e) / (1.0f + e);
  const uint32_t use_small = -uint32_t(u < 0x3F0C9F54u);  // atanh(1/2) = 0.5493
  const uint32_t r = (std::bit_cast<uint32_t>(small) & use_small) | (std::bit_cast<uint32_t>(large) & ~use_small);
  return std::bit_cast<float>(r | (std::bit_cast<uint32_t>(x) & 0x80000000u));
}

/// gelu's tanh form in f32, 0.5x(1 + tanh u) with u = √(2/π)(x + 0.044715x³), written x/(1 + e^(-2u)) so
/// that the left tail keeps its relative accuracy (1 + tanh u cancels to 0 in f32 below x ≈ -4.5): within
/// 4·(1 + 2|u|) ulp of that formula in double for u < 0 (the rounding of u is amplified by the exp), 4 ulp
/// for u ≥ 0. No fma: the same bits on every path under -ffp-contract=off. gelu(-inf) = NaN, as PyTorch's.
inline float gelu_tanh_f32(float x) {
  const float u = 0.797884561f * (x + 0.044715f * x * x * x);
  return x / (1.0f + exp_f32(-2.0f * u));
}

}  // namespace tg::cpu
