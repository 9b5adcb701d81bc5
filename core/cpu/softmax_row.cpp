// The f32 softmax line, forward and backward, and log_softmax's, on 16 lanes of AVX-512. The portable lines in
// normalize.cpp are built for the baseline x86-64 (4 lanes of SSE), where attention's softmax over rows of 25-32 scores
// took 7 % of a training step (bench_step S, perf); building them for AVX-512 with target_clones was tried and was
// slower (the fold8 helpers stopped inlining, RESULTS.md). These are the same operations written out on vectors, so the
// bits are the portable line's:
//  - exp16 is cpu::exp_f32 operation for operation (no fma: a product then a sum, each rounded, as
//    -ffp-contract=off keeps the scalar code);
//  - the max is exact in any order; a NaN is passed over as MaxOf does (max_ps(x, acc) returns acc when x
//    is NaN), and a max of -0 or +0 gives the same exps;
//  - the sums follow sum8: 8 lanes over the whole blocks of 8, the tail in order from +0, then the lanes
//    added to it one by one.
// tests/core/softmax_row_test.cpp compares both lines bit for bit on every length to 200 with -inf, NaN, inf,
// ±0, subnormal and large inputs.
#include "core/cpu/kernels.h"

#include <initializer_list>

#include "core/cpu/avx512.h"

namespace tg::cpu {
namespace {

// exp_f32 (core/fast_math.h) on 16 lanes; see there for the constants and the masks.
TG_AVX512 inline __m512 exp16(__m512 x) {
  __m512i u = _mm512_castps_si512(x);
  const __mmask16 low = _mm512_cmpgt_epu32_mask(u, _mm512_set1_epi32(int(0xC2D00000u))) &
                        _mm512_cmple_epu32_mask(u, _mm512_set1_epi32(int(0xFF800000u)));
  const __mmask16 high = _mm512_cmpgt_epi32_mask(u, _mm512_set1_epi32(0x42B20000)) &
                         _mm512_cmple_epu32_mask(u, _mm512_set1_epi32(0x7F800000));
  u = _mm512_mask_mov_epi32(u, low, _mm512_setzero_si512());
  u = _mm512_mask_mov_epi32(u, high, _mm512_set1_epi32(0x42B20000));
  x = _mm512_castsi512_ps(u);
  const __m512 shift = _mm512_set1_ps(12582912.0f);
  const __m512 t = _mm512_add_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)), shift);
  const __m512 n = _mm512_sub_ps(t, shift);
  const __m512i ni = _mm512_sub_epi32(_mm512_castps_si512(t), _mm512_castps_si512(shift));
  const __m512 r = _mm512_add_ps(_mm512_sub_ps(x, _mm512_mul_ps(n, _mm512_set1_ps(0.693359375f))),
                                 _mm512_mul_ps(n, _mm512_set1_ps(2.12194440e-4f)));
  __m512 p = _mm512_set1_ps(1.9875691500e-4f);
  for (float c : {1.3981999507e-3f, 8.3334519073e-3f, 4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f})
    p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(c));
  p = _mm512_add_ps(_mm512_add_ps(_mm512_mul_ps(_mm512_mul_ps(p, r), r), r), _mm512_set1_ps(1.0f));
  const __m512i n1 = _mm512_srai_epi32(ni, 1), n2 = _mm512_sub_epi32(ni, n1);
  const __m512i bias = _mm512_set1_epi32(127);
  const __m512 s1 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(n1, bias), 23));
  const __m512 s2 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(n2, bias), 23));
  const __m512 e = _mm512_mul_ps(_mm512_mul_ps(p, s1), s2);
  return _mm512_castsi512_ps(_mm512_maskz_mov_epi32(__mmask16(~low), _mm512_castps_si512(e)));
}

// sum8 of normalize.cpp over a[j] (b null) or a[j]·b[j]: lanes j mod 8 over whole blocks of 8, the tail
// from +0 in order, then r + lane 0 + ... + lane 7.
TG_AVX512 inline float sum8(const float* a, const float* b, int64_t n) {
  __m256 acc = _mm256_setzero_ps();
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) {
    const __m256 x = _mm256_loadu_ps(a + j);
    acc = _mm256_add_ps(acc, b ? _mm256_mul_ps(x, _mm256_loadu_ps(b + j)) : x);
  }
  float r = 0.0f;
  for (; j < n; ++j) r += b ? a[j] * b[j] : a[j];
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, acc);
  for (float lane : lanes) r += lane;
  return r;
}

// Lanes 8..15 of v.
TG_AVX512 inline __m256 high_half(__m512 v) { return _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)); }

// sum8's order over values made 16 at a time, without storing them first: add_block() each whole block of 16
// (as two blocks of 8) into acc, then lane_sum() with the last vector, of which `count` (< 16) lanes are in
// the line: a block of 8 if it holds one, the rest from +0 in order, then acc's 8 lanes added one by one.
TG_AVX512 inline void add_block(__m256& acc, __m512 e) {
  acc = _mm256_add_ps(_mm256_add_ps(acc, _mm512_castps512_ps256(e)), high_half(e));
}
TG_AVX512 inline float lane_sum(__m256 acc, __m512 last, int64_t count) {
  alignas(64) float tail[16];
  _mm512_store_ps(tail, last);
  int64_t t = 0;
  if (count >= 8) acc = _mm256_add_ps(acc, _mm256_load_ps(tail)), t = 8;
  float r = 0.0f;
  for (; t < count; ++t) r += tail[t];
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, acc);
  for (float lane : lanes) r += lane;
  return r;
}

// softmax_line's input: the lanes k of in[j, j + 16), `fill` in the others.
struct Line {
  const float* in;
  TG_AVX512 __m512 operator()(int64_t j, __mmask16 k, __m512 fill) const { return load16(in + j, k, fill); }
};

// The same with -inf where blocked[j] is true: masked_fill(-inf) in registers. Filling the line in memory
// first, one scalar store per element, stalled the line's vector loads on store forwarding.
struct BlockedLine {
  const float* in;
  const bool* blocked;
  TG_AVX512 __m512 operator()(int64_t j, __mmask16 k, __m512 fill) const {
    const __m128i bytes = _mm_maskz_loadu_epi8(k, blocked + j);
    const __mmask16 b = _mm_test_epi8_mask(bytes, bytes);
    return _mm512_mask_mov_ps(load16(in + j, k, fill), b, _mm512_set1_ps(-__builtin_inff()));  // b is within k
  }
};

template <class Input>
TG_AVX512 bool softmax_line(Input input, float* out, int64_t n) {
  const __m512 minus_inf = _mm512_set1_ps(-__builtin_inff());
  __m512 mx = minus_inf;
  for (int64_t j = 0; j < n; j += 16) mx = _mm512_max_ps(input(j, tail_mask(n - j), minus_inf), mx);  // NaN passed over
  const float m = _mm512_reduce_max_ps(mx);
  if (m == -__builtin_inff()) return false;
  // The exps are summed as they are made: summed from memory, the loads of what the masked stores had
  // just written waited for them (no store forwarding).
  const __m512 vm = _mm512_set1_ps(m);
  __m256 acc = _mm256_setzero_ps();
  int64_t j = 0;
  for (; j + 16 <= n; j += 16) {
    const __m512 e = exp16(_mm512_sub_ps(input(j, __mmask16(0xffff), _mm512_setzero_ps()), vm));
    _mm512_storeu_ps(out + j, e);
    add_block(acc, e);
  }
  const __mmask16 k = tail_mask(n - j);
  const __m512 last = exp16(_mm512_sub_ps(input(j, k, _mm512_setzero_ps()), vm));  // lanes past n unused
  const __m512 inv = _mm512_set1_ps(1.0f / lane_sum(acc, last, n - j));
  for (int64_t i = 0; i < j; i += 16) _mm512_storeu_ps(out + i, _mm512_mul_ps(_mm512_loadu_ps(out + i), inv));
  if (j < n) _mm512_mask_storeu_ps(out + j, k, _mm512_mul_ps(last, inv));
  return true;
}

TG_AVX512 void softmax_backward_line(const float* g, const float* p, float* out, int64_t n) {
  const float dot = sum8(g, p, n);
  const __m512 vdot = _mm512_set1_ps(dot);
  for (int64_t j = 0; j < n; j += 16) {
    const __mmask16 k = tail_mask(n - j);
    const __m512 pj = _mm512_maskz_loadu_ps(k, p + j), gj = _mm512_maskz_loadu_ps(k, g + j);
    store16(out + j, k, _mm512_mul_ps(pj, _mm512_sub_ps(gj, vdot)));
  }
}

// log_softmax_f32's line (normalize.cpp): the max, then each exp_f32(x - max) added into sum8's lanes as it
// is made (blocks of 16 as two blocks of 8, the tail from +0 in order), then (x - max) - log Σ. Nothing is
// stored before the last pass, so in may be out. False, writing nothing, when the max is not finite.
TG_AVX512 bool log_softmax_line(const float* in, float* out, int64_t n) {
  const __m512 minus_inf = _mm512_set1_ps(-__builtin_inff());
  __m512 mx = minus_inf;
  for (int64_t j = 0; j < n; j += 16) mx = _mm512_max_ps(load16(in + j, tail_mask(n - j), minus_inf), mx);
  const float m = _mm512_reduce_max_ps(mx);
  if (!__builtin_isfinite(m)) return false;
  const __m512 vm = _mm512_set1_ps(m);
  __m256 acc = _mm256_setzero_ps();
  int64_t j = 0;
  for (; j + 16 <= n; j += 16) add_block(acc, exp16(_mm512_sub_ps(_mm512_loadu_ps(in + j), vm)));
  const __m512 last = exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(tail_mask(n - j), in + j), vm));
  const __m512 shift = _mm512_set1_ps(__builtin_logf(lane_sum(acc, last, n - j)));
  for (j = 0; j < n; j += 16) {
    const __mmask16 k = tail_mask(n - j);
    store16(out + j, k, _mm512_sub_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, in + j), vm), shift));
  }
  return true;
}

}  // namespace

bool log_softmax_f32_avx512(const float* in, float* out, int64_t n) {
  return has_avx512() && log_softmax_line(in, out, n);
}

bool softmax_f32_avx512(const float* in, float* out, int64_t n) { return has_avx512() && softmax_line(Line{in}, out, n); }

bool masked_softmax_f32_avx512(const float* in, const bool* blocked, float* out, int64_t n) {
  return has_avx512() && softmax_line(BlockedLine{in, blocked}, out, n);
}

bool softmax_backward_f32_avx512(const float* g, const float* p, float* out, int64_t n) {
  if (!has_avx512()) return false;
  softmax_backward_line(g, p, out, n);
  return true;
}

}  // namespace tg::cpu
