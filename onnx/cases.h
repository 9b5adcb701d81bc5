#pragma once
// Check cases for an exported model: inputs and the outputs our forward gives for them, as JSON, for a runtime
// to compare its own outputs with (tools/onnx_check.sh runs onnxruntime on them).
#include <string>
#include <vector>

#include "core/tensor.h"

namespace tg::onnx {

/// One run of a model: its inputs and our outputs, in the order of the export's input and output names.
struct CheckCase {
  std::vector<Tensor> inputs;   ///< the model's inputs, one per input name
  std::vector<Tensor> outputs;  ///< our forward's outputs for them, one per output name
};

/// Writes {"inputs": names, "outputs": names, "cases": [{"inputs": [tensor...], "outputs": [tensor...]}]}, each
/// tensor {"dtype": "float32" | "float64" | "int64" | "bool", "dims": [...], "data": [...]} in row-major
/// order, floats in the shortest form that reads back exactly. ValueError when a case's counts differ
/// from the names'; Error when the file cannot be written.
void write_cases(const std::string& path, const std::vector<std::string>& input_names,
                 const std::vector<std::string>& output_names, const std::vector<CheckCase>& cases);

}  // namespace tg::onnx
