// Packed masks: one bit per element, 64 to an i64 word, in row-major order. Dropout and relu keep these
// for their backward instead of a float mask or their output, a 32nd of the memory in f32: in a training
// step of the encoder the f32 dropout masks alone were about a fifth of what the graph held.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <numeric>
#include <type_traits>

#include "core/cpu/avx512.h"
#include "core/cpu/kernels.h"
#include "core/kernel_util.h"
#include "core/ops.h"
#include "core/random.h"

namespace tg {
namespace {

int64_t words_for(int64_t n) { return (n + 63) / 64; }

const uint64_t* words(const Tensor& bits) { return reinterpret_cast<const uint64_t*>(bits.data<int64_t>()); }

void check_bits(const Tensor& bits, int64_t n, const char* op) {
  check<ShapeError>(bits.dtype() == i64 && bits.dim() == 1 && bits.is_contiguous() && bits.numel() == words_for(n),
                    "{}: packed mask {} {} does not hold {} elements", op, bits.shape(), bits.dtype(), n);
}

// Unsigned integers as wide as T, and the single-bit masks 1 << j for each lane j: testing `bits & kBit[j]`
// against a table (not a shift by the lane index, which SSE2 has no instruction for) lets the compiler
// vectorise the expansion of bits into a selection of T.
template <class T>
using Lanes = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
template <class U>
constexpr std::array<U, sizeof(U) * 8> single_bits() {
  std::array<U, sizeof(U) * 8> b{};
  for (size_t j = 0; j < b.size(); ++j) b[j] = U(1) << j;
  return b;
}

// The f32 loops below on 16 lanes of AVX-512, where a mask register is 16 bits of the packed words as they
// are: the portable loops expand bits through a table on 4 lanes of SSE, and masked_scale, dropout and
// pack_positive were 9 % of a training step (bench_step S, perf). The same IEEE operations per element, so
// the same bits: x·(bit ? scale : +0) when propagating, else x·scale or +0 (a zeroing mask writes +0, the
// portable loop's cleared bits); x > 0 is an ordered comparison (NaN gives 0) in both.

template <bool propagate>
[[gnu::target("avx512f")]] void select_scaled_f32_avx512(const uint64_t* bits, const float* x, float scale,
                                                         float* out, int64_t n) {
  const __m512 s = _mm512_set1_ps(scale);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 lanes = cpu::tail_mask(n - i), bit = __mmask16(bits[i / 64] >> (i % 64));
    const __m512 v = cpu::load16(x + i, lanes, _mm512_setzero_ps());
    const __m512 y = propagate ? _mm512_mul_ps(v, _mm512_maskz_mov_ps(bit, s)) : _mm512_maskz_mul_ps(bit, v, s);
    // dropout_softmax_backward reads each line right after this writes it: from the store, as it is plain.
    cpu::store16(out + i, lanes, y);
  }
}

// dropout(relu(x)): out[i] = relu(x[i])·(bit ? scale : +0), as relu then select_scaled<true>, and the bit
// cleared where relu(x[i]) > 0 is not (NaN: relu keeps it, and it is not > 0).
[[gnu::target("avx512f")]] void relu_select_f32_avx512(uint64_t* bits, const float* x, float scale, float* out,
                                                       int64_t n) {
  const __m512 s = _mm512_set1_ps(scale), zero = _mm512_setzero_ps();
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 lanes = cpu::tail_mask(n - i), bit = __mmask16(bits[i / 64] >> (i % 64));
    const __m512 v = cpu::load16(x + i, lanes, _mm512_setzero_ps());
    const __m512 r = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(v, zero, _CMP_NLE_UQ), v);  // !(v <= 0) ? v : +0
    const __m512 y = _mm512_mul_ps(r, _mm512_maskz_mov_ps(bit, s));
    cpu::store16(out + i, lanes, y);
    const __mmask16 off = lanes & ~_mm512_cmp_ps_mask(r, zero, _CMP_GT_OQ);
    bits[i / 64] &= ~(uint64_t(off) << (i % 64));
  }
}

// The two loops above on 8 lanes of AVX2 (a CPU without AVX-512), whole vectors only: they return where they
// stopped, and the portable loops below finish. A lane's bit becomes a lane mask through a compare with
// the single-bit table. The same IEEE operations per element as the other paths, so the same bits.
[[gnu::target("avx2")]] inline __m256 bit_lanes(uint64_t word) {
  const __m256i single = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
  return _mm256_castsi256_ps(
      _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32(int(word & 0xff)), single), single));
}

template <bool propagate>
[[gnu::target("avx2")]] int64_t select_scaled_f32_avx2(const uint64_t* bits, const float* x, float scale, float* out,
                                                       int64_t n) {
  const __m256 s = _mm256_set1_ps(scale);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 keep = bit_lanes(bits[i / 64] >> (i % 64)), v = _mm256_loadu_ps(x + i);
    _mm256_storeu_ps(out + i, propagate ? _mm256_mul_ps(v, _mm256_and_ps(keep, s))
                                        : _mm256_and_ps(keep, _mm256_mul_ps(v, s)));
  }
  return i;
}

[[gnu::target("avx2")]] int64_t relu_select_f32_avx2(uint64_t* bits, const float* x, float scale, float* out,
                                                     int64_t n) {
  const __m256 s = _mm256_set1_ps(scale), zero = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    const __m256 r = _mm256_and_ps(_mm256_cmp_ps(v, zero, _CMP_NLE_UQ), v);  // !(v <= 0) ? v : +0
    _mm256_storeu_ps(out + i, _mm256_mul_ps(r, _mm256_and_ps(bit_lanes(bits[i / 64] >> (i % 64)), s)));
    const uint64_t off = uint64_t(~_mm256_movemask_ps(_mm256_cmp_ps(r, zero, _CMP_GT_OQ)) & 0xff);
    bits[i / 64] &= ~(off << (i % 64));
  }
  return i;
}

template <class T>
void relu_select(uint64_t* bits, const T* x, T scale, T* out, int64_t n) {
  int64_t i = 0;
  if constexpr (std::is_same_v<T, float>) {
    if (__builtin_cpu_supports("avx512f")) return relu_select_f32_avx512(bits, x, scale, out, n);
    if (__builtin_cpu_supports("avx2")) i = relu_select_f32_avx2(bits, x, scale, out, n);
  }
  for (; i < n; ++i) {
    const T r = !(x[i] <= 0) ? x[i] : T(0);
    out[i] = r * (((bits[i / 64] >> (i % 64)) & 1) ? scale : T(0));
    if (!(r > 0)) bits[i / 64] &= ~(uint64_t(1) << (i % 64));
  }
}

// Word k holds x[64k + j] > 0 at bit j; the lanes past n read as 0, which is not > 0.
[[gnu::target("avx512f")]] void pack_positive_f32_avx512(const float* x, uint64_t* words, int64_t n) {
  for (int64_t k = 0; k * 64 < n; ++k) {
    uint64_t word = 0;
    for (int q = 0; q < 4 && k * 64 + q * 16 < n; ++q) {
      const int64_t at = k * 64 + q * 16;
      const __m512 v = cpu::load16(x + at, cpu::tail_mask(n - at), _mm512_setzero_ps());
      word |= uint64_t(_mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_GT_OQ)) << (16 * q);
    }
    words[k] = word;
  }
}

// For i in [0, n) with bit i of the packed words: out[i] = x[i]·(bit ? scale : 0) when `propagate` (a NaN or
// inf in x stays one, as in x·mask), else bit ? x[i]·scale : 0 exactly (a bitwise and, as relu's gradient).
template <bool propagate, class T>
void select_scaled(const uint64_t* bits, const T* x, T scale, T* out, int64_t n) {
  int64_t i = 0;
  if constexpr (std::is_same_v<T, float>) {
    if (__builtin_cpu_supports("avx512f")) return select_scaled_f32_avx512<propagate>(bits, x, scale, out, n);
    if (__builtin_cpu_supports("avx2")) i = select_scaled_f32_avx2<propagate>(bits, x, scale, out, n);
  }
  using U = Lanes<T>;
  constexpr int64_t kWidth = sizeof(U) * 8;
  static constexpr std::array<U, kWidth> kBit = single_bits<U>();
  auto one = [&](int64_t i, bool bit) {
    if constexpr (propagate) {
      out[i] = x[i] * (bit ? scale : T(0));
    } else {
      const T v = x[i] * scale;
      U b;
      std::memcpy(&b, &v, sizeof b);
      b &= U(0) - U(bit);
      std::memcpy(&out[i], &b, sizeof b);
    }
  };
  for (; i + kWidth <= n; i += kWidth) {
    const U w = U(bits[i / 64] >> (i % 64));
    for (int64_t j = 0; j < kWidth; ++j) one(i + j, (w & kBit[j]) != 0);
  }
  for (; i < n; ++i) one(i, (bits[i / 64] >> (i % 64)) & 1);
}

// dropout(x), or with `relu` dropout(relu(x)) with the bits of relu(x) > 0 cleared in keep.
DropoutResult dropout_of(const Tensor& x, double p, Generator* gen, bool relu, const char* op) {
  check<ValueError>(p >= 0 && p <= 1, "{}: probability must be in [0, 1], got {}", op, p);
  detail::check_defined(x, op);
  Generator& g = gen ? *gen : default_generator();
  const Tensor xc = x.contiguous();
  const int64_t n = xc.numel();
  Tensor keep = empty({words_for(n)}, i64);
  Tensor y = empty(x.shape(), x.dtype());
  // The stream bernoulli(shape, 1 - p) draws: one next() per element in row-major order, kept when below
  // (1-p)·2^64. At p = 0 and p = 1 nothing is drawn (all kept, all dropped).
  const uint64_t threshold = p > 0 ? uint64_t(std::ldexp(1 - p, 64)) : 0;
  uint64_t* kw = reinterpret_cast<uint64_t*>(keep.data<int64_t>());
  if (p > 0 && p < 1) {
    g.bits_below(threshold, kw, n);
  } else {
    for (int64_t k = 0; k < keep.numel(); ++k) {
      const int64_t end = std::min<int64_t>(64, n - k * 64);
      kw[k] = p == 1 ? 0 : end == 64 ? ~uint64_t(0) : (uint64_t(1) << end) - 1;
    }
  }
  double scale_used = 0;
  detail::dispatch_float(x.dtype(), op, [&](auto z) {
    using T = decltype(z);
    // The rounding of x·(m / (1-p)) in T, as the float mask this replaces had it.
    const T scale = p < 1 ? T(1) / T(1 - p) : T(0);
    if (relu) relu_select<T>(kw, xc.data<T>(), scale, y.data<T>(), n);
    else select_scaled<true, T>(kw, xc.data<T>(), scale, y.data<T>(), n);
    scale_used = double(scale);
  });
  return {y, keep, scale_used};
}

}  // namespace

DropoutResult dropout(const Tensor& x, double p, Generator* gen) { return dropout_of(x, p, gen, false, "dropout"); }

DropoutResult relu_dropout(const Tensor& x, double p, Generator* gen) {
  return dropout_of(x, p, gen, true, "relu_dropout");
}

Tensor pack_positive(const Tensor& x) {
  detail::check_defined(x, "pack_positive");
  const Tensor xc = x.contiguous();
  const int64_t n = xc.numel();
  Tensor bits = empty({words_for(n)}, i64);
  uint64_t* w = reinterpret_cast<uint64_t*>(bits.data<int64_t>());
  detail::dispatch_float(x.dtype(), "pack_positive", [&](auto z) {
    using T = decltype(z);
    const T* p = xc.data<T>();
    if constexpr (std::is_same_v<T, float>)
      if (__builtin_cpu_supports("avx512f")) return pack_positive_f32_avx512(p, w, n);
    for (int64_t k = 0; k * 64 < n; ++k) {
      const int64_t base = k * 64, end = std::min<int64_t>(64, n - base);
      uint64_t word = 0;
      for (int64_t j = 0; j < end; ++j) word |= uint64_t(p[base + j] > 0) << j;
      w[k] = word;
    }
  });
  return bits;
}

Tensor masked_scale(const Tensor& x, const Tensor& bits, double scale) {
  detail::check_defined(x, "masked_scale");
  const Tensor xc = x.contiguous();
  const int64_t n = xc.numel();
  check_bits(bits, n, "masked_scale");
  Tensor y = empty(x.shape(), x.dtype());
  detail::dispatch_float(x.dtype(), "masked_scale", [&](auto z) {
    using T = decltype(z);
    select_scaled<false, T>(words(bits), xc.data<T>(), T(scale), y.data<T>(), n);
  });
  return y;
}

// A block of lines at a time: the block's masked dy is written into the output while it is in cache and each
// line's gradient runs there in place (the f32 lines allow out = g), so the bits are those of the two ops
// and the (B, H, S, S) tensor between them is never made. Blocks start on a whole word of the mask.
Tensor dropout_softmax_backward(const Tensor& dy, const Tensor& y, const Tensor& keep, double scale) {
  detail::check_defined(dy, "dropout_softmax_backward");
  detail::check_defined(y, "dropout_softmax_backward");
  check<ShapeError>(dy.shape() == y.shape() && dy.dim() >= 1,
                    "dropout_softmax_backward: dy {} and y {} must have one shape of 1 or more dims", dy.shape(),
                    y.shape());
  check<DTypeError>(dy.dtype() == y.dtype(), "dropout_softmax_backward: dtypes differ: {} vs {}", dy.dtype(),
                    y.dtype());
  if (dy.dtype() != f32) return softmax_backward(masked_scale(dy, keep, scale), y, -1);
  check_bits(keep, dy.numel(), "dropout_softmax_backward");
  const Tensor g = dy.contiguous(), p = y.contiguous();
  Tensor out = empty(dy.shape(), f32);
  const int64_t n = dy.size(-1), rows = n ? dy.numel() / n : 0;
  const int64_t block = 64 / std::gcd(n, int64_t(64));  // lines per block: block·n is a multiple of 64
  const float* pg = g.data<float>();
  const float* pp = p.data<float>();
  float* po = out.data<float>();
  for (int64_t r0 = 0; r0 < rows; r0 += block) {
    const int64_t at = r0 * n, r1 = std::min(rows, r0 + block);
    select_scaled<false, float>(words(keep) + at / 64, pg + at, float(scale), po + at, (r1 - r0) * n);
    for (float* line = po + at; line < po + r1 * n; line += n)
      cpu::softmax_backward_f32(line, pp + (line - po), line, n);
  }
  return out;
}

Tensor unpack_mask(const Tensor& bits, const Shape& shape) {
  const int64_t n = shape.numel();
  check_bits(bits, n, "unpack_mask");
  Tensor out = empty(shape, boolean);
  bool* p = out.data<bool>();
  const uint64_t* w = words(bits);
  for (int64_t i = 0; i < n; ++i) p[i] = (w[i / 64] >> (i % 64)) & 1;
  return out;
}

}  // namespace tg
