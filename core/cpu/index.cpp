// The loops of ops/index.cpp's lookups, on indices it has checked: slices moved along a dim (index_select,
// index_add), rows summed into bags (embedding_bag_sum and its adjoint), and elements picked or written along a
// dim (gather, scatter, scatter_add).
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

namespace {

// Calls f(p, at) for each position p of the contiguous index of shape `is`, `at` the offset into the contiguous x of
// shape `xs` of p's coordinates with the one along `dim` replaced by index[p].
template <class F>
void for_each_gathered(const int64_t* index, const Shape& is, int64_t dim, const Shape& xs, F f) {
  const Strides xst = contiguous_strides(xs), ist = contiguous_strides(is);
  const int64_t n = is.numel();
  for (int64_t p = 0; p < n; ++p) {
    int64_t off = 0, rem = p;
    for (int64_t d = 0; d < int64_t(xs.size()); ++d) {
      const int64_t coord = rem / ist[d];
      rem %= ist[d];
      off += (d == dim ? index[p] : coord) * xst[d];
    }
    f(p, off);
  }
}

}  // namespace

template <class T>
void gather_along(const T* x, const Shape& xs, const int64_t* index, const Shape& is, int64_t dim, T* out) {
  for_each_gathered(index, is, dim, xs, [&](int64_t p, int64_t at) { out[p] = x[at]; });
}

template <class T>
void scatter_along(const T* src, const int64_t* index, const Shape& is, int64_t dim, const Shape& xs, bool add, T* x) {
  for_each_gathered(index, is, dim, xs, [&](int64_t p, int64_t at) { x[at] = add ? T(x[at] + src[p]) : src[p]; });
}

using Pairs = std::vector<std::pair<int64_t, int64_t>>;
template void move_slices(const float*, float*, Around, Around, const Pairs&, bool);
template void move_slices(const double*, double*, Around, Around, const Pairs&, bool);
template void move_slices(const int64_t*, int64_t*, Around, Around, const Pairs&, bool);
template void move_slices(const bool*, bool*, Around, Around, const Pairs&, bool);
template void bag_sum(const float*, const int64_t*, int64_t, int64_t, int64_t, int64_t, bool, float*);
template void bag_sum(const double*, const int64_t*, int64_t, int64_t, int64_t, int64_t, bool, double*);
template void bag_sum(const int64_t*, const int64_t*, int64_t, int64_t, int64_t, int64_t, bool, int64_t*);
template void gather_along(const float*, const Shape&, const int64_t*, const Shape&, int64_t, float*);
template void scatter_along(const float*, const int64_t*, const Shape&, int64_t, const Shape&, bool, float*);
template void gather_along(const double*, const Shape&, const int64_t*, const Shape&, int64_t, double*);
template void scatter_along(const double*, const int64_t*, const Shape&, int64_t, const Shape&, bool, double*);
template void gather_along(const int64_t*, const Shape&, const int64_t*, const Shape&, int64_t, int64_t*);
template void scatter_along(const int64_t*, const int64_t*, const Shape&, int64_t, const Shape&, bool, int64_t*);
template void gather_along(const bool*, const Shape&, const int64_t*, const Shape&, int64_t, bool*);
template void scatter_along(const bool*, const int64_t*, const Shape&, int64_t, const Shape&, bool, bool*);

}  // namespace tg::cpu
