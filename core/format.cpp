// Printing, after PyTorch's layout: nested brackets, one width for all numbers, fixed notation unless the
// magnitudes call for scientific, and "..." past 1000 elements. Shape and dtype follow the values.
#include "core/format.h"

#include <cmath>

#include "core/kernel_util.h"

namespace tg {

std::ostream& operator<<(std::ostream& os, DType t) { return os << dtype_name(t); }

namespace {

constexpr int64_t kThreshold = 1000, kEdge = 3;

struct Printer {
  const std::vector<double>& v;
  const std::vector<int64_t>& ints;  // i64 values, read exactly (a double holds only 53 bits)
  const Shape& shape;
  Strides st;
  DType dtype;
  bool elide, sci = false;
  size_t width = 1;

  // The text of element i (row-major).
  std::string number(size_t i) const {
    if (dtype == i64) return fmt::format("{}", ints[i]);
    const double x = v[i];
    if (dtype == boolean) return x != 0 ? "True" : "False";
    if (std::isnan(x)) return "nan";
    if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
    return sci ? fmt::format("{:.4e}", x) : fmt::format("{:.4f}", x);
  }
  // Indices along dim d that are shown (all, or the edges when elided).
  std::vector<int64_t> shown(int64_t d) const {
    std::vector<int64_t> ix;
    for (int64_t i = 0; i < shape[d]; ++i)
      if (!elide || shape[d] <= 2 * kEdge || i < kEdge || i >= shape[d] - kEdge) ix.push_back(i);
    return ix;
  }
  void body(std::string& out, int64_t d, int64_t off, int indent) const {
    if (d == int64_t(shape.size())) {
      std::string s = number(size_t(off));
      out += std::string(width - std::min(width, s.size()), ' ') + s;
      return;
    }
    out += '[';
    std::vector<int64_t> ix = shown(d);
    const bool last = d + 1 == int64_t(shape.size());
    // After a comma: a space within the innermost dim, else blank lines and the indent of the next block.
    auto separate = [&](const char* mark) {
      out += mark;
      if (last) return void(out += ' ');
      out.append(shape.size() - size_t(d) - 1, '\n');
      out.append(size_t(indent) + 1, ' ');
    };
    for (size_t k = 0; k < ix.size(); ++k) {
      if (k) separate(",");
      if (k && ix[k] != ix[k - 1] + 1) separate("...,");
      body(out, d + 1, off + ix[k] * st[d], indent + 1);
    }
    out += ']';
  }
};

}  // namespace

std::string to_string(const Tensor& t) {
  if (!t.defined()) return "tensor(undefined)";
  std::vector<double> v = t.to_vector<double>();
  std::vector<int64_t> ints = t.dtype() == i64 ? t.to_vector<int64_t>() : std::vector<int64_t>{};
  Printer p{v, ints, t.shape(), contiguous_strides(t.shape()), t.dtype(), t.numel() > kThreshold};
  double hi = 0, lo = INFINITY;
  for (double x : v)
    if (std::isfinite(x) && x != 0) hi = std::max(hi, std::abs(x)), lo = std::min(lo, std::abs(x));
  p.sci = is_floating(t.dtype()) && (hi >= 1e8 || (lo < 1e-4) || (hi / lo > 1e3 && lo != INFINITY));
  for (size_t i = 0; i < v.size(); ++i) p.width = std::max(p.width, p.number(i).size());
  std::string out = "tensor(";
  p.body(out, 0, 0, 7);
  return out + fmt::format(", shape={}, dtype={})", t.shape(), t.dtype());
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) { return os << to_string(t); }

}  // namespace tg
