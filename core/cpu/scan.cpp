// Running sums and products along one dim (cumsum, cumprod): one accumulator per line, widened as PyTorch's
// CPU kernel widens it (double for floats), so that f32 results round once, like PyTorch's.
#include <algorithm>
#include <type_traits>

#include "core/cpu/kernels.h"

namespace tg::cpu {

template <class T>
void cumulate(const T* x, T* y, Around a, bool product) {
  // Unsigned for i64: its wrap-around on overflow is defined, and converts back to PyTorch's two's complement.
  using Acc = std::conditional_t<std::is_integral_v<T>, uint64_t, double>;
  const int64_t block = a.n * a.inner;
  const int64_t grain = std::max<int64_t>(1, kGrainElements / std::max<int64_t>(block, 1));
  parallel_for(a.outer, grain, [&](int64_t begin, int64_t end) {
    std::vector<Acc> acc(size_t(a.inner));
    for (int64_t o = begin; o < end; ++o) {
      std::fill(acc.begin(), acc.end(), Acc(product ? 1 : 0));
      for (int64_t j = 0; j < a.n; ++j) {
        const T* px = x + o * block + j * a.inner;
        T* py = y + o * block + j * a.inner;
        for (int64_t i = 0; i < a.inner; ++i) {
          acc[size_t(i)] = product ? Acc(acc[size_t(i)] * Acc(px[i])) : Acc(acc[size_t(i)] + Acc(px[i]));
          py[i] = T(acc[size_t(i)]);
        }
      }
    }
  });
}

template void cumulate(const float*, float*, Around, bool);
template void cumulate(const double*, double*, Around, bool);
template void cumulate(const int64_t*, int64_t*, Around, bool);

}  // namespace tg::cpu
