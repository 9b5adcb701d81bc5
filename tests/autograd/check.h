#pragma once
// Small helpers shared by the autograd tests: f64 leaves from literal values, and a value check that names
// the first element that differs.
#include <doctest/doctest.h>

#include <vector>

#include "autograd/variable.h"
#include "core/tensor.h"

namespace tg::test {

/// An f64 leaf holding `values` in row-major order, requiring grad.
inline Variable leaf(const std::vector<double>& values, const Shape& shape) {
  return Variable(tensor(values, shape, DType::f64), true);
}
inline Variable leaf(const std::vector<double>& values) { return leaf(values, {int64_t(values.size())}); }

/// CHECKs that t is defined and holds `want` (row-major) to a relative `tol`, naming the element that differs.
inline void check_values(const Tensor& t, const std::vector<double>& want, double tol = 1e-12) {
  REQUIRE(t.defined());
  const std::vector<double> got = t.to_vector<double>();
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i);
    if (got[i] == want[i]) continue;  // also equal infinities, which Approx refuses
    CHECK(got[i] == doctest::Approx(want[i]).epsilon(tol));
  }
}

}  // namespace tg::test
