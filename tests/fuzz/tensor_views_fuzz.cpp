// libFuzzer target: tensors from user-given shapes and chains of view ops with arbitrary integers. The
// bytes decode into a small program: a dtype and a shape for the base tensor, then up to 16 view ops
// (reshape, view, permute, transpose, slice, narrow, select, expand, squeeze, unsqueeze, flatten, mT,
// contiguous), each with its own integers. Every op must either give a view that stays inside its storage
// or throw tg::Error; at the end the view's sum, its contiguous copy's sum and a sum walked here by strides
// must agree exactly.
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "core/error.h"
#include "core/ops.h"
#include "core/tensor.h"

namespace {

constexpr int64_t kMaxElements = 1 << 16;  // larger tensors are not allocated: that would test the allocator

void require(bool cond) {
  if (!cond) std::abort();
}

// Reads the program; past the end every read gives 0.
struct Program {
  const uint8_t* p;
  size_t n;
  uint8_t byte() { return n ? (--n, *p++) : 0; }
  bool done() const { return n == 0; }
  // Mostly small ints around zero, sometimes a boundary value or 8 raw bytes.
  int64_t integer() {
    uint8_t b = byte();
    if (b < 0xF0) return int64_t(b % 19) - 9;
    switch (b & 7) {
      case 0: return INT64_MAX;
      case 1: return INT64_MIN;
      case 2: return int64_t(1) << 32;
      case 3: return int64_t(1) << 62;
      case 4: return -(int64_t(1) << 40);
      default: {
        uint64_t v = 0;
        for (int i = 0; i < 8; ++i) v = v << 8 | byte();
        return int64_t(v);
      }
    }
  }
  std::vector<int64_t> ints(size_t max_count) {
    std::vector<int64_t> v(byte() % (max_count + 1));
    for (int64_t& x : v) x = integer();
    return v;
  }
};

// Every element a view can reach must lie inside its storage (checked in 128-bit: no overflow here).
void check_in_storage(const tg::Tensor& t) {
  if (t.numel() == 0) return;
  __int128 lo = t.offset(), hi = t.offset();
  for (int64_t d = 0; d < t.dim(); ++d) {
    __int128 span = __int128(t.shape()[d] - 1) * t.strides()[d];
    (span < 0 ? lo : hi) += span;
  }
  require(lo >= 0 && hi < __int128(t.storage()->nbytes / tg::dtype_size(t.dtype())));
}

// Sum by walking every index through shape, strides and offset.
double walked_sum(const tg::Tensor& t) {
  const int64_t* base = static_cast<const int64_t*>(t.storage()->data);
  double s = 0;
  std::vector<int64_t> idx(t.dim(), 0);
  for (int64_t i = 0; i < t.numel(); ++i) {
    int64_t off = t.offset();
    for (int64_t d = 0; d < t.dim(); ++d) off += idx[d] * t.strides()[d];
    s += double(base[off]);
    for (int64_t d = t.dim() - 1; d >= 0 && ++idx[d] == t.shape()[d]; --d) idx[d] = 0;
  }
  return s;
}

tg::Tensor apply(const tg::Tensor& t, uint8_t op, Program& in) {
  // reshape and contiguous may copy: of a huge expanded view that would only test the allocator (which
  // answers an impossible request with std::bad_alloc, or under ASan with a report), so view instead.
  const bool may_copy = t.numel() <= kMaxElements;
  switch (op % 14) {
    case 0: return may_copy ? t.reshape(in.ints(5)) : t.view(in.ints(5));
    case 1: return t.view(in.ints(5));
    case 2: return t.permute(in.ints(6));
    case 3: {
      int64_t a = in.integer();
      return t.transpose(a, in.integer());
    }
    case 4: {
      int64_t d = in.integer(), a = in.integer(), b = in.integer();
      return t.slice(d, a, b, in.integer());
    }
    case 5: {
      int64_t d = in.integer(), a = in.integer();
      return t.narrow(d, a, in.integer());
    }
    case 6: {
      int64_t d = in.integer();
      return t.select(d, in.integer());
    }
    case 7: return t.expand(in.ints(6));
    case 8: return t.squeeze(in.integer());
    case 9: return t.squeeze();
    case 10: return t.unsqueeze(in.integer());
    case 11: {
      int64_t a = in.integer();
      return t.flatten(a, in.integer());
    }
    case 12: return t.mT();
    default: return may_copy ? t.contiguous() : t;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Program in{data, size};
  tg::Shape shape = in.ints(5);
  tg::Tensor t;
  try {
    if (shape.numel() > kMaxElements) return 0;
    t = tg::empty(shape, tg::i64);
  } catch (const tg::Error&) { return 0; }
  for (int64_t i = 0; i < t.numel(); ++i) t.data<int64_t>()[i] = i % 7 - 3;
  for (int step = 0; step < 16 && !in.done(); ++step) {
    try {
      t = apply(t, in.byte(), in);
    } catch (const tg::Error&) {}
    check_in_storage(t);
  }
  try {
    if (t.numel() > kMaxElements) return 0;
    tg::Tensor c = t.contiguous();
    require(c.is_contiguous() && c.shape() == t.shape());
    double want = walked_sum(t);
    require(tg::sum(t).item() == want && tg::sum(c).item() == want && walked_sum(c) == want);
  } catch (const tg::Error&) {}
  return 0;
}
