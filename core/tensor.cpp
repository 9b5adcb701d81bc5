// Tensor handles and views: storage allocation, shape/stride bookkeeping for every view, and the
// element accessors. Kernels that touch values live in the other files of core/.
#include "core/tensor.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "core/error.h"
#include "core/kernel_util.h"

namespace tg {

Tensor::Tensor(StoragePtr storage, Shape shape, Strides strides, int64_t offset, DType dtype)
    : storage_(std::move(storage)), shape_(std::move(shape)), strides_(std::move(strides)), offset_(offset),
      numel_(shape_.numel()), dtype_(dtype) {
  // An empty view reads nothing, so its offset means nothing; but slicing or selecting along a huge size-0
  // view can push it far past any buffer, where even data()'s pointer arithmetic is undefined. Keep it 0.
  if (numel_ == 0) offset_ = 0;
  // Contiguity is a property of shape and strides, which never change after construction: worked out once
  // here rather than in every kernel that asks (six times per op in a chain of small ops).
  int64_t expected = 1;
  for (int64_t d = dim() - 1; d >= 0 && contiguous_ && numel_ != 0; --d) {  // numel 0: no element to misplace
    if (shape_[d] == 1) continue;                                         // (and size-0 dims get stride 1)
    contiguous_ = strides_[d] == expected;
    expected *= shape_[d];
  }
}

// For ops that read the size along `d`: normalize_dim accepts 0 and -1 on a 0-d tensor (sum over dim 0 of a
// scalar is fine), but a 0-d tensor has no size to read.
static int64_t sized_dim(int64_t d, int64_t ndim, const char* op) {
  check<IndexError>(ndim > 0, "{}: dim {} of a 0-d tensor: it has no dims", op, d);
  return normalize_dim(d, ndim, op);
}

int64_t Tensor::size(int64_t d) const {
  detail::check_defined(*this, "size");
  return shape_[sized_dim(d, dim(), "size")];
}

void Tensor::data_error(DType want) const {
  detail::check_defined(*this, "data", "the tensor");
  throw DTypeError(fmt::format("data: tensor has dtype {}, accessed as {}", dtype_, want));
}

double Tensor::item() const {
  detail::check_defined(*this, "item");
  check<ValueError>(numel_ == 1, "item: expected a tensor with one element, got shape {}", shape_);
  return detail::dispatch(dtype_, [&](auto t) { return double(data<decltype(t)>()[0]); });
}

template <class T>
std::vector<T> Tensor::to_vector() const {
  if (!defined()) return {};
  DType want = std::is_same_v<T, float> ? f32 : std::is_same_v<T, double> ? f64 : std::is_same_v<T, bool> ? boolean : i64;
  Tensor c = to(want).contiguous();
  const T* p = c.data<T>();
  return std::vector<T>(p, p + numel_);
}
template std::vector<float> Tensor::to_vector<float>() const;
template std::vector<double> Tensor::to_vector<double>() const;
template std::vector<int64_t> Tensor::to_vector<int64_t>() const;
template std::vector<bool> Tensor::to_vector<bool>() const;

// Resolves one -1 in a requested shape against numel (ShapeError when sizes do not multiply out).
static Shape infer_shape(Shape shape, int64_t numel, const Shape& from, const char* op) {
  int64_t known = 1, span = 1, infer = -1;  // span: the product without zeros, as in Shape::numel
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      check<ShapeError>(infer < 0, "{}: only one dimension can be -1, got {}", op, shape);
      infer = int64_t(i);
    } else {
      check<ShapeError>(shape[i] >= 0, "{}: invalid size {} in shape {}", op, shape[i], shape);
      check<ShapeError>(!__builtin_mul_overflow(span, std::max<int64_t>(shape[i], 1), &span),
                        "{}: shape {} is too large: its sizes multiply past int64", op, shape);
      known *= shape[i];
    }
  }
  if (infer >= 0) {
    check<ShapeError>(known != 0 && numel % known == 0, "{}: shape {} is invalid for input of shape {}", op, shape, from);
    shape[infer] = numel / known;
  }
  check<ShapeError>(shape.numel() == numel, "{}: shape {} is invalid for input of shape {} ({} elements)", op, shape,
                    from, numel);
  return shape;
}

// Strides that let `old` be viewed as `shape` without copying, or nullopt (PyTorch's computeStride).
static std::optional<Strides> view_strides(const Shape& old, const Strides& st, const Shape& shape) {
  if (old.numel() == 0 || old.empty()) return contiguous_strides(shape);
  Strides out(shape.size());
  int64_t view_d = int64_t(shape.size()) - 1, base = st.back(), tensor_numel = 1, view_numel = 1;
  for (int64_t d = int64_t(old.size()) - 1; d >= 0; --d) {
    tensor_numel *= old[d];
    if (d == 0 || (old[d - 1] != 1 && st[d - 1] != tensor_numel * base)) {
      while (view_d >= 0 && (view_numel < tensor_numel || shape[view_d] == 1)) {
        out[view_d] = view_numel * base;
        view_numel *= shape[view_d--];
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (d > 0) base = st[d - 1], tensor_numel = 1, view_numel = 1;
    }
  }
  if (view_d != -1) return std::nullopt;
  return out;
}

Tensor Tensor::view(const Shape& requested) const {
  detail::check_defined(*this, "view");
  Shape shape = infer_shape(requested, numel_, shape_, "view");
  auto st = view_strides(shape_, strides_, shape);
  check<ShapeError>(st.has_value(), "view: cannot view a tensor of shape {} with strides ({}) as {}: use reshape",
                    shape_, fmt::join(strides_, ", "), shape);
  return Tensor(storage_, shape, *st, offset_, dtype_);
}

Tensor Tensor::reshape(const Shape& requested) const {
  detail::check_defined(*this, "reshape");
  Shape shape = infer_shape(requested, numel_, shape_, "reshape");
  if (auto st = view_strides(shape_, strides_, shape)) return Tensor(storage_, shape, *st, offset_, dtype_);
  return contiguous().view(shape);
}

Tensor Tensor::flatten(int64_t start, int64_t end) const {
  detail::check_defined(*this, "flatten");
  if (dim() == 0) return reshape({1});
  start = normalize_dim(start, dim(), "flatten");
  end = normalize_dim(end, dim(), "flatten");
  check<IndexError>(start <= end, "flatten: start dim {} is after end dim {}", start, end);
  Shape s(shape_.begin(), shape_.begin() + start);
  int64_t n = 1;
  for (int64_t d = start; d <= end; ++d) n *= shape_[d];
  s.push_back(n);
  s.insert(s.end(), shape_.begin() + end + 1, shape_.end());
  return reshape(s);
}

Tensor Tensor::transpose(int64_t d0, int64_t d1) const {
  detail::check_defined(*this, "transpose");
  d0 = normalize_dim(d0, dim(), "transpose");
  d1 = normalize_dim(d1, dim(), "transpose");
  if (dim() == 0) return *this;
  std::vector<int64_t> p(dim());
  for (int64_t i = 0; i < dim(); ++i) p[i] = i;
  std::swap(p[d0], p[d1]);
  return permute(p);
}

Tensor Tensor::permute(const std::vector<int64_t>& dims) const {
  detail::check_defined(*this, "permute");
  check<ShapeError>(int64_t(dims.size()) == dim(), "permute: got {} dims for a tensor of shape {}", dims.size(), shape_);
  Shape s(dims.size());
  Strides st(dims.size());
  std::vector<bool> seen(dims.size(), false);
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t d = normalize_dim(dims[i], dim(), "permute");
    check<IndexError>(!seen[d], "permute: dim {} repeated in ({})", d, fmt::join(dims, ", "));
    seen[d] = true;
    s[i] = shape_[d];
    st[i] = strides_[d];
  }
  return Tensor(storage_, s, st, offset_, dtype_);
}

Tensor Tensor::mT() const {
  detail::check_defined(*this, "mT");
  check<ShapeError>(dim() >= 2, "mT: expected at least 2 dims, got shape {}", shape_);
  return transpose(-2, -1);
}

Tensor Tensor::slice(int64_t d, int64_t start, int64_t end, int64_t step) const {
  detail::check_defined(*this, "slice");
  d = sized_dim(d, dim(), "slice");
  check<ValueError>(step > 0, "slice: step must be positive, got {}", step);
  int64_t n = shape_[d];
  if (start < 0) start += n;
  if (end < 0) end += n;
  start = std::clamp<int64_t>(start, 0, n);
  end = std::clamp<int64_t>(end, start, n);
  Shape s = shape_;
  Strides st = strides_;
  s[d] = end == start ? 0 : (end - start - 1) / step + 1;  // not (end - start + step - 1): a huge step overflows
  if (s[d] > 1) st[d] *= step;  // step < n here, so this stays inside the storage; with one element it is unused
  return Tensor(storage_, s, st, offset_ + start * strides_[d], dtype_);
}

Tensor Tensor::narrow(int64_t d, int64_t start, int64_t length) const {
  detail::check_defined(*this, "narrow");
  d = sized_dim(d, dim(), "narrow");
  if (start < 0 && start >= -shape_[d]) start += shape_[d];
  check<IndexError>(start >= 0 && length >= 0 && start <= shape_[d] && length <= shape_[d] - start,
                    "narrow: range [{}, {}) out of bounds for dim {} of shape {}", start, __int128(start) + length, d,
                    shape_);
  return slice(d, start, start + length);
}

Tensor Tensor::select(int64_t d, int64_t index) const {
  detail::check_defined(*this, "select");
  d = sized_dim(d, dim(), "select");
  int64_t n = shape_[d];
  check<IndexError>(index >= -n && index < n, "select: index {} out of range for dim {} of size {}", index, d, n);
  if (index < 0) index += n;
  Shape s = shape_;
  Strides st = strides_;
  s.erase(s.begin() + d);
  st.erase(st.begin() + d);
  return Tensor(storage_, s, st, offset_ + index * strides_[d], dtype_);
}

Tensor Tensor::unsqueeze(int64_t d) const {
  detail::check_defined(*this, "unsqueeze");
  d = normalize_dim(d, dim() + 1, "unsqueeze");
  Shape s = shape_;
  Strides st = strides_;
  int64_t stride = d < dim() ? shape_[d] * strides_[d] : 1;
  s.insert(s.begin() + d, 1);
  st.insert(st.begin() + d, stride);
  return Tensor(storage_, s, st, offset_, dtype_);
}

Tensor Tensor::squeeze(int64_t d) const {
  detail::check_defined(*this, "squeeze");
  if (dim() == 0) return *this;
  d = normalize_dim(d, dim(), "squeeze");
  if (shape_[d] != 1) return *this;
  Shape s = shape_;
  Strides st = strides_;
  s.erase(s.begin() + d);
  st.erase(st.begin() + d);
  return Tensor(storage_, s, st, offset_, dtype_);
}

Tensor Tensor::squeeze() const {
  detail::check_defined(*this, "squeeze");
  Shape s;
  Strides st;
  for (int64_t d = 0; d < dim(); ++d)
    if (shape_[d] != 1) s.push_back(shape_[d]), st.push_back(strides_[d]);
  return Tensor(storage_, s, st, offset_, dtype_);
}

Tensor Tensor::expand(const Shape& shape) const {
  detail::check_defined(*this, "expand");
  check<ShapeError>(shape.size() >= shape_.size(), "expand: cannot expand shape {} to {}: fewer dims", shape_, shape);
  size_t lead = shape.size() - shape_.size();
  Shape s(shape.size());
  Strides st(shape.size(), 0);
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i < lead) {
      check<ShapeError>(shape[i] >= 0, "expand: size -1 not allowed for new leading dim in {}", shape);
      s[i] = shape[i];
      continue;
    }
    int64_t old = shape_[i - lead], want = shape[i] == -1 ? old : shape[i];
    check<ShapeError>((want == old || old == 1) && want >= 0, "expand: shape {} cannot be expanded to {}", shape_, shape);
    s[i] = want;
    st[i] = want == old ? strides_[i - lead] : 0;
  }
  return Tensor(storage_, s, st, offset_, dtype_);
}

Tensor Tensor::contiguous() const { return is_contiguous() ? *this : clone(); }

Tensor Tensor::clone() const {
  detail::check_defined(*this, "clone");
  Tensor out = empty(shape_, dtype_);
  out.copy_(*this);
  out.storage()->version = 0;
  return out;
}

Tensor Tensor::to(DType t) const {
  detail::check_defined(*this, "to");
  if (t == dtype_) return *this;
  Tensor out = empty(shape_, t);
  out.copy_(*this);
  out.storage()->version = 0;
  return out;
}

namespace detail {

Strides broadcast_strides(const Tensor& t, const Shape& shape) {
  Strides st(shape.size(), 0);
  size_t lead = shape.size() - t.shape().size();
  for (size_t i = 0; i < t.shape().size(); ++i)
    st[lead + i] = t.shape()[i] == 1 ? 0 : t.strides()[i];
  return st;
}

}  // namespace detail
}  // namespace tg
