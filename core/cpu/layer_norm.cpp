// The f32 layer-norm rows, forward and backward, written once on Highway and dispatched to the CPU's best
// target. Whole vectors move with plain loads and stores, only a row's last partial vector masked
// (tail-inl.h). The contracts, accuracy and order of summation are in kernels.h.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "core/cpu/layer_norm.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "core/cpu/tail-inl.h"

#include <cmath>
#include <cstdint>

#include "core/cpu/kernels.h"

HWY_BEFORE_NAMESPACE();
namespace tg::cpu::HWY_NAMESPACE {
namespace {

using DF = hn::ScalableTag<float>;
using D64 = hn::ScalableTag<double>;
using DH = hn::Rebind<float, D64>;  // as many floats as a vector has doubles

// Vectors cannot be array elements on SVE (sizeless types), so R = 4 rows' accumulators are four variables;
// Rows(R, f) calls f(acc, r) for each row r < R with its accumulator.
template <int R, class V, class F>
HWY_INLINE void Rows(V& a0, V& a1, V& a2, V& a3, F&& f) {
  static_assert(R == 1 || R == 4);
  f(a0, 0);
  if constexpr (R == 4) f(a1, 1), f(a2, 2), f(a3, 3);
}

// Σ double(x[j]) (kCentered: Σ (double(x[j]) - m)²) of R rows n apart, into sums: R rows at once, as one
// row's chain of dependent adds left the adder idle most of the time.
template <int R, bool kCentered>
HWY_INLINE void RowSums(const float* x, size_t n, const double* m, double* sums) {
  const D64 d;
  const DH dh;
  auto a0 = hn::Zero(d), a1 = a0, a2 = a0, a3 = a0;
  ForBlocks(d, n, [&](size_t j, auto s) {
    Rows<R>(a0, a1, a2, a3, [&](auto& acc, int r) {
      const auto v = hn::PromoteTo(d, s.Load(dh, x + r * n + j));
      if constexpr (kCentered) {
        const auto c = s.Keep(d, hn::Sub(v, hn::Set(d, m[r])));
        acc = hn::MulAdd(c, c, acc);
      } else {
        acc = hn::Add(acc, v);
      }
    });
  });
  Rows<R>(a0, a1, a2, a3, [&](auto& acc, int r) { sums[r] = hn::GetLane(hn::SumOfLanes(d, acc)); });
}

// R rows: their means and variances, then x̂ = (x - mean)·rstd in double rounded to f32, and the affine
// x̂·w + b in f32 (a product, then a sum).
template <int R>
HWY_INLINE void NormalizeRows(const float* x, float* xhat, float* y, const float* w, const float* b, size_t n,
                              double eps, float* mean, float* rstd) {
  const double zeros[R] = {};
  double m[R], v[R];
  RowSums<R, false>(x, n, zeros, m);
  for (double& mr : m) mr /= double(n);
  RowSums<R, true>(x, n, m, v);
  const D64 d;
  const DH dh;
  for (int r = 0; r < R; ++r, x += n, xhat += n, y = y ? y + n : y) {
    const double rs = 1.0 / std::sqrt(v[r] / double(n) + eps);
    const auto vm = hn::Set(d, m[r]), vrs = hn::Set(d, rs);
    ForBlocks(d, n, [&](size_t j, auto s) {
      const auto h = hn::DemoteTo(dh, hn::Mul(hn::Sub(hn::PromoteTo(d, s.Load(dh, x + j)), vm), vrs));
      s.Store(h, dh, xhat + j);
      if (!y) return;
      auto a = w ? hn::Mul(h, s.Load(dh, w + j)) : h;
      if (b) a = hn::Add(a, s.Load(dh, b + j));
      s.Store(a, dh, y + j);
    });
    mean[r] = float(m[r]), rstd[r] = float(rs);
  }
}

// R rows of the backward: the means of g = dy·w and g·x̂ in f32, R rows at once as in RowSums; then dx row
// by row within each vector of columns, so that dw and db take the R rows' terms, in row order, in registers.
template <int R>
HWY_INLINE void BackwardRows(const float* dy, const float* xhat, const float* w, const float* rstd, float* dx,
                             double* dw, double* db, size_t n) {
  const DF df;
  auto g0 = hn::Zero(df), g1 = g0, g2 = g0, g3 = g0, gx0 = g0, gx1 = g0, gx2 = g0, gx3 = g0;
  ForBlocks(df, n, [&](size_t j, auto s) {
    const auto wj = w ? s.Load(df, w + j) : hn::Zero(df);
    const auto add = [&](auto& acc_g, auto& acc_gx, int r) {
      auto g = s.Load(df, dy + r * n + j);
      if (w) g = hn::Mul(g, wj);
      acc_g = hn::Add(acc_g, g);
      acc_gx = hn::MulAdd(g, s.Load(df, xhat + r * n + j), acc_gx);
    };
    add(g0, gx0, 0);
    if constexpr (R == 4) add(g1, gx1, 1), add(g2, gx2, 2), add(g3, gx3, 3);
  });
  float mg[R], mgx[R];
  Rows<R>(g0, g1, g2, g3, [&](auto& acc, int r) { mg[r] = hn::GetLane(hn::SumOfLanes(df, acc)) / float(n); });
  Rows<R>(gx0, gx1, gx2, gx3, [&](auto& acc, int r) { mgx[r] = hn::GetLane(hn::SumOfLanes(df, acc)) / float(n); });
  const D64 d;
  const DH dh;
  ForBlocks(d, n, [&](size_t j, auto s) {
    const auto wj = w ? s.Load(dh, w + j) : hn::Zero(dh);
    auto dwj = dw ? s.Load(d, dw + j) : hn::Zero(d);
    auto dbj = db ? s.Load(d, db + j) : hn::Zero(d);
    HWY_UNROLL(4)
    for (int r = 0; r < R; ++r) {
      const auto dyr = s.Load(dh, dy + r * n + j), h = s.Load(dh, xhat + r * n + j);
      const auto g = w ? hn::Mul(dyr, wj) : dyr;
      const auto centered = hn::NegMulAdd(h, hn::Set(dh, mgx[r]), hn::Sub(g, hn::Set(dh, mg[r])));
      s.Store(hn::Mul(hn::Set(dh, rstd[r]), centered), dh, dx + r * n + j);
      const auto d64 = hn::PromoteTo(d, dyr);
      if (dw) dwj = hn::Add(dwj, hn::Mul(d64, hn::PromoteTo(d, h)));
      if (db) dbj = hn::Add(dbj, d64);
    }
    if (dw) s.Store(dwj, d, dw + j);
    if (db) s.Store(dbj, d, db + j);
  });
}

// Rows in groups of 4 (4 chains keep the adder busy), the rest one by one: a row's arithmetic is the same
// either way.
constexpr int kRows = 4;

void LayerNormF32(const float* x, float* xhat, float* y, const float* w, const float* b, size_t rows, size_t n,
                  double eps, float* mean, float* rstd) {
  size_t i = 0;
  for (; i + kRows <= rows; i += kRows)
    NormalizeRows<kRows>(x + i * n, xhat + i * n, y ? y + i * n : y, w, b, n, eps, mean + i, rstd + i);
  for (; i < rows; ++i) NormalizeRows<1>(x + i * n, xhat + i * n, y ? y + i * n : y, w, b, n, eps, mean + i, rstd + i);
}

void LayerNormBackwardF32(const float* dy, const float* xhat, const float* w, const float* rstd, float* dx,
                          double* dw, double* db, size_t rows, size_t n) {
  size_t i = 0;
  for (; i + kRows <= rows; i += kRows)
    BackwardRows<kRows>(dy + i * n, xhat + i * n, w, rstd + i, dx + i * n, dw, db, n);
  for (; i < rows; ++i) BackwardRows<1>(dy + i * n, xhat + i * n, w, rstd + i, dx + i * n, dw, db, n);
}

}  // namespace
}  // namespace tg::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tg::cpu {

HWY_EXPORT(LayerNormF32);
HWY_EXPORT(LayerNormBackwardF32);

void layer_norm_f32(const float* x, float* xhat, float* y, const float* w, const float* b, int64_t rows, int64_t n,
                    double eps, float* mean, float* rstd) {
  HWY_DYNAMIC_DISPATCH(LayerNormF32)(x, xhat, y, w, b, size_t(rows), size_t(n), eps, mean, rstd);
}

void layer_norm_backward_f32(const float* dy, const float* xhat, const float* w, const float* rstd, float* dx,
                             double* dw, double* db, int64_t rows, int64_t n) {
  HWY_DYNAMIC_DISPATCH(LayerNormBackwardF32)(dy, xhat, w, rstd, dx, dw, db, size_t(rows), size_t(n));
}

}  // namespace tg::cpu
#endif
