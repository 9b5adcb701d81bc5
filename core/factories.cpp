// Tensor factories: constant fills, ranges, identity and tensors from user values.
#include <cmath>
#include <new>

#include "core/error.h"
#include "core/kernel_util.h"
#include "core/pool.h"
#include "core/tensor.h"

namespace tg {

void check_representable(double value, DType t, const char* op) {
  check<ValueError>(t != i64 || (value >= -0x1p63 && value < 0x1p63), "{}: value {} does not fit dtype {}", op, value,
                    t);
}

namespace detail {
namespace {
// contiguous_layout(shape), its ValueError prefixed with `op` (numel_for's).
ContiguousLayout layout_for(const Shape& shape, const char* op) {
  try {
    return contiguous_layout(shape);  // validates sizes and overflow
  } catch (const ValueError& e) {
    throw ValueError(fmt::format("{}: {}", op, e.what()));
  }
}
}  // namespace

int64_t numel_for(const Shape& shape, const char* op) { return layout_for(shape, op).numel; }

Tensor empty_for(const Shape& shape, DType dtype, const char* op) {
  int64_t bytes = 0;
  ContiguousLayout layout = layout_for(shape, op);
  check<ValueError>(!__builtin_mul_overflow(layout.numel, dtype_size(dtype), &bytes), "{}: shape {} is too large", op,
                    shape);
  try {
    return Tensor(Storage::make(bytes), shape, std::move(layout), dtype);
  } catch (const std::bad_alloc&) {  // said as PyTorch says it, with the size: a bare std::bad_alloc named nothing
    throw Error(fmt::format("{}: cannot allocate {} bytes for shape {} of {}: out of memory", op, bytes, shape, dtype));
  }
}
}  // namespace detail

Tensor empty(const Shape& shape, DType dtype) { return detail::empty_for(shape, dtype, "empty"); }

namespace {
Tensor filled(const Shape& shape, double value, DType dtype, const char* op) {
  check_representable(value, dtype, op);  // else fill_ names itself
  Tensor t = detail::empty_for(shape, dtype, op);
  t.fill_(value);
  t.storage()->version = 0;
  return t;
}
}  // namespace

Tensor full(const Shape& shape, double value, DType dtype) { return filled(shape, value, dtype, "full"); }
Tensor zeros(const Shape& shape, DType dtype) { return filled(shape, 0.0, dtype, "zeros"); }
Tensor ones(const Shape& shape, DType dtype) { return filled(shape, 1.0, dtype, "ones"); }
Tensor zeros_like(const Tensor& t) { return detail::check_defined(t, "zeros_like"), zeros(t.shape(), t.dtype()); }
Tensor ones_like(const Tensor& t) { return detail::check_defined(t, "ones_like"), ones(t.shape(), t.dtype()); }
Tensor scalar_tensor(double value, DType dtype) { return full({}, value, dtype); }

Tensor arange(double start, double end, double step, DType dtype) {
  check<ValueError>(step != 0, "arange: step must be nonzero");
  check<ValueError>(std::isfinite(start) && std::isfinite(end) && std::isfinite(step),
                    "arange: start {}, end {} and step {} must be finite", start, end, step);
  // In double first: a count past int64 (or an inf from end - start) must not reach the integer cast.
  const double count = std::ceil((end - start) / step);
  check<ValueError>(count < 0x1p62, "arange: [{}, {}) in steps of {} has too many elements", start, end, step);
  int64_t n = std::max<int64_t>(0, int64_t(count));
  Tensor t = empty({n}, dtype);
  detail::dispatch(dtype, [&](auto z) {
    using T = decltype(z);
    T* p = t.data<T>();
    for (int64_t i = 0; i < n; ++i) p[i] = T(start + double(i) * step);
  });
  return t;
}

Tensor eye(int64_t n, DType dtype) {
  Tensor t = filled({n, n}, 0.0, dtype, "eye");
  detail::dispatch(dtype, [&](auto z) {
    using T = decltype(z);
    T* p = t.data<T>();
    for (int64_t i = 0; i < n; ++i) p[i * n + i] = T(1);
  });
  return t;
}

Tensor tensor(const std::vector<double>& values, const Shape& shape, DType dtype) {
  check<ShapeError>(detail::numel_for(shape, "tensor") == int64_t(values.size()), "tensor: {} values do not fill shape {}",
                    values.size(), shape);
  Tensor t = detail::empty_for(shape, dtype, "tensor");
  detail::dispatch(dtype, [&](auto z) {
    using T = decltype(z);
    T* p = t.data<T>();
    for (size_t i = 0; i < values.size(); ++i) {
      check_representable(values[i], dtype, "tensor");
      p[i] = T(values[i]);
    }
  });
  return t;
}

Tensor tensor(const std::vector<double>& values, DType dtype) {
  return tensor(values, {int64_t(values.size())}, dtype);
}

Tensor index_tensor(const std::vector<int64_t>& values, const Shape& shape) {
  check<ShapeError>(detail::numel_for(shape, "index_tensor") == int64_t(values.size()),
                    "index_tensor: {} values do not fill shape {}", values.size(), shape);
  Tensor t = detail::empty_for(shape, i64, "index_tensor");
  std::copy(values.begin(), values.end(), t.data<int64_t>());
  return t;
}

}  // namespace tg
