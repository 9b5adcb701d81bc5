// Shape arithmetic shared by every kernel: element counts, contiguous strides, broadcasting, dim wrapping.
#include "core/shape.h"

#include <algorithm>

#include "core/error.h"

namespace tg {

int64_t Shape::numel() const {
  // `span` skips the zeros: a size-0 shape has no elements, but its contiguous strides are products of the
  // other sizes, and every view computes with them, so they must fit too. n is 0 or span: it cannot overflow.
  int64_t n = 1, span = 1;
  for (int64_t s : *this) {
    check<ValueError>(s >= 0, "shape {}: negative size {}", *this, s);
    check<ValueError>(!__builtin_mul_overflow(span, std::max<int64_t>(s, 1), &span),
                      "shape {}: number of elements overflows int64", *this);
    n *= s;
  }
  return n;
}

Strides contiguous_strides(const Shape& shape) {
  Strides st(shape.size());
  int64_t s = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    st[i] = s;
    s *= std::max<int64_t>(shape[i], 1);
  }
  return st;
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    check<ShapeError>(da == db || da == 1 || db == 1, "{}: shapes cannot be broadcast: {} vs {}", op, a, b);
    out[i] = da == 1 ? db : da;
  }
  return out;
}

int64_t normalize_dim(int64_t dim, int64_t ndim, const char* op) {
  int64_t lo = ndim == 0 ? -1 : -ndim, hi = ndim == 0 ? 0 : ndim - 1;
  check<IndexError>(dim >= lo && dim <= hi, "{}: dim {} out of range for a {}-d tensor (expected [{}, {}])", op, dim,
                    ndim, lo, hi);
  return dim < 0 ? dim + std::max<int64_t>(ndim, 1) : dim;
}

}  // namespace tg
