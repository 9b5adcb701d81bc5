// Scalar elementwise loops that have no Highway line: f64 gelu's gradient, tanh's gradient and the finiteness
// test (ops/unary.cpp), the bias rows that linear prefills (ops/linalg.cpp); portable C++ the compiler vectorises.
#include <algorithm>
#include <bit>
#include <cmath>
#include <type_traits>

#include "core/cpu/kernels.h"

namespace tg::cpu {

void gelu_backward_f64(const double* dy, const double* x, double* dx, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const double v = x[i];  // the limits 1 and 0 at ±inf, where v·φ(v) would be inf·0
    dx[i] = dy[i] * (std::isinf(v) ? double(v > 0)
                                   : 0.5 * std::erfc(-v * 0.7071067811865476) +
                                         v * 0.3989422804014327 * std::exp(-0.5 * v * v));
  }
}

template <class T>
void tanh_backward(const T* dy, const T* y, T* dx, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dx[i] = dy[i] * (T(1) - y[i] * y[i]);
}

template <class T>
bool all_finite(const T* x, int64_t n) {
  // On the bits (all exponent bits set: inf or NaN), so that the loop vectorises: a float comparison does
  // not under -ftrapping-math, and the sentiment trainer checks every gradient at every step.
  using U = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  constexpr U kExponent = sizeof(T) == 4 ? U(0x7F800000u) : U(0x7FF0000000000000ull);
  U bad = 0;
  for (int64_t i = 0; i < n; ++i) bad |= U((std::bit_cast<U>(x[i]) & kExponent) == kExponent);
  return bad == 0;
}

void repeat_row(const float* row, float* out, int64_t rows, int64_t n) {
  parallel_for(rows, std::max<int64_t>(1, kGrainElements / n), [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i)
      std::copy(row, row + n, out + i * n);
  });
}

template void tanh_backward(const float*, const float*, float*, int64_t);
template void tanh_backward(const double*, const double*, double*, int64_t);
template bool all_finite(const float*, int64_t);
template bool all_finite(const double*, int64_t);

}  // namespace tg::cpu
