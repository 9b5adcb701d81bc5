#pragma once
// Internal to core: what the AVX-512 row kernels (softmax_row.cpp, layer_norm_row.cpp) share: the CPU check,
// the target attribute their functions carry, and the mask of a line's last block. Include it only from
// those files: the warnings below stay switched off in the file that includes it.

// g++ 12 warns inside its own AVX-512 headers about the _mm512_undefined_* operands of some intrinsics
// (GCC bug 105593, fixed in 13): nothing of ours is uninitialised.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <cstdint>

namespace tg::detail {

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
TG_AVX512 inline __mmask16 tail_mask(int64_t left) {
  return left >= 16 ? __mmask16(0xffff) : __mmask16((1u << left) - 1);
}

}  // namespace tg::detail
