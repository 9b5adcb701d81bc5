// In-place writes (fill_, copy_, add_, mul_, addcmul_, addcdiv_): what optimizers and initialisers use to
// update parameters without allocating. Each bumps the storage version, so autograd can tell a value it
// saved was overwritten.
#include <algorithm>
#include <cmath>
#include <iterator>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/cpu/loops.h"
#include "core/kernel_util.h"
#include "core/ops.h"

namespace tg {
namespace {

// dst[i] = f(dst[i], a[i], b[i]) with a and b broadcast to dst's shape; all of dtype T.
template <class T, class F>
void update3(Tensor& dst, const Tensor& a, const Tensor& b, F f) {
  T* pd = dst.data<T>();
  const T *pa = a.data<T>(), *pb = b.data<T>();
  const Shape& s = dst.shape();
  // Flat when a and b are laid out as dst or are one element (the optimizers' m.mul_(β)).
  // Each operand's shape is compared once (add_ and mul_ pass theirs twice): on small tensors these compares
  // were half of an update.
  auto full = [&](const Tensor& t) { return t.is_contiguous() && t.shape() == s; };
  const bool a_full = full(a), b_full = &b == &a ? a_full : full(b);
  if (dst.is_contiguous() && (a_full || a.numel() == 1) && (b_full || b.numel() == 1))
    return cpu::update_flat(pd, pa, a_full, pb, b_full, dst.numel(), f);
  cpu::update_strided(s, pd, dst.strides(), pa, detail::broadcast_strides(a, s), pb, detail::broadcast_strides(b, s), f);
}

// A destination with a stride-0 dim of size > 1 (an expand) has several elements at one address: an
// in-place update would apply to that address once per element (or the last write would win), so it is
// refused, as PyTorch refuses it. contiguous() or clone() gives a tensor that can be written.
void check_writable(const Tensor& dst, const char* op) {
  detail::check_defined(dst, op, "the tensor written");
  for (int64_t d = 0; d < dst.dim(); ++d)
    check<ValueError>(dst.strides()[size_t(d)] != 0 || dst.shape()[size_t(d)] <= 1,
                      "{}: cannot write in place into a tensor whose elements share memory (shape {}, strides {}); "
                      "write into its contiguous() or clone() instead", op, dst.shape(), dst.strides());
}

// The element offsets [first, last] a view can touch in its storage.
std::pair<int64_t, int64_t> span(const Tensor& t) {
  int64_t lo = t.offset(), hi = t.offset();
  for (int64_t d = 0; d < t.dim(); ++d) {
    const int64_t reach = t.strides()[size_t(d)] * (t.shape()[size_t(d)] - 1);
    (reach < 0 ? lo : hi) += reach;
  }
  return {lo, hi};
}

// The sorted element offsets of a view.
std::vector<int64_t> offsets(const Tensor& t) {
  std::vector<int64_t> out;
  out.reserve(size_t(t.numel()));
  cpu::visit<1>(t.shape(), {t.strides()},
                   [&](const std::array<int64_t, 1>& o) { out.push_back(t.offset() + o[0]); });
  std::sort(out.begin(), out.end());
  return out;
}

// An operand that shares elements with the destination is read while the destination is written, so unless
// each element reads only itself (the same view: x.add_(x)) the result depends on the order of the writes:
// x.add_(x.transpose(0, 1)) or x.mul_(x.select(0, 0)) would silently give a wrong answer. Refused, as PyTorch
// refuses a partial overlap (at::assert_no_partial_overlap). Views of one storage that share no element, as
// two columns of a matrix, are independent and allowed. The element sets are compared only when the spans
// meet (rare: an update of one storage from itself).
void check_no_overlap(const Tensor& dst, const Tensor& src, const char* op) {
  if (dst.storage() != src.storage() || dst.numel() == 0 || src.numel() == 0) return;
  if (src.offset() == dst.offset() && src.shape() == dst.shape() && src.strides() == dst.strides()) return;
  const auto [dlo, dhi] = span(dst);
  const auto [slo, shi] = span(src);
  if (shi < dlo || dhi < slo) return;
  const std::vector<int64_t> written = offsets(dst), read = offsets(src);
  std::vector<int64_t> common;
  std::set_intersection(written.begin(), written.end(), read.begin(), read.end(), std::back_inserter(common));
  check<ValueError>(common.empty(),
                    "{}: the operand (shape {}, strides {}, offset {}) shares memory with the tensor written to "
                    "(shape {}, strides {}, offset {}), so the result would depend on the order of the writes; "
                    "pass the operand's clone()", op, src.shape(), src.strides(), src.offset(), dst.shape(),
                    dst.strides(), dst.offset());
}

void check_operand(const Tensor& dst, const Tensor& src, const char* op) {
  detail::check_defined(src, op, "an operand");
  check<ShapeError>(src.shape() == dst.shape() || broadcast_shapes(dst.shape(), src.shape(), op) == dst.shape(),
                    "{}: operand of shape {} does not broadcast to {}", op, src.shape(), dst.shape());
  check_no_overlap(dst, src, op);
}

// torch.can_cast: whether a result of dtype `from` may be stored into a tensor of dtype `to` without leaving its
// category: not a float into i64 or bool, nor an i64 into bool.
bool can_cast(DType from, DType to) {
  return !(is_floating(from) && !is_floating(to)) && !(from != boolean && to == boolean);
}

// The dtype add_ or mul_ computes in, as PyTorch: result_type(dst, other), which must be castable to dst's
// dtype (an i64 tensor cannot take a float result in place, nor a bool one an i64 result).
DType in_place_type(const Tensor& dst, const Tensor& other, const char* op) {
  const DType t = result_type(dst, other);
  check<DTypeError>(can_cast(t, dst.dtype()),
                    "{}: the result's dtype {} (of {} with {}) cannot be stored in place into the {} tensor, as in "
                    "PyTorch; convert the tensor with to({}) first", op, t, dst.dtype(), other.dtype(), dst.dtype(), t);
  return t;
}

// dst = f(dst, a, b) elementwise; add_ and mul_ pass their one operand twice and may mix dtypes (computed in
// in_place_type, then rounded to dst's), addcmul_ and addcdiv_ take one dtype.
template <class F>
Tensor& apply(Tensor& dst, const Tensor& a, const Tensor& b, const char* op, F f) {
  // One operand of dst's dtype and layout in another buffer (a gradient summed into a leaf's, an optimizer's
  // update): nothing to broadcast, convert or check for aliasing.
  const bool plain = &b == &a && dst.defined() && a.defined() && a.dtype() == dst.dtype() && dst.is_contiguous() &&
                     a.is_contiguous() && a.shape() == dst.shape() && a.storage() != dst.storage();
  if (!plain) {
    check_writable(dst, op);
    check_operand(dst, a, op);
    if (&b != &a) {
      check_operand(dst, b, op);
      check<DTypeError>(a.dtype() == dst.dtype() && b.dtype() == dst.dtype(),
                        "{}: dtypes differ: {}, {} and {} (PyTorch has no mixed dtypes here either)", op, dst.dtype(),
                        a.dtype(), b.dtype());
    } else if (a.dtype() != dst.dtype()) {
      const DType t = in_place_type(dst, a, op);
      const Tensor operand = a.to(t);
      if (t == dst.dtype()) return apply(dst, operand, operand, op, f);
      Tensor wide = dst.to(t);  // f32 += f64: in f64, then rounded once into dst
      apply(wide, operand, operand, op, f);
      return dst.copy_(wide);
    }
  }
  detail::dispatch_arith(dst.dtype(), op, [&](auto z) {
    using T = decltype(z);
    update3<T>(dst, a, b, [&](T d, T x, T y) { return T(f(d, x, y)); });
  });
  ++dst.storage()->version;
  return dst;
}

}  // namespace

Tensor& Tensor::copy_(const Tensor& src) {
  check_writable(*this, "copy_");
  detail::check_defined(src, "copy_", "the source");
  check<ShapeError>(broadcast_shapes(shape_, src.shape(), "copy_") == shape_,
                    "copy_: source of shape {} does not broadcast to {}", src.shape(), shape_);
  check_no_overlap(*this, src, "copy_");
  detail::dispatch(dtype_, [&](auto zd) {
    using D = decltype(zd);
    detail::dispatch(src.dtype(), [&](auto zs) {
      using S = decltype(zs);
      D* pd = data<D>();
      const S* ps = src.data<S>();
      if constexpr (std::is_integral_v<D> && !std::is_same_v<D, bool> && std::is_floating_point_v<S>) {
        // Converting NaN, inf or a value out of range to an integer is undefined behaviour: refused before
        // anything is written.
        cpu::visit<1>(src.shape(), {src.strides()}, [&](const std::array<int64_t, 1>& o) {
          check_representable(double(ps[o[0]]), dtype_, "copy_");
        });
      }
      if (is_contiguous() && src.is_contiguous() && src.shape() == shape_) return cpu::convert(ps, pd, numel_);
      // Strided copies run over the pool too: attention's causal row blocks write their key and value gradients
      // into slices of zeros (slice_backward), 2^19 elements each in the GPT default.
      cpu::convert_strided(shape_, pd, strides_, ps, detail::broadcast_strides(src, shape_));
    });
  });
  ++storage_->version;
  return *this;
}

Tensor& Tensor::fill_(double value) {
  detail::check_defined(*this, "fill_");
  check_representable(value, dtype_, "fill_");
  detail::dispatch(dtype_, [&](auto z) {
    using T = decltype(z);
    T* p = data<T>();
    const T v = T(value);
    // A contiguous tensor (every zeros() and ones()) in one flat fill, which the compiler vectorises; the
    // strided walk does not.
    if (is_contiguous()) return cpu::fill_flat(p, numel_, v);
    cpu::fill_strided(shape_, p, strides_, v);
  });
  ++storage_->version;
  return *this;
}
Tensor& Tensor::zero_() { return fill_(0.0); }

Tensor& Tensor::add_(const Tensor& other, double alpha) {
  if (!(alpha == std::trunc(alpha) && std::abs(alpha) < 0x1p63)) {  // an integral result takes an integral alpha only
    detail::check_defined(*this, "add_", "the tensor written");
    detail::check_defined(other, "add_", "an operand");
    const DType t = result_type(*this, other);
    check<DTypeError>(is_floating(t), "add_: alpha {} is not an integer, but the result's dtype is {}", alpha, t);
  }
  // alpha = 1 (a gradient summed into a leaf's) adds in the tensor's own type: for f32 the bits of the sum
  // in double rounded to float (a sum of two floats rounds once either way), in a float loop.
  if (alpha == 1.0) return apply(*this, other, other, "add_", [](auto d, auto x, auto) { return d + x; });
  return apply(*this, other, other, "add_", [alpha](auto d, auto x, auto) { return d + alpha * x; });
}
Tensor& Tensor::mul_(const Tensor& other) {
  return apply(*this, other, other, "mul_", [](auto d, auto x, auto) { return d * x; });
}
Tensor& Tensor::mul_(double value) {
  detail::check_defined(*this, "mul_");
  return mul_(scalar_tensor(value, result_type(*this, value)));
}
Tensor& Tensor::addcmul_(const Tensor& a, const Tensor& b, double value) {
  return apply(*this, a, b, "addcmul_", [value](auto d, auto x, auto y) { return d + value * x * y; });
}
Tensor& Tensor::addcdiv_(const Tensor& a, const Tensor& b, double value) {
  check<DTypeError>(is_floating(dtype_), "addcdiv_: expected a floating dtype, got {}", dtype_);
  return apply(*this, a, b, "addcdiv_", [value](auto d, auto x, auto y) { return d + value * x / y; });
}

}  // namespace tg
