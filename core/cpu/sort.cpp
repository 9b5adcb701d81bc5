// The sorts of ops/order.cpp (sort, argsort, topk) over contiguous rows, threaded over rows: each row's
// indices ordered by a total order (value, then index), so the result is the stable sort's and the same at any
// thread count.
#include <algorithm>
#include <numeric>
#include <vector>

#include "core/cpu/kernels.h"

namespace tg::cpu {
namespace {

// a < b with NaN above every number and equal to itself (x != x is false for integers).
template <class T>
bool below(T a, T b) {
  return a == a && (b != b || a < b);
}

}  // namespace

template <class T>
void sort_rows(const T* x, int64_t rows, int64_t len, int64_t k, bool descending, T* values, int64_t* indices) {
  const int64_t grain = std::max<int64_t>(1, kGrainElements / std::max<int64_t>(len, 1));
  parallel_for(rows, grain, [&](int64_t lo, int64_t hi) {
    std::vector<int64_t> order(static_cast<size_t>(len));
    for (int64_t r = lo; r < hi; ++r) {
      const T* p = x + r * len;
      auto before = [p, descending](int64_t i, int64_t j) {
        const bool ahead = descending ? below(p[j], p[i]) : below(p[i], p[j]);
        return ahead || (!below(p[i], p[j]) && !below(p[j], p[i]) && i < j);
      };
      std::iota(order.begin(), order.end(), int64_t(0));
      std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
      for (int64_t i = 0; i < k; ++i) values[r * k + i] = p[order[size_t(i)]], indices[r * k + i] = order[size_t(i)];
    }
  });
}

template void sort_rows(const float*, int64_t, int64_t, int64_t, bool, float*, int64_t*);
template void sort_rows(const double*, int64_t, int64_t, int64_t, bool, double*, int64_t*);
template void sort_rows(const int64_t*, int64_t, int64_t, int64_t, bool, int64_t*, int64_t*);

}  // namespace tg::cpu
