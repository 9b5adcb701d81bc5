// normalize.cpp's f32 layer-norm rows, forward and backward, on AVX-512. The portable rows are built for the
// baseline x86-64 (SSE: 2 doubles or 4 floats a vector), where layer_norm forward and backward of config M's
// (4096, 256) took 2.1-2.8 ms against PyTorch's 1.4-2.1 (bench_micro). These are the same operations written
// out on vectors, so the bits are the portable rows' (-ffp-contract=off keeps each product and sum rounded):
//  - the sums follow sum8: 8 lanes over the whole blocks of 8 (8 doubles, or 8 floats), the tail in order
//    from +0, then the lanes added to it one by one;
//  - x̂ = float((double(x) - mean)·rstd) and the affine x̂·w + b in f32, as the portable row rounds them;
//  - dw and db gain dy·x̂ and dy in double, element by element.
// tests/core/layer_norm_row_test.cpp compares the rows bit for bit on every length to 200 and wider, with
// large offsets, ±0, subnormals, inf and NaN.
#include "core/cpu/kernels.h"

#include <cmath>

#include "core/cpu/avx512.h"

namespace tg::cpu {
namespace {

TG_AVX512 inline __mmask8 tail_mask8(int64_t left) { return __mmask8(tail_mask(left)); }

// store16 (avx512.h) on 8 lanes of f32 or f64: whole blocks (k = 0xff) stored plain.
TG_AVX512 inline void store8(float* p, __mmask8 k, __m256 v) {
  if (k == 0xff) _mm256_storeu_ps(p, v);
  else _mm256_mask_storeu_ps(p, k, v);
}
TG_AVX512 inline void store8(double* p, __mmask8 k, __m512d v) {
  if (k == 0xff) _mm512_storeu_pd(p, v);
  else _mm512_mask_storeu_pd(p, k, v);
}

// sum8<double> of normalize.cpp over double(x[j]), or over (double(x[j]) - m)² when kCentered, for R rows n
// apart at once: one row's chain of dependent adds left the adder idle most of the time; R chains overlap.
template <int R, bool kCentered>
TG_AVX512 inline void sum8_f64(const float* x, int64_t n, const double* m, double* sums) {
  __m512d acc[R], vm[R];
  for (int r = 0; r < R; ++r) acc[r] = _mm512_setzero_pd(), vm[r] = _mm512_set1_pd(m[r]);
  int64_t j = 0;
  for (; j + 8 <= n; j += 8)
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      __m512d v = _mm512_cvtps_pd(_mm256_loadu_ps(x + r * n + j));
      if constexpr (kCentered) v = _mm512_mul_pd(_mm512_sub_pd(v, vm[r]), _mm512_sub_pd(v, vm[r]));
      acc[r] = _mm512_add_pd(acc[r], v);
    }
  for (int r = 0; r < R; ++r) {
    const float* xr = x + r * n;
    double s = 0.0;
    for (int64_t t = j; t < n; ++t) s += kCentered ? (double(xr[t]) - m[r]) * (double(xr[t]) - m[r]) : double(xr[t]);
    alignas(64) double lanes[8];
    _mm512_store_pd(lanes, acc[r]);
    for (double lane : lanes) s += lane;
    sums[r] = s;
  }
}

template <int R>
TG_AVX512 void normalize_rows(const float* x, float* xhat, float* y, const float* w, const float* b, int64_t n,
                              double eps, float* mean, float* rstd) {
  const double zeros[R] = {};
  double m[R], v[R];
  sum8_f64<R, false>(x, n, zeros, m);
  for (double& mr : m) mr /= double(n);
  sum8_f64<R, true>(x, n, m, v);
  for (int r = 0; r < R; ++r, x += n, xhat += n, y = y ? y + n : y) {
    const double rs = 1.0 / std::sqrt(v[r] / double(n) + eps);
    const __m512d vm = _mm512_set1_pd(m[r]), vrs = _mm512_set1_pd(rs);
    for (int64_t j = 0; j < n; j += 8) {
      const __mmask8 k = tail_mask8(n - j);
      const __m512d d = _mm512_cvtps_pd(_mm256_maskz_loadu_ps(k, x + j));
      const __m256 h = _mm512_cvtpd_ps(_mm512_mul_pd(_mm512_sub_pd(d, vm), vrs));
      store8(xhat + j, k, h);
      if (!y) continue;
      __m256 a = w ? _mm256_mul_ps(h, _mm256_maskz_loadu_ps(k, w + j)) : h;
      if (b) a = _mm256_add_ps(a, _mm256_maskz_loadu_ps(k, b + j));
      store8(y + j, k, a);
    }
    mean[r] = float(m[r]), rstd[r] = float(rs);
  }
}

// R rows of the backward. The two means of each row are sum8<float> over g = dy·w, R rows at once as in
// sum8_f64; then dx row by row within each block of 8 columns, so that dw and db take the R rows' terms, in
// row order, in registers.
template <int R>
TG_AVX512 void layer_norm_backward_rows(const float* dy, const float* xhat, const float* w, const float* rstd,
                                        float* dx, double* dw, double* db, int64_t n) {
  __m256 acc_g[R], acc_gx[R];
  for (int r = 0; r < R; ++r) acc_g[r] = acc_gx[r] = _mm256_setzero_ps();
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) {
    const __m256 wj = w ? _mm256_loadu_ps(w + j) : _mm256_setzero_ps();
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      __m256 g = _mm256_loadu_ps(dy + r * n + j);
      if (w) g = _mm256_mul_ps(g, wj);
      acc_g[r] = _mm256_add_ps(acc_g[r], g);
      acc_gx[r] = _mm256_add_ps(acc_gx[r], _mm256_mul_ps(g, _mm256_loadu_ps(xhat + r * n + j)));
    }
  }
  __m256 mg[R], mgx[R], rs[R];
  for (int r = 0; r < R; ++r) {
    float sg = 0.0f, sgx = 0.0f;
    for (int64_t t = j; t < n; ++t) {
      const float g = w ? dy[r * n + t] * w[t] : dy[r * n + t];
      sg += g, sgx += g * xhat[r * n + t];
    }
    alignas(32) float lanes_g[8], lanes_gx[8];
    _mm256_store_ps(lanes_g, acc_g[r]);
    _mm256_store_ps(lanes_gx, acc_gx[r]);
    for (int k = 0; k < 8; ++k) sg += lanes_g[k], sgx += lanes_gx[k];
    mg[r] = _mm256_set1_ps(sg / float(n)), mgx[r] = _mm256_set1_ps(sgx / float(n)), rs[r] = _mm256_set1_ps(rstd[r]);
  }
  for (j = 0; j < n; j += 8) {
    const __mmask8 k = tail_mask8(n - j);
    const __m256 wj = w ? _mm256_maskz_loadu_ps(k, w + j) : _mm256_setzero_ps();
    __m512d dwj = dw ? _mm512_maskz_loadu_pd(k, dw + j) : _mm512_setzero_pd();
    __m512d dbj = db ? _mm512_maskz_loadu_pd(k, db + j) : _mm512_setzero_pd();
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      const __m256 d = _mm256_maskz_loadu_ps(k, dy + r * n + j), h = _mm256_maskz_loadu_ps(k, xhat + r * n + j);
      const __m256 g = w ? _mm256_mul_ps(d, wj) : d;
      const __m256 dxj = _mm256_mul_ps(rs[r], _mm256_sub_ps(_mm256_sub_ps(g, mg[r]), _mm256_mul_ps(h, mgx[r])));
      store8(dx + r * n + j, k, dxj);
      const __m512d d64 = _mm512_cvtps_pd(d);
      if (dw) dwj = _mm512_add_pd(dwj, _mm512_mul_pd(d64, _mm512_cvtps_pd(h)));
      if (db) dbj = _mm512_add_pd(dbj, d64);
    }
    if (dw) store8(dw + j, k, dwj);
    if (db) store8(db + j, k, dbj);
  }
}

// Rows in groups of 4 (R = 4 keeps the double adder busy), the rest one by one.
constexpr int kRows = 4;

}  // namespace

bool layer_norm_f32_avx512(const float* x, float* xhat, float* y, const float* w, const float* b, int64_t rows,
                           int64_t n, double eps, float* mean, float* rstd) {
  if (!has_avx512()) return false;
  int64_t i = 0;
  for (; i + kRows <= rows; i += kRows)
    normalize_rows<kRows>(x + i * n, xhat + i * n, y ? y + i * n : y, w, b, n, eps, mean + i, rstd + i);
  for (; i < rows; ++i) normalize_rows<1>(x + i * n, xhat + i * n, y ? y + i * n : y, w, b, n, eps, mean + i, rstd + i);
  return true;
}

bool layer_norm_backward_f32_avx512(const float* dy, const float* xhat, const float* w, const float* rstd, float* dx,
                                    double* dw, double* db, int64_t rows, int64_t n) {
  if (!has_avx512()) return false;
  int64_t i = 0;
  for (; i + kRows <= rows; i += kRows)
    layer_norm_backward_rows<kRows>(dy + i * n, xhat + i * n, w, rstd + i, dx + i * n, dw, db, n);
  for (; i < rows; ++i) layer_norm_backward_rows<1>(dy + i * n, xhat + i * n, w, rstd + i, dx + i * n, dw, db, n);
  return true;
}

}  // namespace tg::cpu
