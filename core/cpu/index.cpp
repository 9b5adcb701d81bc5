// The loops of core/index.cpp's lookups, on indices it has checked: slices moved along a dim (index_select,
// index_add) and rows summed into bags (embedding_bag_sum and its adjoint).
#include "core/cpu/kernels.h"

namespace tg::cpu {

template <class T>
void move_slices(const T* src, T* dst, Around s, Around d, const std::vector<std::pair<int64_t, int64_t>>& pairs,
                 bool add) {
  for (int64_t o = 0; o < s.outer; ++o)
    for (auto [dj, sj] : pairs) {
      const T* ps = src + (o * s.n + sj) * s.inner;
      T* pd = dst + (o * d.n + dj) * d.inner;
      for (int64_t i = 0; i < s.inner; ++i) pd[i] = add ? T(pd[i] + ps[i]) : ps[i];
    }
}

template <class T>
void bag_sum(const T* rows, const int64_t* index, int64_t M, int64_t N, int64_t D, int64_t padding_idx, bool adjoint,
             T* out) {
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n)
      if (const int64_t r = index[m * N + n]; r != padding_idx) {
        const T* from = rows + (adjoint ? m : r) * D;
        T* to = out + (adjoint ? r : m) * D;
        for (int64_t d = 0; d < D; ++d) to[d] += from[d];
      }
}

using Pairs = std::vector<std::pair<int64_t, int64_t>>;
template void move_slices(const float*, float*, Around, Around, const Pairs&, bool);
template void move_slices(const double*, double*, Around, Around, const Pairs&, bool);
template void move_slices(const int64_t*, int64_t*, Around, Around, const Pairs&, bool);
template void move_slices(const bool*, bool*, Around, Around, const Pairs&, bool);
template void bag_sum(const float*, const int64_t*, int64_t, int64_t, int64_t, int64_t, bool, float*);
template void bag_sum(const double*, const int64_t*, int64_t, int64_t, int64_t, int64_t, bool, double*);
template void bag_sum(const int64_t*, const int64_t*, int64_t, int64_t, int64_t, int64_t, bool, int64_t*);

}  // namespace tg::cpu
