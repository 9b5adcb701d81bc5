// Packed-mask loops of ops/mask.cpp built on the Highway lines of mask.cpp and softmax.cpp: constant masks, the
// bool view of a mask, and dropout's gradient through a softmax.
#include <algorithm>
#include <numeric>

#include "core/cpu/kernels.h"

namespace tg::cpu {

void fill_bits(uint64_t* words, int64_t n, bool value) {
  for (int64_t k = 0; k * 64 < n; ++k) {
    const int64_t end = std::min<int64_t>(64, n - k * 64);
    words[k] = !value ? 0 : end == 64 ? ~uint64_t(0) : (uint64_t(1) << end) - 1;
  }
}

void unpack_bits(const uint64_t* words, bool* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = (words[i / 64] >> (i % 64)) & 1;
}

// A block of lines at a time: the block's masked dy is written into dx while it is in cache and each line's
// gradient runs there in place (softmax_backward_f32 allows out = g). Blocks start on a whole word of the mask.
void dropout_softmax_backward_f32(const uint64_t* keep, const float* dy, const float* y, float scale, float* dx,
                                  int64_t rows, int64_t n) {
  const int64_t block = 64 / std::gcd(n, int64_t(64));  // lines per block: block·n is a multiple of 64
  for (int64_t r0 = 0; r0 < rows; r0 += block) {
    const int64_t at = r0 * n, r1 = std::min(rows, r0 + block);
    mask_select(keep + at / 64, dy + at, scale, dx + at, (r1 - r0) * n);
    for (float* line = dx + at; line < dx + r1 * n; line += n) softmax_backward_f32(line, y + (line - dx), line, n);
  }
}

}  // namespace tg::cpu
