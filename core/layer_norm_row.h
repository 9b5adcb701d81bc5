#pragma once
// Internal to core: normalize.cpp's f32 layer-norm rows, forward and backward, on AVX-512 (see
// layer_norm_row.cpp), and the portable rows they stand in for. Each takes `rows` contiguous rows of n.
#include <cstdint>

namespace tg::detail {

/// Layer norm of each row: x̂ = (x - mean)·rstd into xhat, mean and variance summed in double in sum8's 8
/// lanes; x̂·w + b into y where y is non-null (w or b may then be null); each row's mean and rstd into mean[i]
/// and rstd[i]. Returns false, writing nothing, on a CPU without AVX-512; else the bits of the portable rows.
bool layer_norm_f32_avx512(const float* x, float* xhat, float* y, const float* w, const float* b, int64_t rows,
                           int64_t n, double eps, float* mean, float* rstd);

/// The gradient of each row, with g = dy·w (dy where w is null): dx = rstd·(g - mean(g) - x̂·mean(g·x̂)), the
/// means in sum8's 8 f32 lanes; dy·x̂ added into dw[0, n) and dy into db[0, n) in double, row after row,
/// where they are non-null. Returns false, writing nothing, on a CPU without AVX-512; else the portable bits.
bool layer_norm_backward_f32_avx512(const float* dy, const float* xhat, const float* w, const float* rstd, float* dx,
                                    double* dw, double* db, int64_t rows, int64_t n);

/// The portable rows (normalize.cpp) that the ones above stand in for, and that run where they return false.
void layer_norm_f32_portable(const float* x, float* xhat, float* y, const float* w, const float* b, int64_t rows,
                             int64_t n, double eps, float* mean, float* rstd);
void layer_norm_backward_f32_portable(const float* dy, const float* xhat, const float* w, const float* rstd, float* dx,
                                      double* dw, double* db, int64_t rows, int64_t n);

}  // namespace tg::detail
