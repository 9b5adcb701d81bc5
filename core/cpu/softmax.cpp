// The f32 softmax line (plain and with a mask of blocked keys), its gradient, log_softmax's line and
// gradient, and the line reductions that share their passes (log-sum-exp, max and min), written once on Highway and dispatched to the CPU's best target. A line runs in passes over
// whole vectors with plain loads and stores, only its last partial vector masked (tail-inl.h). The
// contracts, accuracy and order of summation are in kernels.h.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "core/cpu/softmax.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>
#include <hwy/contrib/math/math-inl.h>

#include "core/cpu/tail-inl.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "core/cpu/kernels.h"

HWY_BEFORE_NAMESPACE();
namespace tg::cpu::HWY_NAMESPACE {
namespace {

using DF = hn::ScalableTag<float>;
using VF = hn::Vec<DF>;
constexpr float kInf = std::numeric_limits<float>::infinity();

// A line's values, a vector at a time (span: Whole or Tail).
struct Line {
  const float* in;
  template <class Span>
  HWY_INLINE VF Load(DF d, Span s, size_t j) const { return s.Load(d, in + j); }
  // The line in memory, for the scalar path of a line without a finite max.
  const float* Materialize(DF, float*, size_t) const { return in; }
};

// The same with -inf where blocked[j] is true: masked_fill(-inf) in registers. Filling the line in memory
// first, one scalar store per element, stalled the line's vector loads on store forwarding.
struct BlockedLine {
  const float* in;
  const bool* blocked;
  template <class Span>
  HWY_INLINE VF Load(DF d, Span s, size_t j) const {
    const hn::Rebind<uint8_t, DF> d8;
    const hn::Rebind<uint32_t, DF> d32;
    const auto bytes = s.Load(d8, reinterpret_cast<const uint8_t*>(blocked + j));
    const auto b = hn::RebindMask(d, hn::Ne(hn::PromoteTo(d32, bytes), hn::Zero(d32)));
    return hn::IfThenElse(b, hn::Set(d, -kInf), s.Load(d, in + j));
  }
  // The filled line written to out (a rare line: one without a finite max).
  const float* Materialize(DF d, float* out, size_t n) const {
    ForBlocks(d, n, [&](size_t j, auto s) { s.Store(Load(d, s, j), d, out + j); });
    return out;
  }
};

// The largest element of the line, -inf if none (n = 0, or all -inf). Max(x, acc) passes a NaN x over on
// x86 and keeps it on ARM: either way the line's NaN makes it all NaN later.
template <class Input>
HWY_INLINE float LineMax(DF d, Input input, size_t n) {
  const VF minus_inf = hn::Set(d, -kInf);
  VF mx = minus_inf;
  ForBlocks(d, n, [&](size_t j, auto s) {
    mx = hn::Max(s.Keep(d, input.Load(d, s, j), minus_inf), mx);
  });
#if HWY_TARGET == HWY_EMU128
  // Highway 1.0.3's emulated MaxOfLanes starts from the lowest finite float, so an all -inf vector would give
  // -FLT_MAX, not -inf: the lanes are folded here instead.
  float lanes[hn::MaxLanes(DF())];
  hn::StoreU(mx, d, lanes);
  float m = -kInf;
  for (float x : lanes) m = x > m ? x : m;
  return m;
#else
  return hn::GetLane(hn::MaxOfLanes(d, mx));
#endif
}

// e^(x - max) for the lanes of one vector, added into sum (past the line: nothing); x - max added into tsum
// so that a NaN anywhere in the line is seen once at the end: hn::Exp gives 0 for NaN.
template <class Span>
HWY_INLINE VF ExpAdd(DF d, Span s, VF x, VF vm, VF& sum, VF& tsum) {
  const VF t = s.Keep(d, hn::Sub(x, vm));
  const VF e = s.Keep(d, hn::Exp(d, t));
  sum = hn::Add(sum, e);
  tsum = hn::Add(tsum, t);
  return e;
}

// Σ of sum's lanes, NaN if tsum holds one.
HWY_INLINE float Total(DF d, VF sum, VF tsum) {
  return hn::AllFalse(d, hn::IsNaN(tsum)) ? hn::GetLane(hn::SumOfLanes(d, sum))
                                           : std::numeric_limits<float>::quiet_NaN();
}

template <class Input>
HWY_INLINE void SoftmaxLine(Input input, float* out, size_t n) {
  const DF d;
  const float m = LineMax(d, input, n);
  // One branch per line: all -inf (fully masked) or holding +inf takes the scalar limit (kernels.h).
  if (!std::isfinite(m)) return nonfinite_softmax_line(input.Materialize(d, out, n), out, int64_t(n), 1, false);
  // The exps are summed as they are made and the last partial vector stays in a register until the last
  // pass: loads of what a masked store has just written wait for it (no store forwarding).
  const VF vm = hn::Set(d, m);
  VF sum = hn::Zero(d), tsum = hn::Zero(d), last = hn::Zero(d);
  size_t whole = 0;
  ForBlocks(d, n, [&](size_t j, auto s) {
    const VF e = ExpAdd(d, s, input.Load(d, s, j), vm, sum, tsum);
    if constexpr (std::is_same_v<decltype(s), Whole>) hn::StoreU(e, d, out + j), whole = j + hn::Lanes(d);
    else last = e;
  });
  const VF inv = hn::Set(d, 1.0f / Total(d, sum, tsum));
  for (size_t j = 0; j < whole; j += hn::Lanes(d)) hn::StoreU(hn::Mul(hn::LoadU(d, out + j), inv), d, out + j);
  if (whole < n) StoreTail(hn::Mul(last, inv), d, out + whole, n - whole);
}

void SoftmaxF32(const float* in, float* out, size_t n) { SoftmaxLine(Line{in}, out, n); }

void MaskedSoftmaxF32(const float* in, const bool* blocked, float* out, size_t n) {
  SoftmaxLine(BlockedLine{in, blocked}, out, n);
}

void LogSoftmaxF32(const float* in, float* out, size_t n) {
  const DF d;
  const float m = LineMax(d, Line{in}, n);
  // A line without a finite max would be (x - max) - log 0, inf - inf: it takes the scalar limit (kernels.h).
  if (!std::isfinite(m)) return nonfinite_softmax_line(in, out, int64_t(n), 1, true);
  const VF vm = hn::Set(d, m);
  VF sum = hn::Zero(d), tsum = hn::Zero(d);
  ForBlocks(d, n, [&](size_t j, auto s) { ExpAdd(d, s, s.Load(d, in + j), vm, sum, tsum); });
  const float total = Total(d, sum, tsum);
  const VF shift = hn::Set(d, std::log(total));
  ForBlocks(d, n, [&](size_t j, auto s) { s.Store(hn::Sub(hn::Sub(s.Load(d, in + j), vm), shift), d, out + j); });
}

float LogSumExpF32(const float* in, size_t n) {
  const DF d;
  const float m = LineMax(d, Line{in}, n);
  // No finite max: all -inf gives -inf, +inf gives +inf, never inf - inf; a NaN (which Max may have passed
  // over) gives NaN.
  if (!std::isfinite(m)) {
    for (size_t j = 0; j < n; ++j)
      if (std::isnan(in[j])) return std::numeric_limits<float>::quiet_NaN();
    return m;
  }
  const VF vm = hn::Set(d, m);
  VF sum = hn::Zero(d), tsum = hn::Zero(d);
  ForBlocks(d, n, [&](size_t j, auto s) { ExpAdd(d, s, s.Load(d, in + j), vm, sum, tsum); });
  return m + std::log(Total(d, sum, tsum));
}

// The largest (or smallest) element of a nonempty line; NaN if it holds one (Max and Min alone may pass a
// NaN over, so the lanes' NaNs are gathered apart).
float ExtremeF32(const float* in, size_t n, bool largest) {
  const DF d;
  const VF start = hn::Set(d, in[0]);
  VF acc = start;
  auto nan = hn::Ne(start, start);
  ForBlocks(d, n, [&](size_t j, auto s) {
    const VF x = s.Keep(d, s.Load(d, in + j), start);
    nan = hn::Or(nan, hn::IsNaN(x));
    acc = largest ? hn::Max(acc, x) : hn::Min(acc, x);
  });
  if (!hn::AllFalse(d, nan)) return std::numeric_limits<float>::quiet_NaN();
  float lanes[hn::MaxLanes(DF())];
  hn::StoreU(acc, d, lanes);
  float e = lanes[0];
  for (size_t i = 1; i < hn::Lanes(d); ++i) e = largest ? std::max(e, lanes[i]) : std::min(e, lanes[i]);
  return e;
}

void SoftmaxBackwardF32(const float* g, const float* p, float* out, size_t n) {
  const DF d;
  VF acc = hn::Zero(d);
  ForBlocks(d, n, [&](size_t j, auto s) { acc = hn::MulAdd(s.Load(d, g + j), s.Load(d, p + j), acc); });
  const VF dot = hn::SumOfLanes(d, acc);
  ForBlocks(d, n, [&](size_t j, auto s) {
    s.Store(hn::Mul(s.Load(d, p + j), hn::Sub(s.Load(d, g + j), dot)), d, out + j);
  });
}

void LogSoftmaxBackwardF32(const float* g, const float* ly, float* out, size_t n) {
  const DF d;
  // A fully masked line (all -inf) gets zeros; one branch per line, as such a line starts with -inf.
  if (n > 0 && ly[0] == -kInf && all_minus_inf(ly, int64_t(n), 1)) {
    ForBlocks(d, n, [&](size_t j, auto s) { s.Store(hn::Zero(d), d, out + j); });
    return;
  }
  VF acc = hn::Zero(d);
  ForBlocks(d, n, [&](size_t j, auto s) { acc = hn::Add(acc, s.Load(d, g + j)); });
  const VF total = hn::SumOfLanes(d, acc);
  // hn::Exp is defined up to 104 (e^x is inf from 88.8) and gives 0 for NaN: the NaN is put back.
  const VF top = hn::Set(d, 104.0f);
  ForBlocks(d, n, [&](size_t j, auto s) {
    const VF y = s.Load(d, ly + j);
    const VF e = hn::IfThenElse(hn::IsNaN(y), y, hn::Exp(d, hn::Min(y, top)));
    s.Store(hn::NegMulAdd(e, total, s.Load(d, g + j)), d, out + j);
  });
}

}  // namespace
}  // namespace tg::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tg::cpu {

HWY_EXPORT(SoftmaxF32);
HWY_EXPORT(MaskedSoftmaxF32);
HWY_EXPORT(LogSoftmaxF32);
HWY_EXPORT(LogSumExpF32);
HWY_EXPORT(ExtremeF32);
HWY_EXPORT(SoftmaxBackwardF32);
HWY_EXPORT(LogSoftmaxBackwardF32);

void softmax_f32(const float* in, float* out, int64_t n) { HWY_DYNAMIC_DISPATCH(SoftmaxF32)(in, out, size_t(n)); }

void masked_softmax_f32(const float* in, const bool* blocked, float* out, int64_t n) {
  HWY_DYNAMIC_DISPATCH(MaskedSoftmaxF32)(in, blocked, out, size_t(n));
}

void log_softmax_f32(const float* in, float* out, int64_t n) {
  HWY_DYNAMIC_DISPATCH(LogSoftmaxF32)(in, out, size_t(n));
}

float logsumexp_f32(const float* in, int64_t n) { return HWY_DYNAMIC_DISPATCH(LogSumExpF32)(in, size_t(n)); }

float extreme_f32(const float* in, int64_t n, bool largest) {
  return HWY_DYNAMIC_DISPATCH(ExtremeF32)(in, size_t(n), largest);
}

void softmax_backward_f32(const float* g, const float* p, float* out, int64_t n) {
  HWY_DYNAMIC_DISPATCH(SoftmaxBackwardF32)(g, p, out, size_t(n));
}

void log_softmax_backward_f32(const float* g, const float* ly, float* out, int64_t n) {
  HWY_DYNAMIC_DISPATCH(LogSoftmaxBackwardF32)(g, ly, out, size_t(n));
}

}  // namespace tg::cpu
#endif
