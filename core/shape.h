#pragma once
// Shape: the sizes of a tensor's dimensions, row-major (dimension -1 is innermost). Strides count elements.
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace tg {

/// Sizes of a tensor's dimensions; prints as "(2, 3)".
class Shape : public std::vector<int64_t> {
 public:
  using std::vector<int64_t>::vector;
  Shape(const std::vector<int64_t>& v) : std::vector<int64_t>(v) {}
  /// Product of the sizes (1 for a 0-d shape). Throws ValueError on a negative size or when the sizes
  /// other than 0 multiply past int64 (their product is a stride).
  int64_t numel() const;
};
using Strides = std::vector<int64_t>;

/// Row-major strides (in elements) of a contiguous tensor of this shape.
Strides contiguous_strides(const Shape& shape);
/// NumPy broadcasting of two shapes; throws ShapeError naming `op` and both shapes when they do not fit.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);
/// Maps a possibly negative dim into [0, ndim); throws IndexError naming `op` when out of range.
int64_t normalize_dim(int64_t dim, int64_t ndim, const char* op);

}  // namespace tg

template <>
struct fmt::formatter<tg::Shape> : fmt::formatter<std::string_view> {
  auto format(const tg::Shape& s, format_context& ctx) const {
    std::string out = s.size() == 1 ? fmt::format("({},)", s[0]) : fmt::format("({})", fmt::join(s, ", "));
    return fmt::formatter<std::string_view>::format(out, ctx);
  }
};
