#pragma once
// Internal to core's .cpp files: f32 building blocks written so that g++ -O3 vectorises the loops that call
// them (no libm call, no branch, no float reduction the compiler may not reorder). libm's expf is a call per
// element; softmax spends most of its time there.
#include <bit>
#include <cstdint>

namespace tg::detail {

/// e^x in f32: Cody-Waite reduction x = n·ln2 + r, |r| ≤ ln2/2, a degree-6 polynomial for e^r (Cephes
/// expf's coefficients), and 2^n applied in two halves so that denormal results and n = 128 come out right.
/// Error at most 1 ulp against std::exp in double (0.99 ulp measured on [-110, 90] in steps of 1e-4),
/// denormal results within one denormal step; exp(-inf) = 0, exp(+inf) = inf, exp(NaN) = NaN
/// (tests/core/normalize_test.cpp).
inline float exp_f32(float x) {
  // Clamped to [-104, 89] so that n fits the exponent trick (below, the result is 0; above, inf), NaN kept.
  // On the bits, with masks: g++ (under the default -ftrapping-math) vectorises no loop in which a float
  // comparison selects a value.
  uint32_t u = std::bit_cast<uint32_t>(x);
  const uint32_t low = -uint32_t(u > 0xC2D00000u && u <= 0xFF800000u);             // -inf <= x < -104
  const uint32_t high = -uint32_t(int32_t(u) > 0x42B20000 && u <= 0x7F800000u);    // 89 < x <= inf
  u = (u & ~(low | high)) | (low & 0xC2D00000u) | (high & 0x42B20000u);            // -104.0f, 89.0f
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
  return p * s1 * s2;
}

/// Φ(x), the standard normal CDF, in f32: Φ(-a) = ½·erfc(a/√2) for a = |x|, with erfc(z) =
/// t·exp(-z² - 1.26551223 + t·P(t)), t = 1/(1 + z/2) (Press et al., Numerical Recipes, 2nd ed., §6.2:
/// fractional error below 1.2e-7 for every z ≥ 0), and Φ(a) = 1 - Φ(-a). The exponent's a²/2 is split into an
/// exact a_hi²/2 and a small remainder, each through its own exp_f32: rounding a² (or a/√2) would cost up to
/// 270 ulp in the left tail. At most 7 ulp from Φ in double wherever Φ is a normal float (6.5 measured on
/// [-13, 10]); accurate relative to Φ itself also in the left tail, where PyTorch's 1 + erf(x/√2) cancels to
/// 0 in f32 below x ≈ -5.7. Φ(-inf) = 0, Φ(inf) = 1, Φ(NaN) = NaN. No branch: loops calling it vectorise.
inline float normal_cdf_f32(float x) {
  // a = min(|x|, 20) on the bits, NaN kept (Φ(-20) ≈ 3e-89 is 0 in f32 already; this keeps a_lo finite).
  uint32_t u = std::bit_cast<uint32_t>(x) & 0x7FFFFFFFu;
  const uint32_t big = -uint32_t(u > 0x41A00000u && u <= 0x7F800000u);  // 20 < |x| <= inf
  const float a = std::bit_cast<float>((u & ~big) | (big & 0x41A00000u));
  const float t = 1.0f / (1.0f + 0.5f * 0.707106781186547524f * a);
  float p = 0.17087277f;
  p = p * t - 0.82215223f;
  p = p * t + 1.48851587f;
  p = p * t - 1.13520398f;
  p = p * t + 0.27886807f;
  p = p * t - 0.18628806f;
  p = p * t + 0.09678418f;
  p = p * t + 0.37409196f;
  p = p * t + 1.00002368f;
  p = p * t - 1.26551223f;
  const float a_hi = std::bit_cast<float>(std::bit_cast<uint32_t>(a) & 0xFFFFF000u), a_lo = a - a_hi;  // a_hi² exact
  const float tail = 0.5f * t * exp_f32(-0.5f * a_hi * a_hi) * exp_f32(p - 0.5f * a_lo * (a + a_hi));  // Φ(-a)
  const float positive = float(int32_t(1 - (std::bit_cast<uint32_t>(x) >> 31)));  // 1 for x ≥ +0, else 0
  return tail + positive * (1.0f - 2.0f * tail);
}

}  // namespace tg::detail
