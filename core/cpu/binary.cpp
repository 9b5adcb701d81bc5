// The f32 and f64 arithmetic lines (add, sub, mul, div) of ops/elementwise.cpp's flat cases, written once in
// Highway ops for every target. Each element is one IEEE operation, so every target gives the same bits.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "core/cpu/binary.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "core/cpu/kernels.h"
#include "core/cpu/map-inl.h"

HWY_BEFORE_NAMESPACE();
namespace tg::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <class T, class F>
HWY_INLINE void Line(const T* a, bool a_scalar, const T* b, bool b_scalar, T* out, int64_t n, F f) {
  const hn::ScalableTag<T> d;
  if (a_scalar) return Map<true, false>(d, a, b, out, n, f);
  if (b_scalar) return Map<false, true>(d, a, b, out, n, f);
  Map<false, false>(d, a, b, out, n, f);
}

template <class T>
HWY_INLINE void ArithLine(Arith op, const T* a, bool a_scalar, const T* b, bool b_scalar, T* out, int64_t n) {
  switch (op) {
    case Arith::add: return Line(a, a_scalar, b, b_scalar, out, n, [](auto, auto x, auto y) { return hn::Add(x, y); });
    case Arith::sub: return Line(a, a_scalar, b, b_scalar, out, n, [](auto, auto x, auto y) { return hn::Sub(x, y); });
    case Arith::mul: return Line(a, a_scalar, b, b_scalar, out, n, [](auto, auto x, auto y) { return hn::Mul(x, y); });
    case Arith::div: return Line(a, a_scalar, b, b_scalar, out, n, [](auto, auto x, auto y) { return hn::Div(x, y); });
  }
}

// Row r of out = row r of full (op) row, or row (op) row r of full when row_first.
template <class T>
HWY_INLINE void ArithRows(Arith op, const T* full, const T* row, bool row_first, T* out, int64_t rows, int64_t m) {
  for (int64_t r = 0; r < rows; ++r) {
    const T* f = full + r * m;
    if (row_first) ArithLine(op, row, false, f, false, out + r * m, m);
    else ArithLine(op, f, false, row, false, out + r * m, m);
  }
}

void ArithF32(Arith op, const float* a, bool a_scalar, const float* b, bool b_scalar, float* out, int64_t n) {
  ArithLine(op, a, a_scalar, b, b_scalar, out, n);
}
void ArithF64(Arith op, const double* a, bool a_scalar, const double* b, bool b_scalar, double* out, int64_t n) {
  ArithLine(op, a, a_scalar, b, b_scalar, out, n);
}
void ArithRowsF32(Arith op, const float* full, const float* row, bool row_first, float* out, int64_t rows, int64_t m) {
  ArithRows(op, full, row, row_first, out, rows, m);
}
void ArithRowsF64(Arith op, const double* full, const double* row, bool row_first, double* out, int64_t rows,
                  int64_t m) {
  ArithRows(op, full, row, row_first, out, rows, m);
}

}  // namespace tg::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tg::cpu {
HWY_EXPORT(ArithF32);
HWY_EXPORT(ArithF64);
HWY_EXPORT(ArithRowsF32);
HWY_EXPORT(ArithRowsF64);
void arith_f32(Arith op, const float* a, bool a_scalar, const float* b, bool b_scalar, float* out, int64_t n) {
  HWY_DYNAMIC_DISPATCH(ArithF32)(op, a, a_scalar, b, b_scalar, out, n);
}
void arith_f64(Arith op, const double* a, bool a_scalar, const double* b, bool b_scalar, double* out, int64_t n) {
  HWY_DYNAMIC_DISPATCH(ArithF64)(op, a, a_scalar, b, b_scalar, out, n);
}
void arith_rows_f32(Arith op, const float* full, const float* row, bool row_first, float* out, int64_t rows,
                    int64_t m) {
  HWY_DYNAMIC_DISPATCH(ArithRowsF32)(op, full, row, row_first, out, rows, m);
}
void arith_rows_f64(Arith op, const double* full, const double* row, bool row_first, double* out, int64_t rows,
                    int64_t m) {
  HWY_DYNAMIC_DISPATCH(ArithRowsF64)(op, full, row, row_first, out, rows, m);
}
}  // namespace tg::cpu
#endif
