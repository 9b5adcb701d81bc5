// write_cases: check cases as JSON, with onnxruntime's names for the element types.
#include "onnx/cases.h"

#include <nlohmann/json.hpp>

#include "core/atomic_file.h"
#include "core/error.h"

namespace tg::onnx {
namespace {

nlohmann::json to_json(const Tensor& t) {
  nlohmann::json j = {{"dims", std::vector<int64_t>(t.shape().begin(), t.shape().end())}};
  switch (t.dtype()) {
    case f32: j["dtype"] = "float32", j["data"] = t.to_vector<float>(); break;
    case f64: j["dtype"] = "float64", j["data"] = t.to_vector<double>(); break;
    case i64: j["dtype"] = "int64", j["data"] = t.to_vector<int64_t>(); break;
    case boolean: j["dtype"] = "bool", j["data"] = t.to_vector<bool>(); break;
  }
  return j;
}

nlohmann::json to_json(const std::vector<Tensor>& tensors) {
  nlohmann::json j = nlohmann::json::array();
  for (const Tensor& t : tensors) j.push_back(to_json(t));
  return j;
}

}  // namespace

void write_cases(const std::string& path, const std::vector<std::string>& input_names,
                 const std::vector<std::string>& output_names, const std::vector<CheckCase>& cases) {
  nlohmann::json j = {{"inputs", input_names}, {"outputs", output_names}, {"cases", nlohmann::json::array()}};
  for (size_t i = 0; i < cases.size(); ++i) {
    const CheckCase& c = cases[i];
    check<ValueError>(c.inputs.size() == input_names.size() && c.outputs.size() == output_names.size(),
                      "onnx cases: case {} has {} inputs and {} outputs for {} and {} names", i, c.inputs.size(),
                      c.outputs.size(), input_names.size(), output_names.size());
    j["cases"].push_back({{"inputs", to_json(c.inputs)}, {"outputs", to_json(c.outputs)}});
  }
  const std::string text = j.dump();
  write_file_atomic(path, {text}, "onnx cases");
}

}  // namespace tg::onnx
