// Ops that move elements without arithmetic: flip, roll, pad (and its adjoint), repeat and tile as gathers
// through per-dim index maps (cpu::remap, core/cpu/remap.cpp); tril and triu as masks; one_hot as a comparison
// with the class numbers. The checks live here.
#include <algorithm>

#include "core/cpu/kernels.h"
#include "core/kernel_util.h"
#include "core/ops.h"

namespace tg {
namespace {

// The identity map of every dim of `shape`, for ops that change only some dims.
cpu::IndexMaps identity_maps(const Shape& shape) {
  cpu::IndexMaps maps(shape.size());
  for (size_t d = 0; d < shape.size(); ++d)
    for (int64_t i = 0; i < shape[d]; ++i) maps[d].push_back(i);
  return maps;
}

// The shape of what `maps` gather: one dim per map, of the map's length.
Shape maps_shape(const cpu::IndexMaps& maps) {
  Shape shape;
  for (const auto& m : maps) shape.push_back(int64_t(m.size()));
  return shape;
}

// x gathered through `maps` (one per dim of x) into a new contiguous tensor; `fill` where a map says -1.
Tensor gather_maps(const Tensor& x, const cpu::IndexMaps& maps, double fill = 0) {
  Tensor out = empty(maps_shape(maps), x.dtype()), value = scalar_tensor(fill, x.dtype());
  if (out.numel() == 0) return out;
  detail::dispatch(x.dtype(), [&](auto z) {
    using T = decltype(z);
    cpu::remap(x.data<T>(), x.strides(), maps, value.data<T>()[0], out.data<T>());
  });
  return out;
}

// Each dim of `dims` normalised for x's rank, ValueError when one is given twice.
std::vector<int64_t> distinct_dims(const std::vector<int64_t>& dims, int64_t ndim, const char* op) {
  std::vector<int64_t> out;
  for (int64_t d : dims) {
    const int64_t n = normalize_dim(d, ndim, op);
    check<ValueError>(std::find(out.begin(), out.end(), n) == out.end(), "{}: dim {} appears twice in {}", op, n,
                      fmt::join(dims, ", "));
    out.push_back(n);
  }
  return out;
}

}  // namespace

Tensor flip(const Tensor& x, const std::vector<int64_t>& dims) {
  detail::check_defined(x, "flip");
  cpu::IndexMaps maps = identity_maps(x.shape());
  for (int64_t d : distinct_dims(dims, x.dim(), "flip"))
    if (x.dim()) std::reverse(maps[size_t(d)].begin(), maps[size_t(d)].end());
  return gather_maps(x, maps);
}

Tensor roll(const Tensor& x, const std::vector<int64_t>& shifts, const std::vector<int64_t>& dims) {
  detail::check_defined(x, "roll");
  if (dims.empty()) {
    check<ValueError>(shifts.size() == 1, "roll: without dims it takes one shift, got {}: ({})", shifts.size(),
                      fmt::join(shifts, ", "));
    return roll(x.reshape({x.numel()}), shifts, {0}).reshape(x.shape());
  }
  check<ValueError>(shifts.size() == dims.size(), "roll: {} shifts ({}) for {} dims ({})", shifts.size(),
                    fmt::join(shifts, ", "), dims.size(), fmt::join(dims, ", "));
  std::vector<int64_t> total(size_t(std::max<int64_t>(x.dim(), 1)), 0);  // a dim given twice rolls twice
  for (size_t k = 0; k < dims.size(); ++k) total[size_t(normalize_dim(dims[k], x.dim(), "roll"))] += shifts[k];
  cpu::IndexMaps maps = identity_maps(x.shape());
  for (size_t d = 0; d < maps.size(); ++d) {
    const int64_t n = x.shape()[d];
    for (int64_t i = 0; i < n; ++i) maps[d][size_t(i)] = ((i - total[d]) % n + n) % n;  // output i holds i - shift
  }
  return gather_maps(x, maps);
}

namespace {

// The map of one padded dim of size n: output i reads i - before, mirrored (reflect) or clamped (replicate) at
// the edges, or -1 (constant).
std::vector<int64_t> pad_map(int64_t n, int64_t before, int64_t after, PadMode mode) {
  std::vector<int64_t> m(size_t(n + before + after));
  for (int64_t i = 0; i < int64_t(m.size()); ++i) {
    int64_t s = i - before;
    if (s < 0 || s >= n) {
      if (mode == PadMode::constant) s = -1;
      else if (mode == PadMode::reflect) s = s < 0 ? -s : 2 * (n - 1) - s;
      else s = std::clamp<int64_t>(s, 0, n - 1);
    }
    m[size_t(i)] = s;
  }
  return m;
}

const char* mode_name(PadMode mode) {
  return mode == PadMode::constant ? "constant" : mode == PadMode::reflect ? "reflect" : "replicate";
}

// pad's maps for x of `shape`, after checking the pads against it (`op`: pad or pad_backward).
cpu::IndexMaps pad_maps(const Shape& shape, const std::vector<int64_t>& pads, PadMode mode, const char* op) {
  const int64_t nd = int64_t(shape.size());
  check<ShapeError>(pads.size() % 2 == 0, "{}: pads must come in (before, after) pairs, got {}: ({})", op, pads.size(),
                    fmt::join(pads, ", "));
  check<ShapeError>(int64_t(pads.size()) / 2 <= nd, "{}: {} pads pad {} dims, the input {} has {}", op, pads.size(),
                    pads.size() / 2, shape, nd);
  cpu::IndexMaps maps = identity_maps(shape);
  for (size_t k = 0; k < pads.size() / 2; ++k) {
    const int64_t d = nd - 1 - int64_t(k), n = shape[size_t(d)], before = pads[2 * k], after = pads[2 * k + 1];
    check<ShapeError>(n + before + after >= 0, "{}: pads ({}, {}) make dim {} of {} negative: {}", op, before, after, d,
                      shape, n + before + after);
    check<ShapeError>(mode != PadMode::reflect || (before < n && after < n),
                      "{}: reflect pads ({}, {}) must be below the size {} of dim {} of {}", op, before, after, n, d,
                      shape);
    check<ShapeError>(mode != PadMode::replicate || n > 0 || (before <= 0 && after <= 0),
                      "{}: replicate cannot pad the empty dim {} of {}", op, d, shape);
    maps[size_t(d)] = pad_map(n, before, after, mode);
  }
  return maps;
}

}  // namespace

Tensor pad(const Tensor& x, const std::vector<int64_t>& pads, PadMode mode, double value) {
  detail::check_defined(x, "pad");
  check<ValueError>(mode == PadMode::constant || value == 0, "pad: mode {} takes no value, got {}", mode_name(mode),
                    value);
  return gather_maps(x, pad_maps(x.shape(), pads, mode, "pad"), value);
}

Tensor pad_backward(const Tensor& dy, const Shape& shape, const std::vector<int64_t>& pads, PadMode mode) {
  detail::check_defined(dy, "pad_backward");
  const cpu::IndexMaps maps = pad_maps(shape, pads, mode, "pad_backward");
  const Shape padded = maps_shape(maps);
  check<ShapeError>(dy.shape() == padded, "pad_backward: dy {} is not the padded shape {} of {}", dy.shape(), padded,
                    shape);
  Tensor g = dy.contiguous(), out = zeros(shape, dy.dtype());
  if (g.numel() == 0) return out;
  detail::dispatch_arith(dy.dtype(), "pad_backward", [&](auto z) {
    using T = decltype(z);
    cpu::remap_add(g.data<T>(), maps, out.strides(), out.data<T>());
  });
  return out;
}

Tensor repeat(const Tensor& x, const std::vector<int64_t>& repeats) {
  detail::check_defined(x, "repeat");
  check<ShapeError>(int64_t(repeats.size()) >= x.dim(), "repeat: {} repeats ({}) for the {} dims of {}",
                    repeats.size(), fmt::join(repeats, ", "), x.dim(), x.shape());
  Shape shape(repeats.size() - size_t(x.dim()), 1);  // x with leading dims of size 1
  shape.insert(shape.end(), x.shape().begin(), x.shape().end());
  const Tensor v = x.reshape(shape);
  cpu::IndexMaps maps(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) {
    check<ValueError>(repeats[d] >= 0, "repeat: repeats must be >= 0, got {} in ({})", repeats[d],
                      fmt::join(repeats, ", "));
    for (int64_t i = 0; i < repeats[d] * shape[d]; ++i) maps[d].push_back(i % shape[d]);
  }
  return gather_maps(v, maps);
}

Tensor tile(const Tensor& x, const std::vector<int64_t>& reps) {
  std::vector<int64_t> r(size_t(std::max<int64_t>(x.dim() - int64_t(reps.size()), 0)), 1);
  r.insert(r.end(), reps.begin(), reps.end());
  return repeat(x, r);
}

namespace {

// x with 0 off the band of the last two dims where keep(j - i) is false.
template <class Keep>
Tensor triangle(const Tensor& x, const char* op, Keep keep) {
  detail::check_defined(x, op);
  check<ShapeError>(x.dim() >= 2, "{}: expected a matrix or a batch of them (>= 2 dims), got {}", op, x.shape());
  const Tensor rows = arange(0, double(x.size(-2)), 1, i64).unsqueeze(1), cols = arange(0, double(x.size(-1)), 1, i64);
  return masked_fill(x, logical_not(keep(cols - rows)), 0);
}

}  // namespace

Tensor tril(const Tensor& x, int64_t diagonal) {
  return triangle(x, "tril", [diagonal](const Tensor& offset) { return le(offset, double(diagonal)); });
}
Tensor triu(const Tensor& x, int64_t diagonal) {
  return triangle(x, "triu", [diagonal](const Tensor& offset) { return ge(offset, double(diagonal)); });
}

Tensor one_hot(const Tensor& indices, int64_t num_classes, DType dtype) {
  detail::check_defined(indices, "one_hot", "the indices");
  check<DTypeError>(indices.dtype() == i64, "one_hot: indices must be i64, got {}", indices.dtype());
  check<ValueError>(num_classes >= -1, "one_hot: num_classes must be >= 0, or -1 to infer it, got {}", num_classes);
  check<ValueError>(num_classes >= 0 || indices.numel() > 0,
                    "one_hot: cannot infer num_classes from no indices (shape {})", indices.shape());
  if (indices.numel() > 0) {
    const std::vector<int64_t> v = indices.to_vector<int64_t>();  // exact, where item() would round to double
    const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
    check<IndexError>(*lo >= 0, "one_hot: class index {} is negative (indices {})", *lo, indices.shape());
    if (num_classes == -1) num_classes = *hi + 1;
    check<IndexError>(*hi < num_classes, "one_hot: class index {} is out of range [0, {})", *hi, num_classes);
  }
  return eq(indices.unsqueeze(-1), arange(0, double(num_classes), 1, i64)).to(dtype);
}

}  // namespace tg
