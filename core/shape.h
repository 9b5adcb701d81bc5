#pragma once
// Shape: the sizes of a tensor's dimensions, row-major (dimension -1 is innermost). Strides count elements.
// Both are Dims, a short list of int64 kept inside the object up to kInline values, so that copying a
// Tensor (which autograd does several times per op) allocates nothing for tensors of up to 6 dims.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iosfwd>
#include <iterator>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace tg {

/// A vector of int64 that holds up to kInline values in place and moves to the heap beyond (LLVM's
/// SmallVector, absl::InlinedVector). The part of std::vector's interface that shapes and strides use.
class Dims {
 public:
  static constexpr size_t kInline = 6;  ///< values held in place; more move to the heap
  /// @{
  /// std::vector's member types.
  using value_type = int64_t;
  using size_type = size_t;
  using difference_type = std::ptrdiff_t;
  using reference = int64_t&;
  using const_reference = const int64_t&;
  using iterator = int64_t*;
  using const_iterator = const int64_t*;
  using const_reverse_iterator = std::reverse_iterator<const_iterator>;
  /// @}

  Dims() = default;  ///< empty
  /// n copies of `value`.
  explicit Dims(size_t n, int64_t value = 0);
  /// The values of a list, `{2, 3}`.
  Dims(std::initializer_list<int64_t> values) : Dims(values.begin(), values.end()) {}
  /// The values of a vector.
  Dims(const std::vector<int64_t>& values) : Dims(values.begin(), values.end()) {}
  /// The values of [first, last).
  template <std::input_iterator It>
  Dims(It first, It last) {
    for (; first != last; ++first) push_back(*first);
  }
  /// @{
  /// Copies and moves, as std::vector's (a move leaves `other` empty).
  Dims(const Dims& other) { copy_from(other); }
  Dims(Dims&& other) noexcept { move_from(other); }  ///< leaves `other` empty
  Dims& operator=(const Dims& other) {
    if (this != &other) release(), copy_from(other);
    return *this;
  }
  Dims& operator=(Dims&& other) noexcept {
    if (this != &other) release(), move_from(other);
    return *this;
  }
  /// @}
  ~Dims() { release(); }

  /// @{
  /// std::vector's accessors and iterators (unchecked, as std::vector's operator[]).
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  int64_t* data() { return on_heap() ? heap_ : inline_; }
  const int64_t* data() const { return on_heap() ? heap_ : inline_; }
  int64_t& operator[](size_t i) { return data()[i]; }
  const int64_t& operator[](size_t i) const { return data()[i]; }
  int64_t& back() { return data()[size_ - 1]; }
  const int64_t& back() const { return data()[size_ - 1]; }
  iterator begin() { return data(); }
  iterator end() { return data() + size_; }
  const_iterator begin() const { return data(); }
  const_iterator end() const { return data() + size_; }
  const_reverse_iterator rbegin() const { return const_reverse_iterator(end()); }
  const_reverse_iterator rend() const { return const_reverse_iterator(begin()); }
  /// @}

  /// Appends `value`, moving to the heap past kInline values.
  void push_back(int64_t value) {
    if (size_ == capacity_) grow(size_ + 1);
    data()[size_++] = value;
  }
  void clear() { size_ = 0; }  ///< size 0; the capacity stays
  /// Inserts `value` before `pos`; returns an iterator to it.
  iterator insert(const_iterator pos, int64_t value);
  /// Inserts the values of [first, last) before `pos` (which must not point into them).
  iterator insert(const_iterator pos, const_iterator first, const_iterator last);
  /// Inserts `values` before `pos`.
  iterator insert(const_iterator pos, std::initializer_list<int64_t> values) {
    return insert(pos, values.begin(), values.end());
  }
  /// Removes the value at `pos`; returns an iterator to the one after it.
  iterator erase(const_iterator pos);

  /// Inline, and a loop rather than memcmp: shapes are compared several times in every op, and are short.
  friend bool operator==(const Dims& a, const Dims& b) {
    if (a.size_ != b.size_) return false;
    for (size_t i = 0; i < a.size_; ++i)
      if (a[i] != b[i]) return false;
    return true;
  }

 private:
  bool on_heap() const { return capacity_ > kInline; }
  // Both expect *this empty and inline (fresh, or just released). Small lists copy the whole inline array:
  // one fixed-size copy, no loop.
  void copy_from(const Dims& other) {
    if (other.on_heap()) {
      copy_from_heap(other);
    } else {
      std::memcpy(inline_, other.inline_, sizeof inline_);
      size_ = other.size_;
    }
  }
  void move_from(Dims& other) noexcept {  // leaves `other` empty, as std::vector does
    if (other.on_heap()) heap_ = other.heap_, size_ = other.size_, capacity_ = other.capacity_;
    else copy_from(other);
    other.size_ = 0, other.capacity_ = kInline;
  }
  void copy_from_heap(const Dims& other);
  void grow(size_t min_capacity);  // to at least min_capacity, on the heap
  void release() {                 // frees the heap buffer, if any; leaves *this empty and inline
    if (on_heap()) delete[] heap_;
    size_ = 0, capacity_ = kInline;
  }
  uint32_t size_ = 0;
  uint32_t capacity_ = kInline;
  union {
    int64_t inline_[kInline];
    int64_t* heap_;
  };
};

/// Sizes of a tensor's dimensions; prints as "(2, 3)".
class Shape : public Dims {
 public:
  using Dims::Dims;  ///< the constructors of Dims
  /// The sizes in `d`.
  Shape(const Dims& d) : Dims(d) {}
  /// Product of the sizes (1 for a 0-d shape). Throws ValueError on a negative size or when the sizes
  /// other than 0 multiply past int64 (their product is a stride).
  int64_t numel() const;
};
/// Steps (in elements) between neighbours along each dimension.
using Strides = Dims;

/// Row-major strides (in elements) of a contiguous tensor of this shape.
Strides contiguous_strides(const Shape& shape);
/// What a new contiguous tensor needs of its shape: its row-major strides and its element count.
struct ContiguousLayout {
  Strides strides;   ///< contiguous_strides(shape)
  int64_t numel = 0;  ///< shape.numel()
};
/// contiguous_strides and Shape::numel (with its ValueErrors) in one pass over the shape: every new tensor
/// needs both, and on small tensors (several per op) the two passes and their calls added up.
ContiguousLayout contiguous_layout(const Shape& shape);
/// NumPy broadcasting of two shapes; throws ShapeError naming `op` and both shapes when they do not fit.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);
/// Maps a possibly negative dim into [0, ndim); throws IndexError naming `op` when out of range.
int64_t normalize_dim(int64_t dim, int64_t ndim, const char* op);
/// Writes the shape as fmt::format("{}", shape) does: "(2, 3)", "(4,)", "()".
std::ostream& operator<<(std::ostream& os, const Shape& shape);

}  // namespace tg

/// Formats a Shape as "(2, 3)", "(4,)", "()".
template <>
struct fmt::formatter<tg::Shape> : fmt::formatter<std::string_view> {
  auto format(const tg::Shape& s, format_context& ctx) const {
    std::string out = s.size() == 1 ? fmt::format("({},)", s[0]) : fmt::format("({})", fmt::join(s, ", "));
    return fmt::formatter<std::string_view>::format(out, ctx);
  }
};
