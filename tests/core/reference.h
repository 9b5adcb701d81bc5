#pragma once
// What the core tests check kernels against: element access by multi-index through shape, strides and
// offset (no kernel involved), row-major index enumeration, broadcasting of an output index back to an
// operand, the same values laid out contiguous / transposed / strided, and a comparison that names the
// worst element when it fails.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/format.h"
#include "core/tensor.h"

template <>
struct doctest::StringMaker<tg::Shape> {
  static doctest::String convert(const tg::Shape& s) { return fmt::format("{}", s).c_str(); }
};
template <>
struct doctest::StringMaker<tg::DType> {
  static doctest::String convert(tg::DType t) { return std::string(tg::dtype_name(t)).c_str(); }
};

namespace tg::test {

using Index = std::vector<int64_t>;

/// Storage offset of multi-index `idx` in `t`, from its strides alone.
inline int64_t offset_of(const Tensor& t, const Index& idx) {
  int64_t off = t.offset();
  for (size_t d = 0; d < idx.size(); ++d) off += idx[d] * t.strides()[d];
  return off;
}

/// The element of `t` at `idx`, read straight from storage.
inline double at(const Tensor& t, const Index& idx) {
  if (idx.size() != t.shape().size()) throw std::logic_error("test::at: index rank differs from the tensor's");
  const int64_t off = offset_of(t, idx);
  const void* base = t.storage()->data;
  switch (t.dtype()) {
    case DType::f32: return static_cast<const float*>(base)[off];
    case DType::f64: return static_cast<const double*>(base)[off];
    case DType::i64: return double(static_cast<const int64_t*>(base)[off]);
    case DType::boolean: return static_cast<const bool*>(base)[off] ? 1.0 : 0.0;
  }
  return 0;
}

/// Writes `v` to the element of `t` at `idx` (converted to t's dtype), straight to storage.
inline void set_at(const Tensor& t, const Index& idx, double v) {
  const int64_t off = offset_of(t, idx);
  void* base = t.storage()->data;
  switch (t.dtype()) {
    case DType::f32: static_cast<float*>(base)[off] = float(v); break;
    case DType::f64: static_cast<double*>(base)[off] = v; break;
    case DType::i64: static_cast<int64_t*>(base)[off] = int64_t(v); break;
    case DType::boolean: static_cast<bool*>(base)[off] = v != 0; break;
  }
}

/// Every multi-index of `shape`, row-major (one empty index for a 0-d shape, none if any size is 0).
inline std::vector<Index> indices(const Shape& shape) {
  std::vector<Index> out;
  for (int64_t s : shape)
    if (s == 0) return out;
  Index idx(shape.size(), 0);
  for (;;) {
    out.push_back(idx);
    int64_t d = int64_t(shape.size()) - 1;
    for (; d >= 0; --d) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
    if (d < 0) return out;
  }
}

/// Row-major flat position of `idx` in `shape`.
inline int64_t flat(const Shape& shape, const Index& idx) {
  int64_t p = 0;
  for (size_t d = 0; d < shape.size(); ++d) p = p * shape[d] + idx[d];
  return p;
}

/// The elements of `t` in row-major order, read through its strides.
inline std::vector<double> values(const Tensor& t) {
  std::vector<double> v;
  for (const Index& idx : indices(t.shape())) v.push_back(at(t, idx));
  return v;
}

/// The index into an operand of shape `s` that an output index `out` of a broadcast reads.
inline Index broadcast_index(const Index& out, const Shape& s) {
  Index idx(s.size());
  const size_t lead = out.size() - s.size();
  for (size_t d = 0; d < s.size(); ++d) idx[d] = s[d] == 1 ? 0 : out[lead + d];
  return idx;
}

/// n deterministic, irregular values in about [-scale, scale] (no RNG involved).
inline std::vector<double> sample(int64_t n, double scale = 2.0, int seed = 1) {
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = scale * std::sin(0.7 * double(i) * (seed + 0.37) + seed);
  return v;
}

/// A tensor with the logical values `v` (row-major over `shape`) in a chosen memory layout.
struct Layout {
  std::string name;
  Tensor t;
};

/// The same values three ways: contiguous; "transposed" (stored with the dims reversed, then permuted
/// back, so the innermost stride is not 1 when dim >= 2); "strided" (every other element of a larger
/// buffer, at an offset, as slice(-1, 1, 2n, 2) gives, with junk in between).
inline std::vector<Layout> layouts(const std::vector<double>& v, const Shape& shape, DType dtype = f32) {
  REQUIRE(int64_t(v.size()) == shape.numel());
  std::vector<Layout> out{{"contiguous", tensor(v, shape, dtype)}};
  const int64_t nd = int64_t(shape.size());
  if (nd >= 2) {
    Shape rev(shape.rbegin(), shape.rend());
    std::vector<int64_t> perm(nd);
    for (int64_t d = 0; d < nd; ++d) perm[d] = nd - 1 - d;
    Tensor t = empty(rev, dtype).permute(perm);
    for (const Index& idx : indices(shape)) set_at(t, idx, v[flat(shape, idx)]);
    out.push_back({"transposed", t});
  }
  if (nd >= 1) {
    Shape wide = shape;
    wide.back() = 2 * shape.back() + 1;
    Tensor buf = full(wide, 777.0, dtype);
    Tensor t = buf.slice(-1, 1, wide.back(), 2);
    for (const Index& idx : indices(shape)) set_at(t, idx, v[flat(shape, idx)]);
    out.push_back({"strided", t});
  }
  return out;
}

/// Checks `got` against `want` (row-major) elementwise: |got - want| <= atol + rtol·|want|, NaN equal to
/// NaN, infinities equal to themselves. One CHECK per call, naming the worst element.
inline void check_close(const Tensor& got, const std::vector<double>& want, double atol = 1e-6,
                        double rtol = 1e-5) {
  REQUIRE(got.defined());
  REQUIRE(got.numel() == int64_t(want.size()));
  std::vector<double> g = values(got);
  double worst = 0;
  int64_t at_i = -1;
  for (size_t i = 0; i < g.size(); ++i) {
    double a = g[i], b = want[i], err;
    if (std::isnan(a) || std::isnan(b)) err = std::isnan(a) && std::isnan(b) ? 0 : INFINITY;
    else if (std::isinf(a) || std::isinf(b)) err = a == b ? 0 : INFINITY;
    else err = std::abs(a - b) - (atol + rtol * std::abs(b));
    if (err > 0 && (at_i < 0 || err > worst)) worst = err, at_i = int64_t(i);
  }
  INFO("worst element #", at_i, ": got ", at_i >= 0 ? g[at_i] : 0.0, ", want ", at_i >= 0 ? want[at_i] : 0.0);
  CHECK(at_i == -1);
}

/// Equal bits element by element, or NaN on both sides: a NaN's sign and payload depend on which operand x86
/// propagates, and no result that matters holds a NaN.
template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  for (size_t i = 0; i < a.size() && i < b.size(); ++i)
    if (std::memcmp(&a[i], &b[i], sizeof(T)) != 0 && !(std::isnan(a[i]) && std::isnan(b[i]))) return false;
  return a.size() == b.size();
}

/// Checks shape and values together.
inline void check_tensor(const Tensor& got, const Shape& shape, const std::vector<double>& want, double atol = 1e-6,
                         double rtol = 1e-5) {
  CHECK(got.shape() == shape);
  if (got.shape() == shape) check_close(got, want, atol, rtol);
}

}  // namespace tg::test
