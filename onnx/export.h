#pragma once
// tg::onnx::export_model: a model as an ONNX file (opset 17, checked by ONNX's checker), its weights as
// initializers named as in its state_dict. The graph is written from the model's structure by the layer
// emitters (layers.h), not recorded from one run of the dynamic graph: what a forward computes on plain
// tensors (padding masks, positions, counts) is not in our autograd graph, and a recording would freeze it,
// and every reshape, at the example's batch and sequence sizes. The example inputs are run through our
// forward once, to refuse inputs the model refuses and to type the outputs.
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "nn/layer.h"
#include "onnx/graph_builder.h"

namespace tg::onnx {

/// The exported graph's interface: its input and output names, dynamic axes and opset.
struct ExportOptions {
  std::vector<std::string> input_names = {"input"};    ///< one per example input, in order
  std::vector<std::string> output_names = {"output"};  ///< one per forward output, in order
  /// Axes left dynamic, by input or output name: {{"tokens", {{0, "batch"}, {1, "sequence"}}}}; every other
  /// axis keeps the example's size.
  std::map<std::string, std::map<int64_t, std::string>> dynamic_axes;
  int64_t opset = 17;  ///< LayerNormalization needs 17, the highest Debian's libonnx 1.12 knows
};

/// A model's forward twice: on tensors (ours) and as graph nodes (graph input names in, output names out).
struct ModelFunctions {
  /// Our forward: example inputs in, outputs out (run once to check the shapes and make check cases).
  std::function<std::vector<Tensor>(const std::vector<Tensor>&)> forward;
  /// The same forward as nodes added to the builder: graph input value names in, output value names out.
  std::function<std::vector<std::string>(GraphBuilder&, const std::vector<std::string>&)> graph;
};

/// The checked ONNX model of `layer` computed by `fns`. Eval mode: the layer is switched to eval for the
/// example run and back after, and the graph is its eval-mode forward (dropout is the identity), whatever
/// mode the layer was in. ValueError when the example inputs do not match options.input_names, when the
/// forward refuses them (with its message), when a dynamic axis names no input or output or an axis beyond
/// its rank, when an emitter has no mapping for a layer (naming it), or when ONNX's checker refuses the graph.
::onnx::ModelProto to_onnx(nn::Layer& layer, const std::vector<Tensor>& example_inputs, const ExportOptions& options,
                           const ModelFunctions& fns);
/// A unary layer (emit() in layers.h): forward = layer.forward(x), one input and one output.
::onnx::ModelProto to_onnx(nn::Layer& layer, const Tensor& example_input, const ExportOptions& options = {});

/// to_onnx, written to `path` (Error when it cannot be written).
void export_model(nn::Layer& layer, const std::vector<Tensor>& example_inputs, const std::string& path,
                  const ExportOptions& options, const ModelFunctions& fns);
void export_model(nn::Layer& layer, const Tensor& example_input, const std::string& path,
                  const ExportOptions& options = {});

}  // namespace tg::onnx
