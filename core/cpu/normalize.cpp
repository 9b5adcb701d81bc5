// Softmax, log-softmax and layer norm over whole tensors (ops/normalize.cpp's kernels), threaded over lines
// and rows. Contiguous f32 lines (the last dim: attention scores, logits) and rows run the Highway lines of
// softmax.cpp and layer_norm.cpp; other lines, and f64, the same maths here in double with libm.
#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>
#include <type_traits>
#include <vector>

#include "core/cpu/kernels.h"

namespace tg::cpu {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

template <class T>
constexpr bool is_f32 = std::is_same_v<T, float>;

// Lines of about a third of kGrainElements elements or more per thread: exp and division are heavier. Not a
// quarter: then 2^17 elements split in two, and a small model's attention softmax woke a cold worker every call
// for too little work (bench/RESULTS.md, "Issue 24, two threads on the GPT step").
int64_t line_grain(int64_t n) { return std::max<int64_t>(1, kGrainElements / 3 / std::max<int64_t>(n, 1)); }

// Calls f(base, n, stride) for every line of a split contiguous tensor, base the line's first element, over the
// pool. Empty lines hold nothing to write, and their tensors may have no storage at all (a null base).
template <class F>
void for_lines(Around a, F f) {
  if (a.n == 0) return;
  parallel_for(a.outer * a.inner, line_grain(a.n), [&](int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r) f((r / a.inner) * a.n * a.inner + r % a.inner, a.n, a.inner);
  });
}

// The softmax of one line of n elements s apart (in may be out).
template <class T>
void softmax_line(const T* in, T* out, int64_t n, int64_t s) {
  if constexpr (is_f32<T>)
    if (s == 1) return softmax_f32(in, out, n);
  double m = -kInf, sum = 0;
  for (int64_t j = 0; j < n; ++j) m = std::max(m, double(in[j * s]));
  if (!std::isfinite(m)) return nonfinite_softmax_line(in, out, n, s, false);
  for (int64_t j = 0; j < n; ++j) sum += double(out[j * s] = T(std::exp(double(in[j * s]) - m)));
  for (int64_t j = 0; j < n; ++j) out[j * s] = T(double(out[j * s]) / sum);
}

// A finite row whose sum, sum of squares or x - m overflowed (|x| beyond 1.3e154; values near ±1.8e308 of
// both signs), computed on x/s with s = max|x| so that nothing does: m/s = Σ(x/s)/n, v = Σ(x/s - m/s)²/n
// (var/s²), x̂ = (x/s - m/s)/√(v + eps/s²), rstd = that factor / s. False, leaving all as it was, for a row
// holding ±inf or NaN (check_rows in ops/normalize.cpp refuses it, or lets NaN through). Taken only on overflow.
bool scaled_row(const double* x, int64_t n, double eps, double* xhat, double& m, double& rs) {
  double s = 0, ms = 0, v = 0;
  for (int64_t j = 0; j < n; ++j) {
    if (!std::isfinite(x[j])) return false;
    s = std::max(s, std::abs(x[j]));
  }
  for (int64_t j = 0; j < n; ++j) ms += x[j] / s / double(n);
  for (int64_t j = 0; j < n; ++j) v += (x[j] / s - ms) * (x[j] / s - ms);
  const double r = 1.0 / std::sqrt(v / double(n) + eps / s / s);
  for (int64_t j = 0; j < n; ++j) xhat[j] = (x[j] / s - ms) * r;
  m = ms * s, rs = r / s;
  return true;
}

// The f64 layer-norm rows: both sums in double, in two passes (scaled_row where they overflow).
void layer_norm_f64(const double* x, double* xhat, double* y, const double* w, const double* b, int64_t rows,
                    int64_t n, double eps, double* mean, double* rstd) {
  for (int64_t i = 0; i < rows; ++i, x += n, xhat += n, y = y ? y + n : y) {
    double m = 0, v = 0;
    for (int64_t j = 0; j < n; ++j) m += x[j];
    m /= double(n);
    for (int64_t j = 0; j < n; ++j) v += (x[j] - m) * (x[j] - m);
    double rs = 1.0 / std::sqrt(v / double(n) + eps);
    if (std::isfinite(v) || !scaled_row(x, n, eps, xhat, m, rs))
      for (int64_t j = 0; j < n; ++j) xhat[j] = (x[j] - m) * rs;
    if (y)
      for (int64_t j = 0; j < n; ++j) y[j] = w && b ? xhat[j] * w[j] + b[j] : w ? xhat[j] * w[j] : xhat[j] + b[j];
    mean[i] = m, rstd[i] = rs;
  }
}

// The f64 rows of layer_norm_backward: dx = rstd·(g - mean(g) - x̂·mean(g·x̂)) with g = dy·w; dy·x̂ and dy
// added into dw and db.
void layer_norm_backward_f64(const double* dy, const double* xhat, const double* w, const double* rstd, double* dx,
                             double* dw, double* db, int64_t rows, int64_t n) {
  for (int64_t i = 0; i < rows; ++i, dy += n, xhat += n, dx += n) {
    double sg = 0, sgx = 0;
    for (int64_t j = 0; j < n; ++j) {
      const double g = w ? dy[j] * w[j] : dy[j];
      sg += g, sgx += g * xhat[j];
    }
    const double mg = sg / double(n), mgx = sgx / double(n);
    for (int64_t j = 0; j < n; ++j) dx[j] = rstd[i] * ((w ? dy[j] * w[j] : dy[j]) - mg - xhat[j] * mgx);
    if (dw)
      for (int64_t j = 0; j < n; ++j) dw[j] += dy[j] * xhat[j];
    if (db)
      for (int64_t j = 0; j < n; ++j) db[j] += dy[j];
  }
}

}  // namespace

// A fully masked line gives zeros rather than PyTorch's NaNs, so that padding queries do not poison the batch;
// the +inf limit keeps one logit that overflowed from turning the line into inf - inf.
template <class T>
void nonfinite_softmax_line(const T* in, T* out, int64_t n, int64_t s, bool log) {
  int64_t k = 0;
  bool nan = false;
  for (int64_t j = 0; j < n; ++j) nan = nan || std::isnan(in[j * s]), k += in[j * s] == T(kInf);
  const T quiet = std::numeric_limits<T>::quiet_NaN();
  const T hit = nan ? quiet : log ? T(-std::log(double(k))) : T(1.0 / double(k));
  const T miss = nan ? quiet : log ? T(-kInf) : T(0);
  for (int64_t j = 0; j < n; ++j) out[j * s] = in[j * s] == T(kInf) ? hit : miss;
}

template <class T>
bool all_minus_inf(const T* x, int64_t n, int64_t s) {
  for (int64_t j = 0; j < n; ++j)
    if (x[j * s] != T(-kInf)) return false;
  return n > 0;
}

template <class T>
void softmax_lines(const T* x, T* y, Around a) {
  for_lines(a, [&](int64_t at, int64_t n, int64_t s) { softmax_line(x + at, y + at, n, s); });
}

template <class T>
void log_softmax_lines(const T* x, T* y, Around a) {
  for_lines(a, [&](int64_t at, int64_t n, int64_t s) {
    const T* in = x + at;
    T* out = y + at;
    if constexpr (is_f32<T>)
      if (s == 1) return log_softmax_f32(in, out, n);
    double m = -kInf, sum = 0;
    for (int64_t j = 0; j < n; ++j) m = std::max(m, double(in[j * s]));
    if (!std::isfinite(m)) return nonfinite_softmax_line(in, out, n, s, true);
    for (int64_t j = 0; j < n; ++j) sum += std::exp(double(in[j * s]) - m);
    const double log_sum = std::log(sum);
    for (int64_t j = 0; j < n; ++j) out[j * s] = T(double(in[j * s]) - m - log_sum);
  });
}

template <class T>
void softmax_backward_lines(const T* dy, const T* y, T* dx, Around a) {
  for_lines(a, [&](int64_t at, int64_t n, int64_t s) {
    const T *g = dy + at, *p = y + at;
    T* out = dx + at;
    if constexpr (is_f32<T>)
      if (s == 1) return softmax_backward_f32(g, p, out, n);
    double dot = 0;
    for (int64_t j = 0; j < n; ++j) dot += double(g[j * s]) * double(p[j * s]);
    for (int64_t j = 0; j < n; ++j) out[j * s] = T(double(p[j * s]) * (double(g[j * s]) - dot));
  });
}

template <class T>
void log_softmax_backward_lines(const T* dy, const T* y, T* dx, Around a) {
  for_lines(a, [&](int64_t at, int64_t n, int64_t s) {
    const T *g = dy + at, *ly = y + at;
    T* out = dx + at;
    if constexpr (is_f32<T>)
      if (s == 1) return log_softmax_backward_f32(g, ly, out, n);
    if (n > 0 && ly[0] == T(-kInf) && all_minus_inf(ly, n, s)) {  // one branch per line: a masked line's first is -inf
      for (int64_t j = 0; j < n; ++j) out[j * s] = T(0);
      return;
    }
    double total = 0;
    for (int64_t j = 0; j < n; ++j) total += double(g[j * s]);
    for (int64_t j = 0; j < n; ++j) out[j * s] = T(double(g[j * s]) - std::exp(double(ly[j * s])) * total);
  });
}

// Each line is written to the output with -inf where blocked and the line's softmax runs there in place, so the
// bits are those of masked_fill then softmax. An f32 line whose mask runs along it (stride 1: key padding, causal)
// is filled in registers instead.
template <class T>
void masked_softmax_lines(const T* x, const bool* blocked, const Shape& shape, const Strides& ms, T* y) {
  const int64_t n = shape.back(), rows = n ? shape.numel() / n : 0, lead = int64_t(shape.size()) - 1;
  parallel_for(rows, line_grain(n), [&](int64_t lo, int64_t hi) {
    // Line r's first mask element: lo unravelled over the leading dims, then stepped like an odometer
    // (the divisions per line cost as much as a short line's softmax).
    std::vector<int64_t> index(size_t(lead), 0);
    int64_t at = 0;
    for (int64_t d = lead - 1, rest = lo; d >= 0; --d) {
      index[size_t(d)] = rest % shape[d], rest /= shape[d];
      at += index[size_t(d)] * ms[d];
    }
    for (int64_t r = lo; r < hi; ++r) {
      if (r > lo)
        for (int64_t d = lead - 1; d >= 0; --d) {
          at += ms[d];
          if (++index[size_t(d)] < shape[d]) break;
          at -= ms[d] * shape[d], index[size_t(d)] = 0;
        }
      const T* line = x + r * n;
      T* out = y + r * n;
      if constexpr (is_f32<T>)
        if (ms.back() == 1) {
          masked_softmax_f32(line, blocked + at, out, n);
          continue;
        }
      for (int64_t j = 0; j < n; ++j) out[j] = blocked[at + j * ms.back()] ? T(-kInf) : line[j];
      softmax_line(out, out, n, 1);
    }
  });
}

template <class T>
void layer_norm_rows(const T* x, T* xhat, T* y, const T* w, const T* b, int64_t rows, int64_t n, double eps, T* mean,
                     T* rstd) {
  parallel_for(rows, line_grain(n), [&](int64_t lo, int64_t hi) {
    T* yr = y ? y + lo * n : nullptr;
    if constexpr (is_f32<T>)
      layer_norm_f32(x + lo * n, xhat + lo * n, yr, w, b, hi - lo, n, eps, mean + lo, rstd + lo);
    else
      layer_norm_f64(x + lo * n, xhat + lo * n, yr, w, b, hi - lo, n, eps, mean + lo, rstd + lo);
  });
}

// The column sums dw and db are taken per chunk of rows in double and added under a lock.
template <class T>
void layer_norm_backward_rows(const T* dy, const T* xhat, const T* w, const T* rstd, T* dx, double* dw, double* db,
                              int64_t rows, int64_t n) {
  std::mutex mu;
  parallel_for(rows, line_grain(n), [&](int64_t lo, int64_t hi) {
    std::vector<double> dw_part(dw ? n : 0), db_part(db ? n : 0);
    double* pdw = dw ? dw_part.data() : nullptr;
    double* pdb = db ? db_part.data() : nullptr;
    const T *g = dy + lo * n, *h = xhat + lo * n;
    if constexpr (is_f32<T>) layer_norm_backward_f32(g, h, w, rstd + lo, dx + lo * n, pdw, pdb, hi - lo, n);
    else layer_norm_backward_f64(g, h, w, rstd + lo, dx + lo * n, pdw, pdb, hi - lo, n);
    std::lock_guard lock(mu);
    for (size_t j = 0; j < dw_part.size(); ++j) dw[j] += dw_part[j];
    for (size_t j = 0; j < db_part.size(); ++j) db[j] += db_part[j];
  });
}

template void nonfinite_softmax_line(const float*, float*, int64_t, int64_t, bool);
template void nonfinite_softmax_line(const double*, double*, int64_t, int64_t, bool);
template bool all_minus_inf(const float*, int64_t, int64_t);
template bool all_minus_inf(const double*, int64_t, int64_t);
template void softmax_lines(const float*, float*, Around);
template void log_softmax_lines(const float*, float*, Around);
template void softmax_backward_lines(const float*, const float*, float*, Around);
template void log_softmax_backward_lines(const float*, const float*, float*, Around);
template void masked_softmax_lines(const float*, const bool*, const Shape&, const Strides&, float*);
template void layer_norm_rows(const float*, float*, float*, const float*, const float*, int64_t, int64_t, double,
                              float*, float*);
template void layer_norm_backward_rows(const float*, const float*, const float*, const float*, float*, double*, double*,
                                       int64_t, int64_t);
template void softmax_lines(const double*, double*, Around);
template void log_softmax_lines(const double*, double*, Around);
template void softmax_backward_lines(const double*, const double*, double*, Around);
template void log_softmax_backward_lines(const double*, const double*, double*, Around);
template void masked_softmax_lines(const double*, const bool*, const Shape&, const Strides&, double*);
template void layer_norm_rows(const double*, double*, double*, const double*, const double*, int64_t, int64_t, double,
                              double*, double*);
template void layer_norm_backward_rows(const double*, const double*, const double*, const double*, double*, double*,
                                       double*, int64_t, int64_t);

}  // namespace tg::cpu
