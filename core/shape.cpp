// Shape arithmetic shared by every kernel: element counts, contiguous strides, broadcasting, dim wrapping;
// and the out-of-line part of Dims (its heap side, insert and erase).
#include "core/shape.h"

#include <algorithm>
#include <ostream>

#include "core/error.h"

namespace tg {

Dims::Dims(size_t n, int64_t value) {
  if (n > kInline) grow(n);
  std::fill_n(data(), n, value);
  size_ = uint32_t(n);
}

void Dims::copy_from_heap(const Dims& other) {
  grow(other.size_);
  std::copy_n(other.heap_, other.size_, heap_);
  size_ = other.size_;
}

void Dims::grow(size_t min_capacity) {
  const size_t capacity = std::max<size_t>(min_capacity, 2 * size_t(capacity_));
  int64_t* p = new int64_t[capacity];
  std::copy_n(data(), size_, p);
  if (on_heap()) delete[] heap_;
  heap_ = p;
  capacity_ = uint32_t(capacity);
}

Dims::iterator Dims::insert(const_iterator pos, int64_t value) {
  const size_t i = size_t(pos - begin());
  push_back(value);  // may move the values: from here on, work with indices
  std::rotate(begin() + i, end() - 1, end());
  return begin() + i;
}

Dims::iterator Dims::insert(const_iterator pos, const_iterator first, const_iterator last) {
  const size_t i = size_t(pos - begin()), n = size_t(last - first);
  if (size_ + n > capacity_) grow(size_ + n);  // first and last point into another Dims: still valid
  std::copy_backward(begin() + i, end(), end() + n);
  std::copy(first, last, begin() + i);
  size_ += uint32_t(n);
  return begin() + i;
}

Dims::iterator Dims::erase(const_iterator pos) {
  const size_t i = size_t(pos - begin());
  std::copy(begin() + i + 1, end(), begin() + i);
  --size_;
  return begin() + i;
}

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

ContiguousLayout contiguous_layout(const Shape& shape) {
  // The strides start as a copy of the shape (a fixed-size copy, not a fill loop), then are overwritten.
  ContiguousLayout layout{shape, 1};
  const int64_t* sizes = shape.data();  // through pointers: operator[] asks each time whether Dims is inline
  int64_t* strides = layout.strides.data();
  int64_t span = 1;  // as in numel(): the product of the sizes, zeros counted as 1 (here from dim i on)
  for (size_t i = shape.size(); i-- > 0;) {
    const int64_t s = sizes[i];
    strides[i] = span;
    // A negative size or an overflow (of the whole product, whatever the order) is found again by numel(),
    // which throws its ValueError in its own order of checks.
    if (s < 0 || __builtin_mul_overflow(span, std::max<int64_t>(s, 1), &span)) [[unlikely]]
      return {{}, shape.numel()};
    layout.numel *= s;
  }
  return layout;
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

std::ostream& operator<<(std::ostream& os, const Shape& shape) { return os << fmt::format("{}", shape); }

}  // namespace tg
