// cumsum and cumprod: checks and dtype dispatch; the running loop is cpu::cumulate (core/cpu/scan.cpp).
#include "core/cpu/kernels.h"
#include "core/kernel_util.h"
#include "core/ops.h"

namespace tg {
namespace {

Tensor cumulate(const Tensor& x_in, int64_t dim, bool product, const char* op) {
  detail::check_defined(x_in, op);
  dim = normalize_dim(dim, x_in.dim(), op);
  // bool counts as i64, as PyTorch promotes it
  Tensor x = (x_in.dtype() == boolean ? x_in.to(i64) : x_in).contiguous();
  Tensor out = empty(x.shape(), x.dtype());
  const cpu::Around a = cpu::around(x.shape(), dim);  // (1, 1, 1) for a 0-d x
  detail::dispatch_arith(x.dtype(), op, [&](auto z) {
    using T = decltype(z);
    cpu::cumulate(x.data<T>(), out.data<T>(), a, product);
  });
  return out;
}

}  // namespace

Tensor cumsum(const Tensor& x, int64_t dim) { return cumulate(x, dim, false, "cumsum"); }
Tensor cumprod(const Tensor& x, int64_t dim) { return cumulate(x, dim, true, "cumprod"); }

}  // namespace tg
