// sort, argsort and topk (core/cpu/ops/order.cpp, kernel core/cpu/sort.cpp) against std::stable_sort on many
// rows (split over threads) holding ties and NaN, along every dim of a strided input; argmin beside argmax.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "core/ops.h"
#include "core/random.h"
#include "reference.h"

using namespace tg;
using namespace tg::test;

namespace {

// The stable order of a line, NaN last (first when descending).
std::vector<int64_t> reference_order(const std::vector<double>& v, bool descending) {
  std::vector<int64_t> order(v.size());
  std::iota(order.begin(), order.end(), int64_t(0));
  auto key = [&](int64_t i) { return std::isnan(v[size_t(i)]) ? INFINITY : v[size_t(i)]; };
  auto rank = [&](int64_t i) { return std::isnan(v[size_t(i)]) ? 1 : 0; };  // NaN above +inf
  std::stable_sort(order.begin(), order.end(), [&](int64_t i, int64_t j) {
    if (rank(i) != rank(j)) return descending ? rank(i) > rank(j) : rank(i) < rank(j);
    return descending ? key(i) > key(j) : key(i) < key(j);
  });
  return order;
}

}  // namespace

TEST_CASE("sort, argsort and topk give the stable order along any dim, NaN largest") {
  Generator gen(7);
  // Values rounded to halves, so that lines hold ties; every 13th a NaN, a few ±inf.
  std::vector<double> v = randn({40, 37, 3}, f64, &gen).to_vector<double>();
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = i % 13 == 0 ? NAN : i % 29 == 0 ? (i % 2 ? INFINITY : -INFINITY) : std::round(v[i] * 2) / 2;
  const Tensor t = tensor(v, {40, 37, 3}, f64).permute({2, 0, 1});  // (3, 40, 37), strided
  for (int64_t dim : {0, 1, 2})
    for (bool descending : {false, true}) {
      CAPTURE(dim);
      CAPTURE(descending);
      const ValuesIndices s = sort(t, dim, descending);
      const Tensor picked = gather(t, dim, s.indices);
      CHECK(same_bits(s.values.to_vector<double>(), picked.to_vector<double>()));
      const int64_t k = std::min<int64_t>(5, t.size(dim));
      const ValuesIndices top = topk(t, k, dim, descending);
      CHECK(top.indices.to_vector<int64_t>() == s.indices.narrow(dim, 0, k).contiguous().to_vector<int64_t>());
      CHECK(argsort(t, dim, descending).to_vector<int64_t>() == s.indices.to_vector<int64_t>());
      const Tensor lines = t.transpose(dim, -1).contiguous(), idx = s.indices.transpose(dim, -1).contiguous();
      const int64_t len = t.size(dim);
      const std::vector<double> lv = lines.to_vector<double>();
      const std::vector<int64_t> iv = idx.to_vector<int64_t>();
      for (int64_t r = 0; r < lines.numel() / len; ++r) {
        const std::vector<double> line(lv.begin() + r * len, lv.begin() + (r + 1) * len);
        REQUIRE(std::vector<int64_t>(iv.begin() + r * len, iv.begin() + (r + 1) * len) ==
                reference_order(line, descending));
      }
    }
}

TEST_CASE("sort keeps f32 and i64 values exactly; argmin takes the first minimum") {
  check_tensor(sort(tensor({3, -1, 2.5f, -1}), 0).values, {4}, {-1, -1, 2.5, 3}, 0, 0);
  check_tensor(sort(index_tensor({5, 1, 9, 1}, {2, 2}), 0, true).values, {2, 2}, {9, 1, 5, 1}, 0, 0);
  check_tensor(argmin(tensor({2, 0, 1, 0, 0, 3}, {2, 3}), 1, true), {2, 1}, {1, 0}, 0, 0);
  check_tensor(argmin(tensor({2, NAN, 1, NAN}), 0), {}, {1}, 0, 0);  // the first NaN, as PyTorch
}
