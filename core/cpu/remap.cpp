// Gathers through per-dim index maps and their adjoint (ops/layout.cpp: flip, roll, pad, repeat). Each dim's
// map becomes a table of element offsets, so the walk adds one offset per dim and row, and one per element.
#include "core/cpu/kernels.h"

namespace tg::cpu {
namespace {

constexpr int64_t kNone = -1;  // an offset table's "no source" (valid offsets are >= 0: strides are)

// Calls row(base, valid, r) for each row r (all dims but the last) of the maps' shape in row-major order, with
// the offset the leading dims add and whether they all have a source; `last` gets the last dim's offsets.
template <class F>
void for_each_row(const IndexMaps& maps, const Strides& strides, std::vector<int64_t>& last, F row) {
  const size_t nd = maps.size();
  std::vector<std::vector<int64_t>> off(nd);
  int64_t rows = 1;
  for (size_t d = 0; d < nd; ++d) {
    for (int64_t m : maps[d]) off[d].push_back(m < 0 ? kNone : m * strides[d]);
    if (d + 1 < nd) rows *= int64_t(maps[d].size());
  }
  last = off[nd - 1];
  std::vector<size_t> idx(nd - 1, 0);
  for (int64_t r = 0; r < rows; ++r) {
    int64_t base = 0;
    bool valid = true;
    for (size_t d = 0; d + 1 < nd; ++d) {
      const int64_t o = off[d][idx[d]];
      valid &= o != kNone;
      base += o;
    }
    row(base, valid, r);
    for (size_t d = nd - 1; d-- > 0;) {  // the odometer over the leading dims
      if (++idx[d] < off[d].size()) break;
      idx[d] = 0;
    }
  }
}

}  // namespace

template <class T>
void remap(const T* src, const Strides& src_strides, const IndexMaps& maps, T fill, T* out) {
  if (maps.empty()) {
    *out = *src;
    return;
  }
  std::vector<int64_t> last;
  for_each_row(maps, src_strides, last, [&](int64_t base, bool valid, int64_t r) {
    T* o = out + r * int64_t(last.size());
    for (size_t i = 0; i < last.size(); ++i) o[i] = valid && last[i] != kNone ? src[base + last[i]] : fill;
  });
}

template <class T>
void remap_add(const T* g, const IndexMaps& maps, const Strides& dst_strides, T* dst) {
  if (maps.empty()) {
    *dst += *g;
    return;
  }
  std::vector<int64_t> last;
  for_each_row(maps, dst_strides, last, [&](int64_t base, bool valid, int64_t r) {
    if (!valid) return;
    const T* row = g + r * int64_t(last.size());
    for (size_t i = 0; i < last.size(); ++i)
      if (last[i] != kNone) dst[base + last[i]] += row[i];
  });
}

template void remap(const float*, const Strides&, const IndexMaps&, float, float*);
template void remap(const double*, const Strides&, const IndexMaps&, double, double*);
template void remap(const int64_t*, const Strides&, const IndexMaps&, int64_t, int64_t*);
template void remap(const bool*, const Strides&, const IndexMaps&, bool, bool*);
template void remap_add(const float*, const IndexMaps&, const Strides&, float*);
template void remap_add(const double*, const IndexMaps&, const Strides&, double*);
template void remap_add(const int64_t*, const IndexMaps&, const Strides&, int64_t*);

}  // namespace tg::cpu
