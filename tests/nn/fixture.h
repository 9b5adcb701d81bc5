#pragma once
// Reading the PyTorch reference fixtures (tests/fixtures/README.md) and comparing against them: JSON
// files, tensor objects {"shape", "data"} (with "inf"/"-inf"/"nan" strings), the safetensors weights a
// layer fixture names, a closeness check that reports the worst element, and the comparison of a layer's
// output and gradients with one layer-fixture case. Shared by every nn test.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <functional>
#include <algorithm>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/safetensors.h"
#include "core/tensor.h"
#include "nn/layer.h"

namespace tg::test {

/// The parsed JSON file at TG_FIXTURES_DIR/relative_path (e.g. "nn/linear.f64.json"); std::runtime_error
/// naming the path when it cannot be opened.
inline nlohmann::json load_fixture(const std::string& relative_path) {
  const std::string path = std::string(TG_FIXTURES_DIR) + "/" + relative_path;
  std::ifstream in(path);
  if (!in) throw std::runtime_error("load_fixture: cannot open " + path);
  return nlohmann::json::parse(in);
}

/// A fixture number: a JSON number, or one of the strings "inf", "-inf", "nan".
inline double fixture_number(const nlohmann::json& v) {
  if (v.is_boolean()) return v.get<bool>() ? 1.0 : 0.0;
  if (!v.is_string()) return v.get<double>();
  const std::string s = v.get<std::string>();
  if (s == "inf") return std::numeric_limits<double>::infinity();
  if (s == "-inf") return -std::numeric_limits<double>::infinity();
  return std::numeric_limits<double>::quiet_NaN();
}

/// A tensor object {"shape": [...], "data": [...]} as a contiguous tensor of `dtype`. i64 is read exactly
/// (integers), bool from true/false; f32 values are the exact float32 the fixture widened to double.
inline Tensor fixture_tensor(const nlohmann::json& t, DType dtype) {
  const Shape shape = t.at("shape").get<std::vector<int64_t>>();
  const nlohmann::json& data = t.at("data");
  if (dtype == DType::i64) return index_tensor(data.get<std::vector<int64_t>>(), shape);
  std::vector<double> values;
  values.reserve(data.size());
  for (const auto& v : data) values.push_back(fixture_number(v));
  return tensor(values, shape, dtype);
}

/// The dtype a fixture file runs in: its "dtype" field, "float64" -> f64, "float32" -> f32.
inline DType fixture_dtype(const nlohmann::json& fixture) {
  return fixture.at("dtype").get<std::string>() == "float64" ? DType::f64 : DType::f32;
}

/// The weights a layer fixture names ("weights": "linear.f64.safetensors", relative to nn/), by their
/// PyTorch state_dict names.
inline TensorMap fixture_weights(const nlohmann::json& fixture) {
  const std::string path = std::string(TG_FIXTURES_DIR) + "/nn/" + fixture.at("weights").get<std::string>();
  return load_safetensors(path).tensors;
}

/// The comparison tolerance the nn tests use by default: 1e-5 for f32, 1e-10 for f64.
inline double fixture_tolerance(DType dtype) { return dtype == DType::f64 ? 1e-10 : 1e-5; }

/// fixture_tolerance(dtype) times the largest finite |value| of `expected` (at least 1): relative for large values
/// (outputs of 100 in f32, BCE's gradients of 1e12), absolute for small ones.
inline double fixture_tolerance(DType dtype, const Tensor& expected) {
  double scale = 1;
  for (double v : expected.to_vector<double>())
    if (std::isfinite(v)) scale = std::max(scale, std::abs(v));
  return fixture_tolerance(dtype) * scale;
}

/// Calls run(case, dtype, name) on every case of `stem`.f64.json and `stem`.f32.json (stem e.g. "nn/losses"),
/// with "<file> <case name>" captured for failure messages; returns how many cases ran in each, f64 then f32.
inline std::vector<int> for_each_fixture_case(
    const std::string& stem, const std::function<void(const nlohmann::json&, DType, const std::string&)>& run) {
  std::vector<int> ran;
  for (const char* dt : {"f64", "f32"}) {
    const std::string file = stem + "." + dt + ".json";
    const nlohmann::json f = load_fixture(file);
    ran.push_back(0);
    for (const nlohmann::json& c : f.at("cases")) {
      const std::string name = file + " " + c.at("name").get<std::string>();
      CAPTURE(name);
      run(c, fixture_dtype(f), name);
      ++ran.back();
    }
  }
  return ran;
}

/// Largest |a - b| over all elements (shapes must match; NaN where exactly one side is NaN counts as
/// infinite, equal infinities as 0).
inline double max_abs_diff(const Tensor& a, const Tensor& b) {
  check<ShapeError>(a.shape() == b.shape(), "max_abs_diff: shapes differ: {} vs {}", a.shape(), b.shape());
  const std::vector<double> x = a.to_vector<double>(), y = b.to_vector<double>();
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (x[i] == y[i] || (std::isnan(x[i]) && std::isnan(y[i]))) continue;
    const double d = std::abs(x[i] - y[i]);
    worst = std::isnan(d) ? std::numeric_limits<double>::infinity() : std::max(worst, d);
  }
  return worst;
}

/// CHECKs that `actual` matches `expected` within `atol` everywhere; on failure the message names `what`,
/// the shapes and the worst element (flat index, both values). Returns the max abs error for reporting.
inline double check_close(const Tensor& actual, const Tensor& expected, double atol, const std::string& what) {
  if (actual.shape() != expected.shape()) {
    FAIL_CHECK(what << ": shapes differ: " << fmt::format("{} vs {}", actual.shape(), expected.shape()));
    return std::numeric_limits<double>::infinity();
  }
  const std::vector<double> x = actual.to_vector<double>(), y = expected.to_vector<double>();
  double worst = 0;
  size_t at = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (x[i] == y[i] || (std::isnan(x[i]) && std::isnan(y[i]))) continue;
    double d = std::abs(x[i] - y[i]);
    if (std::isnan(d)) d = std::numeric_limits<double>::infinity();
    if (d > worst) worst = d, at = i;
  }
  if (worst > atol) {
    FAIL_CHECK(what << ": max abs error " << worst << " > " << atol << " at flat index " << at << " (actual " << x[at]
                    << ", expected " << y[at] << ")");
  }
  return worst;
}

/// Max abs errors of one layer-fixture case (for reporting).
struct CaseErrors {
  double output = 0, input_grads = 0, param_grads = 0;
};

/// Checks one case of a layer fixture: `output` (the layer's output for the case's inputs) against
/// outputs.output, then backward of loss = Σ output·R and every input_grads entry (by name, from `inputs`)
/// and every param_grads entry (by dotted name, from `layer`); every parameter must have one. Gradients
/// accumulate, so zero_grad the layer before the forward. `tol` bounds the output error (see
/// fixture_tolerance) and, unless `grad_tol` is given, the gradients' errors too.
inline CaseErrors check_fixture_case(const nn::Layer& layer, const nlohmann::json& c, const Variable& output,
                                     const std::map<std::string, Variable>& inputs, double tol, double grad_tol = -1) {
  if (grad_tol < 0) grad_tol = tol;
  const std::string name = c.at("name").get<std::string>();
  const DType dt = output.dtype();
  CaseErrors e;
  e.output = check_close(output.value(), fixture_tensor(c.at("outputs").at("output"), dt), tol, name + " output");
  sum(output * Variable(fixture_tensor(c.at("R"), dt))).backward();
  for (const auto& item : c.at("input_grads").items()) {  // doctest's messages can't take a structured binding
    const std::string key = item.key();
    const nlohmann::json& want = item.value();
    REQUIRE_MESSAGE(inputs.count(key), name, ": no input named ", key);
    const double err = check_close(inputs.at(key).grad(), fixture_tensor(want, dt), grad_tol, name + " d/d" + key);
    e.input_grads = std::max(e.input_grads, err);
  }
  const auto params = layer.named_parameters();
  CHECK_MESSAGE(params.size() == c.at("param_grads").size(), name, ": parameter count differs from the fixture");
  for (const auto& entry : params) {
    const std::string& key = entry.first;
    const Variable& p = entry.second;
    REQUIRE_MESSAGE(c.at("param_grads").contains(key), name, ": fixture has no gradient for ", key);
    const double err = check_close(p.grad(), fixture_tensor(c["param_grads"][key], dt), grad_tol, name + " d/d" + key);
    e.param_grads = std::max(e.param_grads, err);
  }
  return e;
}

}  // namespace tg::test
