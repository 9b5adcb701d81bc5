// The f32 unary kernels (exp, tanh, sigmoid, silu, both gelus, gelu's gradient), written once in Highway ops
// and built for every target (AVX-512, AVX2, SSE4, scalar on x86; NEON, SVE on ARM), the best chosen at run
// time. exp and tanh are hwy/contrib/math's; exact gelu is our own polynomial (Highway 1.0.3 has no erf),
// whose constants tools/fit_gelu.py computes. Accuracies are stated in kernels.h and tested over every
// target in tests/core/unary_test.cpp.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "core/cpu/unary.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "core/cpu/kernels.h"
#include "core/cpu/map-inl.h"
#include <hwy/contrib/math/math-inl.h>

HWY_BEFORE_NAMESPACE();
namespace tg::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
using DF = hn::ScalableTag<float>;
using VF = hn::Vec<DF>;

// hn::Exp, with what it leaves out: NaN stays NaN (hn::Exp gives 0) and x above 89 gives inf (past 104 its
// exponent arithmetic wraps around).
HWY_INLINE VF Exp(DF d, VF x) {
  const VF y = hn::Exp(d, hn::Min(x, hn::Set(d, 89.0f)));
  return hn::IfThenElse(hn::IsNaN(x), x, y);
}

// tanh: hn::Tanh keeps ±0, ±inf and NaN as they should be.
void TanhF32(const float* x, float* y, int64_t n) {
  Map(DF(), x, y, n, [](DF d, VF v) { return hn::Tanh(d, v); });
}
void ExpF32(const float* x, float* y, int64_t n) { Map(DF(), x, y, n, [](DF d, VF v) { return Exp(d, v); }); }

// σ(x) = num/(1 + e) with e = e^-|x| (never overflows) and num = 1 for x ≥ +0, e for x ≤ -0.
HWY_INLINE VF Sigmoid(DF d, VF x) {
  const VF e = Exp(d, hn::Neg(hn::Abs(x)));
  const VF num = hn::IfNegativeThenElse(x, e, hn::Set(d, 1.0f));
  return hn::Div(num, hn::Add(hn::Set(d, 1.0f), e));
}
void SigmoidF32(const float* x, float* y, int64_t n) { Map(DF(), x, y, n, [](DF d, VF v) { return Sigmoid(d, v); }); }
// -0 at x = -inf, the limit of x·σ(x), x·Φ(x) and the tanh gelu, where their products would be -inf·0 = NaN.
HWY_INLINE VF ZeroAtMinusInf(DF d, VF x, VF y) {
  return hn::IfThenElse(hn::Eq(x, hn::Set(d, -INFINITY)), hn::Set(d, -0.0f), y);
}
void SiluF32(const float* x, float* y, int64_t n) {
  Map(DF(), x, y, n, [](DF d, VF v) { return ZeroAtMinusInf(d, v, hn::Mul(v, Sigmoid(d, v))); });
}

// gelu's tanh form as x/(1 + e^(-2u)), u = √(2/π)(x + 0.044715x³): 0.5x(1 + tanh u) cancels to 0 in f32 below
// x ≈ -4.5, this keeps the left tail's relative accuracy.
void GeluTanhF32(const float* x, float* y, int64_t n) {
  Map(DF(), x, y, n, [](DF d, VF v) {
    const VF x3 = hn::Mul(hn::Mul(v, v), v);
    const VF u = hn::Mul(hn::Set(d, 0.797884561f), hn::MulAdd(hn::Set(d, 0.044715f), x3, v));
    return ZeroAtMinusInf(d, v, hn::Div(v, hn::Add(hn::Set(d, 1.0f), Exp(d, hn::Mul(hn::Set(d, -2.0f), u)))));
  });
}

// The normal distribution's left tail at a = min(|x|, 15) (beyond, a·φ(a) rounds to 0 in f32):
// e^(-a²/2) = p·s·2^-64 and Φ(-a) = (p·r)·s, with s = 2^(n+64) a power of two and r = Φ(-a)·e^(a²/2)·2^-64
// (Mills' ratio over √(2π), scaled so that p·r stays a normal float and the last product rounds once, also
// into denormals). -a²/2 - n·ln2 is formed exactly (rounding a² first would cost up to 100 ulp at a = 14);
// e^r is a degree-6 polynomial (minimax, 2e-9) on |r| ≤ ln2/2; r is a (4, 5) rational in a, the form of
// Cody's and Hart's erfc/Φ rationals, fitted minimax to Φ(-a)·e^(a²/2) on [0, 14.5] (relative error 1e-8
// with these f32 coefficients). tools/fit_gelu.py computes every constant. The four vectors go to a continuation,
// not a struct: SVE's vectors are sizeless and cannot be members.

// -a² - c·n exactly but for one rounding: one fma where the target has it, else a² split in two exact halves
// (Veltkamp and Dekker) and c·n exact (c has 16 bits, n 8).
HWY_INLINE VF MinusSquareMinus(DF d, VF a, VF cn) {
#if HWY_NATIVE_FMA
  (void)d;
  return hn::NegMulAdd(a, a, hn::Neg(cn));
#else
  const VF hi = hn::Mul(a, a);
  const VF big = hn::Mul(a, hn::Set(d, 4097.0f));
  const VF ah = hn::Sub(big, hn::Sub(big, a)), al = hn::Sub(a, ah);
  const VF lo = hn::Add(hn::Add(hn::Sub(hn::Mul(ah, ah), hi), hn::Mul(hn::Add(ah, ah), al)), hn::Mul(al, al));
  return hn::Sub(hn::Sub(hn::Neg(hi), cn), lo);  // -hi - cn is exact (Sterbenz), then one rounding
#endif
}

template <class Use>
HWY_INLINE VF WithTail(DF d, VF x, Use use) {
  const hn::RebindToUnsigned<DF> du;
  const VF a = hn::BitCast(d, hn::Min(hn::BitCast(du, hn::Abs(x)), hn::Set(du, 0x41700000u)));  // NaN, inf: 15
  // n = round(-a²/(2 ln2)); the low bits of t hold n + 191, so t's bits << 23 are 2^(n+64).
  const VF shift = hn::Set(d, 12582912.0f + 191.0f);  // 1.5·2^23 + 191
  const VF t = hn::MulAdd(hn::Mul(a, a), hn::Set(d, -0.72134752f), shift);
  const VF n = hn::Sub(t, shift);
  const VF s = hn::BitCast(d, hn::ShiftLeft<23>(hn::BitCast(du, t)));
  // rho = -a² - 2n·ln2 = 2r: 2·ln2 = 1.38629150390625 (16 bits, so n·that is exact) + 2.85721364e-6.
  const VF rho = hn::MulAdd(n, hn::Set(d, -2.85721364e-6f), MinusSquareMinus(d, a, hn::Mul(n, hn::Set(d, 1.38629150f))));
  VF p = hn::Set(d, 2.163067802e-5f);  // e^(rho/2): coefficient k is the minimax one of r^k divided by 2^k
  for (float c : {2.616928541e-4f, 2.604250098e-3f, 2.083303966e-2f, 1.249999851e-1f, 0.5f, 1.0f})
    p = hn::MulAdd(p, rho, hn::Set(d, c));
  constexpr float k = 5.42101086e-20f;  // 2^-64
  VF num = hn::Set(d, 3.989469111e-1f * k);
  for (float c : {3.938210011e+0f * k, 1.775957680e+1f * k, 4.248104477e+1f * k, 4.846231842e+1f * k})
    num = hn::MulAdd(num, a, hn::Set(d, c));
  VF den = hn::Add(a, hn::Set(d, 9.872253418e+0f));
  for (float c : {4.550214767e+1f, 1.165504837e+2f, 1.622967987e+2f, 9.692463684e+1f})
    den = hn::MulAdd(den, a, hn::Set(d, c));
  return use(a, p, hn::Div(num, den), s);
}

// gelu(x) = x·Φ(x) = x·step(x) - |x|·Φ(-|x|), step(x) = 1 for x ≥ +0 and 0 for x ≤ -0 (x·step keeps NaN).
HWY_INLINE VF Gelu(DF d, VF x) {
  const VF x_step = hn::IfNegativeThenElse(x, hn::Mul(x, hn::Zero(d)), x);
  return ZeroAtMinusInf(
      d, x, WithTail(d, x, [&](VF a, VF p, VF r, VF s) { return hn::NegMulAdd(hn::Mul(p, r), hn::Mul(a, s), x_step); }));
}

// gelu'(x) = Φ(x) + x·φ(x): D = Φ(-a) - a·φ(a) for x < 0 and 1 - D for x ≥ 0; + x·0 makes NaN of NaN; the
// limits 1 at +inf and 0 at -inf (x·φ(x) would be inf·0 there).
HWY_INLINE VF GeluGrad(DF d, VF x) {
  const VF dd = WithTail(d, x, [&](VF a, VF p, VF r, VF s) {  // 2^-64/√(2π) below
    return hn::Mul(hn::Mul(p, hn::MulAdd(a, hn::Set(d, -2.16267054e-20f), r)), s);
  });
  const VF g = hn::IfNegativeThenElse(x, dd, hn::Sub(hn::Set(d, 1.0f), dd));
  const VF limit = hn::IfNegativeThenElse(x, hn::Zero(d), hn::Set(d, 1.0f));
  return hn::IfThenElse(hn::Eq(hn::Abs(x), hn::Set(d, INFINITY)), limit, hn::MulAdd(x, hn::Zero(d), g));
}

void GeluF32(const float* x, float* y, int64_t n) { Map(DF(), x, y, n, [](DF d, VF v) { return Gelu(d, v); }); }
void GeluBackwardF32(const float* dy, const float* x, float* dx, int64_t n) {
  Map<false, false>(DF(), dy, x, dx, n, [](DF d, VF g, VF v) { return hn::Mul(g, GeluGrad(d, v)); });
}

}  // namespace tg::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tg::cpu {
HWY_EXPORT(ExpF32);
HWY_EXPORT(TanhF32);
HWY_EXPORT(SigmoidF32);
HWY_EXPORT(SiluF32);
HWY_EXPORT(GeluF32);
HWY_EXPORT(GeluTanhF32);
HWY_EXPORT(GeluBackwardF32);
void exp_f32(const float* x, float* y, int64_t n) { HWY_DYNAMIC_DISPATCH(ExpF32)(x, y, n); }
void tanh_f32(const float* x, float* y, int64_t n) { HWY_DYNAMIC_DISPATCH(TanhF32)(x, y, n); }
void sigmoid_f32(const float* x, float* y, int64_t n) { HWY_DYNAMIC_DISPATCH(SigmoidF32)(x, y, n); }
void silu_f32(const float* x, float* y, int64_t n) { HWY_DYNAMIC_DISPATCH(SiluF32)(x, y, n); }
void gelu_f32(const float* x, float* y, int64_t n) { HWY_DYNAMIC_DISPATCH(GeluF32)(x, y, n); }
void gelu_tanh_f32(const float* x, float* y, int64_t n) { HWY_DYNAMIC_DISPATCH(GeluTanhF32)(x, y, n); }
void gelu_backward_f32(const float* dy, const float* x, float* dx, int64_t n) {
  HWY_DYNAMIC_DISPATCH(GeluBackwardF32)(dy, x, dx, n);
}
}  // namespace tg::cpu
#endif
