#pragma once
// Internal to core/normalize.cpp's portable softmax lines (until they move to Highway): a scalar f32 exp written
// so that g++ -O3 vectorises the loops that call it (no libm call, no branch). libm's expf is a call per
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

}  // namespace tg::cpu
