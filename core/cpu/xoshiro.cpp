// Eight xoshiro256** streams side by side (kernels.h, "random lanes"), on Highway's 64-bit lanes: a vector
// each of s0..s3 for as many of the 8 streams as a vector holds, the groups one after another. Only integer
// shifts, adds, xors and compares, so every target gives Generator::next()'s bits. The multiplies by 5 and
// 9 are shifts and adds: AVX2, SSE4 and NEON have no 64-bit vector multiply.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "core/cpu/xoshiro.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "core/cpu/kernels.h"

HWY_BEFORE_NAMESPACE();
namespace tg::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

void XoshiroBitsBelow8(uint64_t (&lanes)[4][8], uint64_t threshold, uint64_t* out, int64_t words) {
  const hn::CappedTag<uint64_t, 8> d;
  const size_t N = hn::Lanes(d);
  const auto th = hn::Set(d, threshold);
  for (size_t h = 0; h < 8; h += N) {
    auto s0 = hn::LoadU(d, lanes[0] + h), s1 = hn::LoadU(d, lanes[1] + h);
    auto s2 = hn::LoadU(d, lanes[2] + h), s3 = hn::LoadU(d, lanes[3] + h);
    for (int64_t w = 0; w < words; ++w) {
      auto acc = hn::Zero(d), bit = hn::Set(d, 1);  // bit j of every lane at draw j
      for (int j = 0; j < 64; ++j) {
        const auto a = hn::RotateRight<57>(hn::Add(hn::ShiftLeft<2>(s1), s1));  // rotl(s1·5, 7)
        const auto r = hn::Add(hn::ShiftLeft<3>(a), a), t = hn::ShiftLeft<17>(s1);  // ·9: next()'s output
        s2 = hn::Xor(s2, s0), s3 = hn::Xor(s3, s1), s1 = hn::Xor(s1, s2), s0 = hn::Xor(s0, s3);
        s2 = hn::Xor(s2, t), s3 = hn::RotateRight<19>(s3);  // rotl(s3, 45)
        acc = hn::Or(acc, hn::IfThenElseZero(hn::Lt(r, th), bit));
        bit = hn::Add(bit, bit);
      }
      HWY_ALIGN uint64_t got[8];
      hn::Store(acc, d, got);
      for (size_t l = 0; l < N; ++l) out[int64_t(h + l) * words + w] = got[l];
    }
    hn::StoreU(s0, d, lanes[0] + h), hn::StoreU(s1, d, lanes[1] + h);
    hn::StoreU(s2, d, lanes[2] + h), hn::StoreU(s3, d, lanes[3] + h);
  }
}

}  // namespace tg::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tg::cpu {

HWY_EXPORT(XoshiroBitsBelow8);

void xoshiro_bits_below8(uint64_t (&lanes)[4][8], uint64_t threshold, uint64_t* out, int64_t words) {
  HWY_DYNAMIC_DISPATCH(XoshiroBitsBelow8)(lanes, threshold, out, words);
}

}  // namespace tg::cpu
#endif  // HWY_ONCE
