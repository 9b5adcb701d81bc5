#pragma once
// Internal to core: what the AVX-512 kernels (softmax_row.cpp, layer_norm_row.cpp, mask.cpp) share: the CPU
// check, the target attribute the row kernels carry, the mask of a line's last block, and the load and store
// of a block. Include it only from those files: the warnings below stay switched off in the file that
// includes it. The helpers need AVX-512F only, so mask.cpp's avx512f functions can inline them too.

// g++ 12 warns inside its own AVX-512 headers about the _mm512_undefined_* operands of some intrinsics
// (GCC bug 105593, fixed in 13): nothing of ours is uninitialised.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <cstdint>

namespace tg::cpu {

// The byte masks of the masked softmax line need AVX-512 BW and VL, which every AVX-512 CPU but Xeon Phi has.
inline bool has_avx512() {
  static const bool yes = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl");
  }();
  return yes;
}

#define TG_AVX512 [[gnu::target("avx512f,avx512bw,avx512vl,avx2")]]

// The lanes of a 16-lane block with `left` elements to go.
[[gnu::target("avx512f")]] inline __mmask16 tail_mask(int64_t left) {
  return left >= 16 ? __mmask16(0xffff) : __mmask16((1u << left) - 1);
}

// p[0, 16): a plain load where k is whole, else the lanes k with `fill` in the others. On an AMD EPYC (Zen 5)
// masked loads from memory did not start the hardware prefetcher's streams: masked_scale over config M's
// attention weights (16.8 MB) took 1.4 ms with them and 0.63 ms with plain loads (a memcpy: 0.55). The empty
// asm keeps the compiler from folding the plain load into a masked instruction, a masked load again.
[[gnu::target("avx512f")]] inline __m512 load16(const float* p, __mmask16 k, __m512 fill) {
  if (k != 0xffff) return _mm512_mask_loadu_ps(fill, k, p);
  __m512 v = _mm512_loadu_ps(p);
  __asm__("" : "+v"(v));
  return v;
}

// v into p[0, 16): a plain store where k is whole, else the lanes k. Masked stores of whole blocks into fresh
// memory were as slow on Zen 5 (layer norm fwd + bwd of config M's (4096, 256): 1.3-1.5 -> 0.88-1.07 ms);
// plain ones also let the next loads of these addresses take their data from the store (store forwarding).
[[gnu::target("avx512f")]] inline void store16(float* p, __mmask16 k, __m512 v) {
  if (k == 0xffff) _mm512_storeu_ps(p, v);
  else _mm512_mask_storeu_ps(p, k, v);
}

}  // namespace tg::cpu
