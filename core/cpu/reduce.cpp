// The f32 column sums of ops/reduce.cpp (a bias gradient sums its rows), written once in Highway ops for every
// target. Each column's terms are added in double in the order of the rows, so every target gives the same bits.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "core/cpu/reduce.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "core/cpu/kernels.h"

HWY_BEFORE_NAMESPACE();
namespace tg::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// acc[i] += src[j·stride + i] in double, j in order: row after row, a vector of columns at a time.
void AddColumnsF32(const float* src, int64_t len, int64_t stride, int64_t m, double* acc) {
  const hn::ScalableTag<double> dd;
  const hn::Rebind<float, decltype(dd)> df;  // as many f32 lanes as f64 ones
  const int64_t lanes = int64_t(hn::Lanes(dd));
  for (int64_t j = 0; j < len; ++j) {
    const float* line = src + j * stride;
    int64_t i = 0;
    for (; i + lanes <= m; i += lanes)
      hn::StoreU(hn::Add(hn::LoadU(dd, acc + i), hn::PromoteTo(dd, hn::LoadU(df, line + i))), dd, acc + i);
    for (; i < m; ++i) acc[i] += double(line[i]);
  }
}

}  // namespace tg::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tg::cpu {
HWY_EXPORT(AddColumnsF32);
void add_columns_f32(const float* src, int64_t len, int64_t stride, int64_t m, double* acc) {
  HWY_DYNAMIC_DISPATCH(AddColumnsF32)(src, len, stride, m, acc);
}
}  // namespace tg::cpu
#endif
