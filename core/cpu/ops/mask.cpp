// Packed masks: one bit per element, 64 to an i64 word, in row-major order. Dropout and relu keep these
// for their backward instead of a float mask or their output, a 32nd of the memory in f32: in a training
// step of the encoder the f32 dropout masks alone were about a fifth of what the graph held.
#include <cmath>

#include "core/cpu/kernels.h"
#include "core/kernel_util.h"
#include "core/ops.h"
#include "core/random.h"

namespace tg {
namespace {

int64_t words_for(int64_t n) { return (n + 63) / 64; }

const uint64_t* words(const Tensor& bits) { return reinterpret_cast<const uint64_t*>(bits.data<int64_t>()); }

void check_bits(const Tensor& bits, int64_t n, const char* op) {
  check<ShapeError>(bits.dtype() == i64 && bits.dim() == 1 && bits.is_contiguous() && bits.numel() == words_for(n),
                    "{}: packed mask {} {} does not hold {} elements", op, bits.shape(), bits.dtype(), n);
}

// dropout(x), or with `relu` dropout(relu(x)) with the bits of relu(x) > 0 cleared in keep.
DropoutResult dropout_of(const Tensor& x, double p, Generator* gen, bool relu, const char* op) {
  check<ValueError>(p >= 0 && p <= 1, "{}: probability must be in [0, 1], got {}", op, p);
  detail::check_defined(x, op);
  Generator& g = gen ? *gen : default_generator();
  const Tensor xc = x.contiguous();
  const int64_t n = xc.numel();
  Tensor keep = empty({words_for(n)}, i64);
  Tensor y = empty(x.shape(), x.dtype());
  // The stream bernoulli(shape, 1 - p) draws: one next() per element in row-major order, kept when below
  // (1-p)·2^64. At p = 0 and p = 1 nothing is drawn (all kept, all dropped).
  const uint64_t threshold = p > 0 ? uint64_t(std::ldexp(1 - p, 64)) : 0;
  uint64_t* kw = reinterpret_cast<uint64_t*>(keep.data<int64_t>());
  if (p > 0 && p < 1) g.bits_below(threshold, kw, n);
  else cpu::fill_bits(kw, n, p == 0);
  double scale_used = 0;
  detail::dispatch_float(x.dtype(), op, [&](auto z) {
    using T = decltype(z);
    // The rounding of x·(m / (1-p)) in T, as the float mask this replaces had it.
    const T scale = p < 1 ? T(1) / T(1 - p) : T(0);
    if (relu) cpu::relu_mask_multiply(kw, xc.data<T>(), scale, y.data<T>(), n);
    else cpu::mask_multiply(kw, xc.data<T>(), scale, y.data<T>(), n);
    scale_used = double(scale);
  });
  return {y, keep, scale_used};
}

}  // namespace

DropoutResult dropout(const Tensor& x, double p, Generator* gen) { return dropout_of(x, p, gen, false, "dropout"); }

DropoutResult relu_dropout(const Tensor& x, double p, Generator* gen) {
  return dropout_of(x, p, gen, true, "relu_dropout");
}

Tensor pack_positive(const Tensor& x) {
  detail::check_defined(x, "pack_positive");
  const Tensor xc = x.contiguous();
  const int64_t n = xc.numel();
  Tensor bits = empty({words_for(n)}, i64);
  uint64_t* w = reinterpret_cast<uint64_t*>(bits.data<int64_t>());
  detail::dispatch_float(x.dtype(), "pack_positive", [&](auto z) {
    cpu::pack_positive(xc.data<decltype(z)>(), w, n);
  });
  return bits;
}

Tensor masked_scale(const Tensor& x, const Tensor& bits, double scale) {
  detail::check_defined(x, "masked_scale");
  const Tensor xc = x.contiguous();
  const int64_t n = xc.numel();
  check_bits(bits, n, "masked_scale");
  Tensor y = empty(x.shape(), x.dtype());
  detail::dispatch_float(x.dtype(), "masked_scale", [&](auto z) {
    using T = decltype(z);
    cpu::mask_select(words(bits), xc.data<T>(), T(scale), y.data<T>(), n);
  });
  return y;
}

// The (B, H, S, S) tensor between the two ops is never made (cpu::dropout_softmax_backward_f32).
Tensor dropout_softmax_backward(const Tensor& dy, const Tensor& y, const Tensor& keep, double scale) {
  detail::check_defined(dy, "dropout_softmax_backward");
  detail::check_defined(y, "dropout_softmax_backward");
  check<ShapeError>(dy.shape() == y.shape() && dy.dim() >= 1,
                    "dropout_softmax_backward: dy {} and y {} must have one shape of 1 or more dims", dy.shape(),
                    y.shape());
  check<DTypeError>(dy.dtype() == y.dtype(), "dropout_softmax_backward: dtypes differ: {} vs {}", dy.dtype(),
                    y.dtype());
  if (dy.dtype() != f32) return softmax_backward(masked_scale(dy, keep, scale), y, -1);
  check_bits(keep, dy.numel(), "dropout_softmax_backward");
  const Tensor g = dy.contiguous(), p = y.contiguous();
  Tensor out = empty(dy.shape(), f32);
  const int64_t n = dy.size(-1), rows = n ? dy.numel() / n : 0;
  cpu::dropout_softmax_backward_f32(words(keep), g.data<float>(), p.data<float>(), float(scale), out.data<float>(),
                                    rows, n);
  return out;
}

Tensor unpack_mask(const Tensor& bits, const Shape& shape) {
  const int64_t n = shape.numel();
  check_bits(bits, n, "unpack_mask");
  Tensor out = empty(shape, boolean);
  cpu::unpack_bits(words(bits), out.data<bool>(), n);
  return out;
}

}  // namespace tg
