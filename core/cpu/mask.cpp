// The packed-mask lanes (kernels.h, "packed masks"), f32 and f64, on Highway. A vector of N lanes starting at
// element i takes its bits from the word of i at bit i % 64 (N divides 64, and every line starts on a word),
// as a Highway mask through LoadMaskBits, and gives comparisons back through StoreMaskBits. Every lane does
// the one IEEE operation of the scalar definitions (a product, a comparison, a selection), so each target
// gives their bits. Whole vectors are loaded and stored plain; only the last partial one goes through
// tail-inl.h's LoadTail and StoreTail (masked loads from memory stopped the hardware prefetcher on AMD Zen 5).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "core/cpu/mask.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <bit>

#include "core/cpu/kernels.h"
#include "core/cpu/tail-inl.h"

HWY_BEFORE_NAMESPACE();
namespace tg::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Mask bits are read and written as the bytes of the packed words.
static_assert(std::endian::native == std::endian::little, "packed masks assume little-endian words");

// The mask of the lanes of the vector at element i: bits i % 64 and up of word i / 64.
template <class D>
HWY_INLINE auto BitsAt(D d, const uint64_t* bits, int64_t i) {
  const uint64_t word = bits[i / 64] >> (i % 64);
  return hn::LoadMaskBits(d, reinterpret_cast<const uint8_t*>(&word));
}

// The mask m as bits 0..N-1 of a word.
template <class D, class M>
HWY_INLINE uint64_t WordOf(D d, M m) {
  uint64_t word = 0;
  hn::StoreMaskBits(d, m, reinterpret_cast<uint8_t*>(&word));
  return word;
}

// LoadU kept a plain load: on AVX-512 the compiler folds a load into the zero-masked operation that uses it
// (IfThenElseZero(m, x·s) as one masked multiply from memory), a masked load again. The empty asm hides the
// loaded value from it.
template <class D, class T>
HWY_INLINE hn::Vec<D> LoadPlain(D d, const T* p) {
  auto v = hn::LoadU(d, p);
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  __asm__("" : "+v"(v.raw));
#endif
  return v;
}

// out[i, i + N) = f(i, x[i, i + N), valid) over [0, n): whole vectors in place (valid = N), then the last
// n - i < N elements, zeros past them, through LoadTail and StoreTail (valid = n - i).
template <class D, class T, class F>
HWY_INLINE void MapLanes(D d, const T* x, T* out, int64_t n, F f) {
  const int64_t N = int64_t(hn::Lanes(d));
  int64_t i = 0;
  for (; i + N <= n; i += N) hn::StoreU(f(i, LoadPlain(d, x + i), N), d, out + i);
  if (i == n) return;
  const size_t left = size_t(n - i);
  StoreTail(f(i, LoadTail(d, x + i, left), int64_t(left)), d, out + i, left);
}

template <class T>
void MaskMultiply(const uint64_t* bits, const T* x, T scale, T* out, int64_t n) {
  const hn::ScalableTag<T> d;
  const auto s = hn::Set(d, scale);
  MapLanes(d, x, out, n, [&](int64_t i, auto v, int64_t) HWY_ATTR {
    return hn::Mul(v, hn::IfThenElseZero(BitsAt(d, bits, i), s));
  });
}

template <class T>
void MaskSelect(const uint64_t* bits, const T* x, T scale, T* out, int64_t n) {
  const hn::ScalableTag<T> d;
  const auto s = hn::Set(d, scale);
  MapLanes(d, x, out, n, [&](int64_t i, auto v, int64_t) HWY_ATTR {
    return hn::IfThenElseZero(BitsAt(d, bits, i), hn::Mul(v, s));
  });
}

template <class T>
void ReluMaskMultiply(uint64_t* bits, const T* x, T scale, T* out, int64_t n) {
  const hn::ScalableTag<T> d;
  const auto s = hn::Set(d, scale), zero = hn::Zero(d);
  MapLanes(d, x, out, n, [&](int64_t i, auto v, int64_t valid) HWY_ATTR {
    const auto r = hn::IfThenZeroElse(hn::Le(v, zero), v);  // !(v <= 0) ? v : +0, so NaN stays
    const auto y = hn::Mul(r, hn::IfThenElseZero(BitsAt(d, bits, i), s));
    const uint64_t off = WordOf(d, hn::AndNot(hn::Gt(r, zero), hn::FirstN(d, size_t(valid))));
    bits[i / 64] &= ~(off << (i % 64));
    return y;
  });
}

// Bit j = x[j] > 0 for j in [0, count), count <= 64; the lanes of a last partial vector come from a copy.
template <class D, class T>
HWY_INLINE uint64_t PositiveBits(D d, const T* x, int64_t count) {
  const int64_t N = int64_t(hn::Lanes(d));
  uint64_t word = 0;
  for (int64_t j = 0; j < count; j += N) {
    // The last vector's lanes past count are 0, not > 0.
    const auto v = j + N <= count ? hn::LoadU(d, x + j) : LoadTail(d, x + j, size_t(count - j));
    word |= WordOf(d, hn::Gt(v, hn::Zero(d))) << j;
  }
  return word;
}

template <class T>
void PackPositive(const T* x, uint64_t* words, int64_t n) {
  const hn::ScalableTag<T> d;
  int64_t k = 0;
  for (; (k + 1) * 64 <= n; ++k) words[k] = PositiveBits(d, x + k * 64, 64);
  if (k * 64 < n) words[k] = PositiveBits(d, x + k * 64, n - k * 64);
}

void MaskMultiplyF32(const uint64_t* b, const float* x, float s, float* o, int64_t n) { MaskMultiply(b, x, s, o, n); }
void MaskMultiplyF64(const uint64_t* b, const double* x, double s, double* o, int64_t n) {
  MaskMultiply(b, x, s, o, n);
}
void MaskSelectF32(const uint64_t* b, const float* x, float s, float* o, int64_t n) { MaskSelect(b, x, s, o, n); }
void MaskSelectF64(const uint64_t* b, const double* x, double s, double* o, int64_t n) { MaskSelect(b, x, s, o, n); }
void ReluMaskMultiplyF32(uint64_t* b, const float* x, float s, float* o, int64_t n) { ReluMaskMultiply(b, x, s, o, n); }
void ReluMaskMultiplyF64(uint64_t* b, const double* x, double s, double* o, int64_t n) {
  ReluMaskMultiply(b, x, s, o, n);
}
void PackPositiveF32(const float* x, uint64_t* w, int64_t n) { PackPositive(x, w, n); }
void PackPositiveF64(const double* x, uint64_t* w, int64_t n) { PackPositive(x, w, n); }

}  // namespace tg::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tg::cpu {

HWY_EXPORT(MaskMultiplyF32);
HWY_EXPORT(MaskMultiplyF64);
HWY_EXPORT(MaskSelectF32);
HWY_EXPORT(MaskSelectF64);
HWY_EXPORT(ReluMaskMultiplyF32);
HWY_EXPORT(ReluMaskMultiplyF64);
HWY_EXPORT(PackPositiveF32);
HWY_EXPORT(PackPositiveF64);

void mask_multiply(const uint64_t* bits, const float* x, float scale, float* out, int64_t n) {
  HWY_DYNAMIC_DISPATCH(MaskMultiplyF32)(bits, x, scale, out, n);
}
void mask_multiply(const uint64_t* bits, const double* x, double scale, double* out, int64_t n) {
  HWY_DYNAMIC_DISPATCH(MaskMultiplyF64)(bits, x, scale, out, n);
}
void mask_select(const uint64_t* bits, const float* x, float scale, float* out, int64_t n) {
  HWY_DYNAMIC_DISPATCH(MaskSelectF32)(bits, x, scale, out, n);
}
void mask_select(const uint64_t* bits, const double* x, double scale, double* out, int64_t n) {
  HWY_DYNAMIC_DISPATCH(MaskSelectF64)(bits, x, scale, out, n);
}
void relu_mask_multiply(uint64_t* bits, const float* x, float scale, float* out, int64_t n) {
  HWY_DYNAMIC_DISPATCH(ReluMaskMultiplyF32)(bits, x, scale, out, n);
}
void relu_mask_multiply(uint64_t* bits, const double* x, double scale, double* out, int64_t n) {
  HWY_DYNAMIC_DISPATCH(ReluMaskMultiplyF64)(bits, x, scale, out, n);
}
void pack_positive(const float* x, uint64_t* words, int64_t n) { HWY_DYNAMIC_DISPATCH(PackPositiveF32)(x, words, n); }
void pack_positive(const double* x, uint64_t* words, int64_t n) { HWY_DYNAMIC_DISPATCH(PackPositiveF64)(x, words, n); }

}  // namespace tg::cpu
#endif  // HWY_ONCE
