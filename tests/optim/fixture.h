#pragma once
// Reading tests/fixtures/optim.json (schema in tests/fixtures/README.md): numbers that may be the strings
// "inf"/"-inf"/"nan", flat row-major value lists, and comparisons that report the largest difference.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/format.h"
#include "core/tensor.h"

namespace tg::test {

using nlohmann::json;

/// optim.json, parsed once.
inline const json& optim_fixture() {
  static const json j = [] {
    std::ifstream in(std::string(TG_FIXTURES_DIR) + "/optim.json");
    if (!in) throw std::runtime_error("optim_fixture: cannot open " TG_FIXTURES_DIR "/optim.json");
    return json::parse(in);
  }();
  return j;
}

/// A fixture number: a JSON number or "inf", "-inf", "nan".
inline double number(const json& v) {
  if (!v.is_string()) return v.get<double>();
  const std::string s = v.get<std::string>();
  if (s == "inf") return std::numeric_limits<double>::infinity();
  if (s == "-inf") return -std::numeric_limits<double>::infinity();
  return std::numeric_limits<double>::quiet_NaN();
}

inline std::vector<double> numbers(const json& flat) {
  std::vector<double> v;
  for (const json& x : flat) v.push_back(number(x));
  return v;
}

/// A flat list as a tensor of `shape`.
inline Tensor flat_tensor(const json& flat, const json& shape, DType dtype = f64) {
  return tensor(numbers(flat), Shape(shape.get<std::vector<int64_t>>()), dtype);
}

/// max |t - expected| over the elements (t read as double); NaN/inf must sit where the fixture has them
/// (with the same sign), else the result is inf.
inline double max_abs_diff(const Tensor& t, const std::vector<double>& expected) {
  const std::vector<double> got = t.to_vector<double>();
  if (got.size() != expected.size()) return std::numeric_limits<double>::infinity();
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double a = got[i], b = expected[i];
    if (std::isnan(a) || std::isnan(b) || std::isinf(a) || std::isinf(b)) {
      const bool same = (std::isnan(a) && std::isnan(b)) || a == b;
      if (!same) return std::numeric_limits<double>::infinity();
      continue;
    }
    worst = std::max(worst, std::fabs(a - b));
  }
  return worst;
}

/// True when both tensors hold bit-identical values (same shape and dtype).
inline bool bit_equal(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape() || a.dtype() != b.dtype()) return false;
  const Tensor x = a.contiguous(), y = b.contiguous();
  const int64_t size = dtype_size(x.dtype());
  return std::memcmp(static_cast<const char*>(x.storage()->data) + x.offset() * size,
                     static_cast<const char*>(y.storage()->data) + y.offset() * size, size_t(x.numel() * size)) == 0;
}

}  // namespace tg::test
