// Per-target helpers of the kernel room (Highway's per-target include guard: include it after
// <hwy/highway.h>, inside a file compiled once per target through foreach_target.h).
//
// A line is walked in whole vectors with plain loads and stores and only its last partial vector masked:
// on AMD Zen 5, masked loads of whole vectors from memory did not start the hardware prefetcher's streams,
// and masked stores of whole vectors into fresh memory were as slow (bench/RESULTS.md). ForBlocks(d, n, f) calls
// f(j, Whole()) for each whole vector at j and f(j, Tail{count}) for the last count < Lanes(d) elements;
// f loads and stores through the span it is given (Load, Store, Keep), so one body serves both.
#if defined(TG_CPU_TAIL_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TG_CPU_TAIL_INL_H_
#undef TG_CPU_TAIL_INL_H_
#else
#define TG_CPU_TAIL_INL_H_
#endif

#include <cstddef>

#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace tg::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Whether hn::MaskedLoad and hn::BlendedStore of T lanes touch no memory outside the mask. Elsewhere (SSE4,
// NEON, AVX2's byte lanes) they load the whole vector, and NEON's BlendedStore writes it back: past the end
// of a line, possibly into another thread's, so the tail goes through a buffer there.
template <typename T>
constexpr bool kMaskedMemoryExact =
    HWY_HAVE_SCALABLE || (HWY_ARCH_X86 && (HWY_TARGET <= HWY_AVX3 || (HWY_TARGET == HWY_AVX2 && sizeof(T) >= 4)));

/// p[0, count) in the first lanes and zeros in the others, count < Lanes(d); reads nothing past p + count.
template <class D, typename T = hn::TFromD<D>>
HWY_INLINE hn::Vec<D> LoadTail(D d, const T* HWY_RESTRICT p, size_t count) {
  if constexpr (kMaskedMemoryExact<T>) {
    return hn::MaskedLoad(hn::FirstN(d, count), d, p);
  } else {
    HWY_ALIGN T buf[hn::MaxLanes(d)] = {};
    for (size_t i = 0; i < count; ++i) buf[i] = p[i];
    return hn::Load(d, buf);
  }
}

/// The first count lanes of v into p[0, count), count < Lanes(d); writes nothing past p + count.
template <class D, typename T = hn::TFromD<D>>
HWY_INLINE void StoreTail(hn::Vec<D> v, D d, T* HWY_RESTRICT p, size_t count) {
  if constexpr (kMaskedMemoryExact<T>) {
    hn::BlendedStore(v, hn::FirstN(d, count), d, p);
  } else {
    HWY_ALIGN T buf[hn::MaxLanes(d)];
    hn::Store(v, d, buf);
    for (size_t i = 0; i < count; ++i) p[i] = buf[i];
  }
}

/// A whole vector of a line: plain loads and stores.
struct Whole {
  template <class D, typename T = hn::TFromD<D>>
  HWY_INLINE hn::Vec<D> Load(D d, const T* HWY_RESTRICT p) const { return hn::LoadU(d, p); }
  template <class D, typename T = hn::TFromD<D>>
  HWY_INLINE void Store(hn::Vec<D> v, D d, T* HWY_RESTRICT p) const { hn::StoreU(v, d, p); }
  /// v where the line is (everywhere).
  template <class D>
  HWY_INLINE hn::Vec<D> Keep(D, hn::Vec<D> v) const { return v; }
  template <class D>
  HWY_INLINE hn::Vec<D> Keep(D, hn::Vec<D> v, hn::Vec<D>) const { return v; }
};

/// The last `count` elements of a line, fewer than a vector: loads give zeros past them, stores stop there.
struct Tail {
  size_t count;
  template <class D, typename T = hn::TFromD<D>>
  HWY_INLINE hn::Vec<D> Load(D d, const T* HWY_RESTRICT p) const { return LoadTail(d, p, count); }
  template <class D, typename T = hn::TFromD<D>>
  HWY_INLINE void Store(hn::Vec<D> v, D d, T* HWY_RESTRICT p) const { StoreTail(v, d, p, count); }
  /// v in the first count lanes, `past` (zeros if not given) past the line.
  template <class D>
  HWY_INLINE hn::Vec<D> Keep(D d, hn::Vec<D> v) const { return hn::IfThenElseZero(hn::FirstN(d, count), v); }
  template <class D>
  HWY_INLINE hn::Vec<D> Keep(D d, hn::Vec<D> v, hn::Vec<D> past) const {
    return hn::IfThenElse(hn::FirstN(d, count), v, past);
  }
};

/// f(j, Whole()) for j = 0, L, 2L, ... while a whole vector of L = Lanes(d) fits in n, then f(j, Tail{n - j})
/// if elements are left.
template <class D, class F>
HWY_INLINE void ForBlocks(D d, size_t n, F&& f) {
  const size_t lanes = hn::Lanes(d);
  size_t j = 0;
  for (; j + lanes <= n; j += lanes) f(j, Whole());
  if (j < n) f(j, Tail{n - j});
}

}  // namespace tg::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // TG_CPU_TAIL_INL_H_
