// The line loop of the elementwise kernels (unary.cpp, binary.cpp), per Highway target: whole vectors loaded
// and stored plain, the last partial one through tail-inl.h's LoadTail and StoreTail, which read and write no
// lane past n, so threads may own adjacent chunks. Two vectors per step: gelu's long dependency chains (a polynomial, a division) kept the old compiled loops'
// pace only so (bench/RESULTS.md).
// Included after hwy/highway.h, inside HWY_BEFORE_NAMESPACE, by a file built through foreach_target.h.
#if defined(TG_CPU_MAP_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TG_CPU_MAP_INL_H_
#undef TG_CPU_MAP_INL_H_
#else
#define TG_CPU_MAP_INL_H_
#endif

#include <cstdint>

#include <hwy/highway.h>

#include "core/cpu/tail-inl.h"

HWY_BEFORE_NAMESPACE();
namespace tg::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// y[i] = f(d, x[i]) for i < n; lanes past n in the last vector compute on zeros.
template <class D, class F>
HWY_INLINE void Map(D d, const hn::TFromD<D>* x, hn::TFromD<D>* y, int64_t n, F f) {
  const int64_t lanes = int64_t(hn::Lanes(d));
  int64_t i = 0;
  for (; i + 2 * lanes <= n; i += 2 * lanes) {
    const auto v0 = f(d, hn::LoadU(d, x + i)), v1 = f(d, hn::LoadU(d, x + i + lanes));
    hn::StoreU(v0, d, y + i);
    hn::StoreU(v1, d, y + i + lanes);
  }
  for (; i + lanes <= n; i += lanes) hn::StoreU(f(d, hn::LoadU(d, x + i)), d, y + i);
  if (i == n) return;
  const size_t left = size_t(n - i);
  StoreTail(f(d, LoadTail(d, x + i, left)), d, y + i, left);
}

// y[i] = f(d, a[i], b[i]) for i < n, where a scalar operand (kScalarA, kScalarB) is a[0] (b[0]) for every i.
template <bool kScalarA, bool kScalarB, class D, class F>
HWY_INLINE void Map(D d, const hn::TFromD<D>* a, const hn::TFromD<D>* b, hn::TFromD<D>* y, int64_t n, F f) {
  if (n <= 0) return;
  const int64_t lanes = int64_t(hn::Lanes(d));
  const auto sa = hn::Set(d, a[0]), sb = hn::Set(d, b[0]);
  int64_t i = 0;
  for (; i + 2 * lanes <= n; i += 2 * lanes) {
    const auto r0 = f(d, kScalarA ? sa : hn::LoadU(d, a + i), kScalarB ? sb : hn::LoadU(d, b + i));
    const auto r1 = f(d, kScalarA ? sa : hn::LoadU(d, a + i + lanes), kScalarB ? sb : hn::LoadU(d, b + i + lanes));
    hn::StoreU(r0, d, y + i);
    hn::StoreU(r1, d, y + i + lanes);
  }
  for (; i + lanes <= n; i += lanes) {
    const auto va = kScalarA ? sa : hn::LoadU(d, a + i);
    const auto vb = kScalarB ? sb : hn::LoadU(d, b + i);
    hn::StoreU(f(d, va, vb), d, y + i);
  }
  if (i == n) return;
  const size_t left = size_t(n - i);
  const auto va = kScalarA ? sa : LoadTail(d, a + i, left);
  const auto vb = kScalarB ? sb : LoadTail(d, b + i, left);
  StoreTail(f(d, va, vb), d, y + i, left);
}

}  // namespace tg::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // TG_CPU_MAP_INL_H_
