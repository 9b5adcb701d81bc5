// Adam's fused f32 update (kernels.h, "Adam"), on Highway. Each element gets the IEEE operations of
// optim/adam.cpp's scalar definition, in its order and precisions: f32 products and the square root in f32
// lanes, the terms torch computes with a double factor in f64 lanes (a vector of f32 widened to as many
// f64), each rounded back to f32 where torch's op rounds. No fused multiply-add (Mul then Add, built with
// -ffp-contract=off) and no reduction, so every target gives the scalar loop's bits.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "core/cpu/adam.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <cstring>

#include "core/cpu/kernels.h"

HWY_BEFORE_NAMESPACE();
namespace tg::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// x rounded to f32, as static_cast<float> rounds it (the emulated targets' DemoteTo, SCALAR's and EMU128's,
// which clang builds as the baseline, turns ±inf into ±max).
template <class DF, class VD>
HWY_INLINE hn::Vec<DF> Narrow(DF df, VD x) {
#if HWY_TARGET == HWY_SCALAR || HWY_TARGET == HWY_EMU128
  const hn::DFromV<VD> dd;
  double wide[16];
  float narrow[16] = {};
  hn::StoreU(x, dd, wide);
  for (size_t i = 0; i < hn::Lanes(dd); ++i) narrow[i] = static_cast<float>(wide[i]);
  return hn::LoadU(df, narrow);
#else
  return hn::DemoteTo(df, x);
#endif
}

// decay: 0 none, 1 L2 (Adam: g ← g + λ·p), 2 decoupled (AdamW: p ← p·(1 − lr·λ)).
template <int kDecay, bool kAmsgrad>
void AdamLanes(float* p, const float* g, float* m, float* v, float* v_max, int64_t n, const AdamScalars& a) {
  const hn::ScalableTag<double> dd;
  const hn::Rebind<float, decltype(dd)> df;
  const auto b1 = hn::Set(df, float(a.beta1)), b2 = hn::Set(df, float(a.beta2)), eps = hn::Set(df, float(a.eps));
  const auto shrink = hn::Set(df, float(1 - a.lr * a.weight_decay));
  const auto sbc2 = hn::Set(df, float(a.sqrt_bias_correction2));
  const auto wd = hn::Set(dd, a.weight_decay), c1 = hn::Set(dd, 1 - a.beta1), c2 = hn::Set(dd, 1 - a.beta2);
  const auto neg_step = hn::Set(dd, -a.step_size);
  // One vector of elements at these pointers.
  auto update = [&](float* p, const float* g, float* m, float* v, float* v_max) HWY_ATTR {
    auto pf = hn::LoadU(df, p), gf = hn::LoadU(df, g);
    if constexpr (kDecay == 2) pf = hn::Mul(pf, shrink);
    if constexpr (kDecay == 1) gf = Narrow(df, hn::Add(hn::PromoteTo(dd, gf), hn::Mul(wd, hn::PromoteTo(dd, pf))));
    const auto gd = hn::PromoteTo(dd, gf);
    const auto mf = Narrow(df, hn::Add(hn::PromoteTo(dd, hn::Mul(hn::LoadU(df, m), b1)), hn::Mul(c1, gd)));
    auto vf = Narrow(df, hn::Add(hn::PromoteTo(dd, hn::Mul(hn::LoadU(df, v), b2)), hn::Mul(hn::Mul(c2, gd), gd)));
    hn::StoreU(mf, df, m);
    hn::StoreU(vf, df, v);
    if constexpr (kAmsgrad) {
      const auto seen = hn::LoadU(df, v_max);
      vf = hn::IfThenElse(hn::Lt(seen, vf), vf, seen);
      hn::StoreU(vf, df, v_max);
    }
    const auto denom = hn::Add(hn::Div(hn::Sqrt(vf), sbc2), eps);
    const auto step = hn::Div(hn::Mul(neg_step, hn::PromoteTo(dd, mf)), hn::PromoteTo(dd, denom));
    hn::StoreU(Narrow(df, hn::Add(hn::PromoteTo(dd, pf), step)), df, p);
  };
  const int64_t N = int64_t(hn::Lanes(dd));
  int64_t i = 0;
  for (; i + N <= n; i += N) update(p + i, g + i, m + i, v + i, kAmsgrad ? v_max + i : nullptr);
  if (i == n) return;
  // The last partial vector, on copies.
  constexpr size_t kMax = hn::MaxLanes(decltype(df)());
  float bp[kMax] = {}, bg[kMax] = {}, bm[kMax] = {}, bv[kMax] = {}, bx[kMax] = {};
  const size_t bytes = size_t(n - i) * sizeof(float);
  std::memcpy(bp, p + i, bytes), std::memcpy(bg, g + i, bytes), std::memcpy(bm, m + i, bytes);
  std::memcpy(bv, v + i, bytes);
  if (kAmsgrad) std::memcpy(bx, v_max + i, bytes);
  update(bp, bg, bm, bv, bx);
  std::memcpy(p + i, bp, bytes), std::memcpy(m + i, bm, bytes), std::memcpy(v + i, bv, bytes);
  if (kAmsgrad) std::memcpy(v_max + i, bx, bytes);
}

template <int kDecay>
void AdamWithDecay(float* p, const float* g, float* m, float* v, float* v_max, int64_t n, const AdamScalars& a) {
  if (a.amsgrad) AdamLanes<kDecay, true>(p, g, m, v, v_max, n, a);
  else AdamLanes<kDecay, false>(p, g, m, v, v_max, n, a);
}

void AdamF32(float* p, const float* g, float* m, float* v, float* v_max, int64_t n, const AdamScalars& a) {
  if (a.decoupled) AdamWithDecay<2>(p, g, m, v, v_max, n, a);
  else if (a.weight_decay != 0) AdamWithDecay<1>(p, g, m, v, v_max, n, a);
  else AdamWithDecay<0>(p, g, m, v, v_max, n, a);
}

}  // namespace tg::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tg::cpu {

HWY_EXPORT(AdamF32);

void adam_f32(float* p, const float* g, float* m, float* v, float* v_max, int64_t n, const AdamScalars& a) {
  HWY_DYNAMIC_DISPATCH(AdamF32)(p, g, m, v, v_max, n, a);
}

}  // namespace tg::cpu
#endif  // HWY_ONCE
