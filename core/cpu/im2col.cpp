// Convolution windows on raw buffers: im2col (each output position's window of inputs as a column, so that
// a convolution is one GEMM), its adjoint col2im, and the argmax of max pooling, images (or planes) split
// over the threads. Plain copies and compares in row order: along an output row the in-image positions are
// found once, so the inner loop is a copy (memcpy at stride 1) with no bounds test per element. Small
// outputs (rows of a few elements, where that per-row work outweighs the copy) go through a zero-bordered copy
// of the planes and a table of offsets instead: each column row is then a gather without a test. The
// contracts are in kernels.h.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/cpu/kernels.h"

namespace tg::cpu {
namespace {

// The output columns x in [lo, hi) whose input column x·s - p + j·d lies in [0, W); lo <= hi.
struct Span {
  int64_t lo, hi;
};
Span in_image(int64_t W, int64_t s, int64_t p, int64_t j, int64_t d, int64_t ow) {
  const int64_t first = p - j * d;  // the input column is x·s - first
  int64_t lo = first <= 0 ? 0 : (first + s - 1) / s;
  int64_t hi = W + first <= 0 ? 0 : (W + first + s - 1) / s;  // the first x with x·s - first >= W
  lo = std::min(lo, ow), hi = std::min(hi, ow);
  return {lo, std::max(lo, hi)};
}

// Visits every (column row r, output row y) pair of one image: f(r, y, c, input row ih, span, x0), where
// output column x reads input column x·sw + x0 (inside the image for x in span) and an ih outside [0, H) is
// a padding row. Shared by im2col and col2im, which differ only in the direction of the copy.
template <class F>
void for_each_row(const Window2d& g, F&& f) {
  for (int64_t c = 0; c < g.C; ++c)
    for (int64_t i = 0; i < g.kh; ++i)
      for (int64_t j = 0; j < g.kw; ++j) {
        const int64_t r = (c * g.kh + i) * g.kw + j;
        const Span span = in_image(g.W, g.sw, g.pw, j, g.dw, g.ow);
        for (int64_t y = 0; y < g.oh; ++y) f(r, y, c, y * g.sh - g.ph + i * g.dh, span, j * g.dw - g.pw);
      }
}

// Runs f(i) for `count` images or planes over the threads, each of `work` elements counting towards the grain.
template <class F>
void each(int64_t count, int64_t work, F&& f) {
  parallel_for(count, std::max<int64_t>(1, kGrainElements / std::max<int64_t>(work, 1)), [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) f(i);
  });
}

// One image's columns.
template <class T>
void im2col_impl(const T* image, const Window2d& g, T* col) {
  const int64_t L = g.oh * g.ow;
  for_each_row(g, [&](int64_t r, int64_t y, int64_t c, int64_t ih, Span s, int64_t x0) {
    T* out = col + r * L + y * g.ow;
    if (ih < 0 || ih >= g.H) return std::fill(out, out + g.ow, T(0));
    const T* in = image + (c * g.H + ih) * g.W;
    std::fill(out, out + s.lo, T(0));
    if (g.sw != 1)
      for (int64_t x = s.lo; x < s.hi; ++x) out[x] = in[x * g.sw + x0];
    else if (s.hi > s.lo)  // an empty span's source address may lie outside the image
      std::memcpy(out + s.lo, in + s.lo + x0, size_t(s.hi - s.lo) * sizeof(T));
    std::fill(out + s.hi, out + g.ow, T(0));
  });
}

// One image's adjoint.
template <class T>
void col2im_impl(const T* col, const Window2d& g, T* image) {
  const int64_t L = g.oh * g.ow;
  for_each_row(g, [&](int64_t r, int64_t y, int64_t c, int64_t ih, Span s, int64_t x0) {
    if (ih < 0 || ih >= g.H) return;
    const T* in = col + r * L + y * g.ow;
    T* out = image + (c * g.H + ih) * g.W;
    for (int64_t x = s.lo; x < s.hi; ++x) out[x * g.sw + x0] += in[x];
  });
}

// One plane's argmax, as offsets into the plane plus `base`.
template <class T>
void max_pool_argmax_impl(const T* plane, const Window2d& g, int64_t base, int64_t* idx) {
  for (int64_t y = 0; y < g.oh; ++y)
    for (int64_t x = 0; x < g.ow; ++x) {
      int64_t best = -1;
      T max = 0;
      for (int64_t i = 0; i < g.kh; ++i) {
        const int64_t ih = y * g.sh - g.ph + i * g.dh;
        if (ih < 0 || ih >= g.H) continue;
        for (int64_t j = 0; j < g.kw; ++j) {
          const int64_t iw = x * g.sw - g.pw + j * g.dw;
          if (iw < 0 || iw >= g.W) continue;
          const T v = plane[ih * g.W + iw];
          if (best < 0 || v > max || std::isnan(v)) best = ih * g.W + iw, max = v;
        }
      }
      *idx++ = base + best;
    }
}

// Output rows up to this long take the bordered path (bench/RESULTS.md, layers: the digits' 4×4 and 8×8
// convolutions); longer ones copy runs of a row.
constexpr int64_t kBorderedMaxWidth = 8;

// The planes with a zero border: plane c's input (y, x) at c·PH·PW + (y + ph)·PW + x + pw, the border wide
// enough for every tap of the window, and for each tap (i, j) and output position l = y·ow + x the offset of
// its input in a bordered plane, at offsets[(i·kw + j)·oh·ow + l].
struct Bordered {
  int64_t PH, PW;
  std::vector<int64_t> offsets;
};
Bordered bordered(const Window2d& g) {
  Bordered b;
  b.PH = std::max(g.ph + g.H, (g.oh - 1) * g.sh + (g.kh - 1) * g.dh + 1);
  b.PW = std::max(g.pw + g.W, (g.ow - 1) * g.sw + (g.kw - 1) * g.dw + 1);
  b.offsets.reserve(size_t(g.kh * g.kw * g.oh * g.ow));
  for (int64_t i = 0; i < g.kh; ++i)
    for (int64_t j = 0; j < g.kw; ++j)
      for (int64_t y = 0; y < g.oh; ++y)
        for (int64_t x = 0; x < g.ow; ++x)
          b.offsets.push_back((y * g.sh + i * g.dh) * b.PW + x * g.sw + j * g.dw);
  return b;
}

// One image's planes into the inside of the bordered planes p, and back.
template <class T>
void to_border(const T* image, const Window2d& g, const Bordered& b, T* p) {
  for (int64_t c = 0; c < g.C; ++c)
    for (int64_t y = 0; y < g.H; ++y)
      std::copy_n(image + (c * g.H + y) * g.W, g.W, p + (c * b.PH + y + g.ph) * b.PW + g.pw);
}
template <class T>
void from_border(const T* p, const Window2d& g, const Bordered& b, T* image) {
  for (int64_t c = 0; c < g.C; ++c)
    for (int64_t y = 0; y < g.H; ++y)
      std::copy_n(p + (c * b.PH + y + g.ph) * b.PW + g.pw, g.W, image + (c * g.H + y) * g.W);
}

// im2col of the images [lo, hi) through one buffer of bordered planes.
template <class T>
void im2col_bordered(const T* image, const Window2d& g, const Bordered& b, T* col, int64_t lo, int64_t hi) {
  const int64_t in = g.C * g.H * g.W, L = g.oh * g.ow, taps = g.kh * g.kw, plane = b.PH * b.PW;
  std::vector<T> p(size_t(g.C * plane), T(0));
  for (int64_t n = lo; n < hi; ++n) {
    to_border(image + n * in, g, b, p.data());
    T* out = col + n * g.C * taps * L;
    for (int64_t c = 0; c < g.C; ++c)
      for (int64_t t = 0; t < taps; ++t, out += L) {
        const T* src = p.data() + c * plane;
        const int64_t* at = b.offsets.data() + t * L;
        for (int64_t l = 0; l < L; ++l) out[l] = src[at[l]];
      }
  }
}
// col2im_add of the images [lo, hi) as gathers: for each input position (y, x) of a plane, the column entries
// t·oh·ow + l (tap t, output l) that read it, in increasing order, from sources[starts[y·W + x]] on; each
// element then adds its terms in the order col2im_add's contract gives, without writes to a shared buffer.
struct Sources {
  std::vector<int64_t> starts, sources;
};
Sources sources(const Window2d& g) {
  const int64_t L = g.oh * g.ow, taps = g.kh * g.kw;
  std::vector<int64_t> of(size_t(taps * L), -1);  // the input position each entry reads, -1 on padding
  Sources s{std::vector<int64_t>(size_t(g.H * g.W + 1), 0), {}};
  for (int64_t i = 0; i < g.kh; ++i)
    for (int64_t j = 0; j < g.kw; ++j)
      for (int64_t y = 0; y < g.oh; ++y)
        for (int64_t x = 0; x < g.ow; ++x) {
          const int64_t ih = y * g.sh - g.ph + i * g.dh, iw = x * g.sw - g.pw + j * g.dw;
          if (ih >= 0 && ih < g.H && iw >= 0 && iw < g.W) {
            of[size_t((i * g.kw + j) * L + y * g.ow + x)] = ih * g.W + iw;
            ++s.starts[size_t(ih * g.W + iw + 1)];
          }
        }
  for (size_t p = 1; p < s.starts.size(); ++p) s.starts[p] += s.starts[p - 1];
  s.sources.resize(size_t(s.starts.back()));
  std::vector<int64_t> next(s.starts.begin(), s.starts.end() - 1);
  for (size_t e = 0; e < of.size(); ++e)
    if (of[e] >= 0) s.sources[size_t(next[size_t(of[e])]++)] = int64_t(e);
  return s;
}
template <class T>
void col2im_gathered(const T* col, const Window2d& g, const Sources& s, T* image, int64_t lo, int64_t hi) {
  const int64_t plane = g.H * g.W, per_plane = g.kh * g.kw * g.oh * g.ow;
  for (int64_t n = lo; n < hi; ++n)
    for (int64_t c = 0; c < g.C; ++c) {
      const T* from = col + (n * g.C + c) * per_plane;
      T* out = image + (n * g.C + c) * plane;
      for (int64_t p = 0; p < plane; ++p) {
        T sum = out[p];
        for (int64_t k = s.starts[size_t(p)]; k < s.starts[size_t(p + 1)]; ++k) sum += from[s.sources[size_t(k)]];
        out[p] = sum;
      }
    }
}

// Runs f(lo, hi) over chunks of the N images, each of `work` elements counting towards the grain.
template <class F>
void chunks(int64_t count, int64_t work, F&& f) {
  parallel_for(count, std::max<int64_t>(1, kGrainElements / std::max<int64_t>(work, 1)), f);
}

// Per image: C·H·W inputs, C·kh·kw·oh·ow columns.
template <class T>
void im2col_all(const T* image, const Window2d& g, T* col) {
  const int64_t in = g.C * g.H * g.W, out = g.C * g.kh * g.kw * g.oh * g.ow;
  if (g.ow <= kBorderedMaxWidth && out > 0) {
    const Bordered b = bordered(g);
    return chunks(g.N, out, [&](int64_t lo, int64_t hi) { im2col_bordered(image, g, b, col, lo, hi); });
  }
  each(g.N, out, [&](int64_t n) { im2col_impl(image + n * in, g, col + n * out); });
}
template <class T>
void col2im_all(const T* col, const Window2d& g, T* image) {
  const int64_t in = g.C * g.H * g.W, out = g.C * g.kh * g.kw * g.oh * g.ow;
  if (g.ow <= kBorderedMaxWidth && out > 0) {
    const Sources s = sources(g);
    return chunks(g.N, out, [&](int64_t lo, int64_t hi) { col2im_gathered(col, g, s, image, lo, hi); });
  }
  each(g.N, out, [&](int64_t n) { col2im_impl(col + n * out, g, image + n * in); });
}
template <class T>
void max_pool_argmax_all(const T* image, const Window2d& g, int64_t* idx) {
  const int64_t plane = g.H * g.W, out = g.oh * g.ow;
  each(g.N * g.C, out * g.kh * g.kw,
       [&](int64_t p) { max_pool_argmax_impl(image + p * plane, g, p * plane, idx + p * out); });
}

}  // namespace

void im2col(const float* image, const Window2d& g, float* col) { im2col_all(image, g, col); }
void im2col(const double* image, const Window2d& g, double* col) { im2col_all(image, g, col); }
void col2im_add(const float* col, const Window2d& g, float* image) { col2im_all(col, g, image); }
void col2im_add(const double* col, const Window2d& g, double* image) { col2im_all(col, g, image); }
void max_pool_argmax(const float* image, const Window2d& g, int64_t* idx) { max_pool_argmax_all(image, g, idx); }
void max_pool_argmax(const double* image, const Window2d& g, int64_t* idx) { max_pool_argmax_all(image, g, idx); }

}  // namespace tg::cpu
