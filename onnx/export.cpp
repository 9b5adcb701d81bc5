// export_model: runs the example through our forward (eval mode, no graph), writes the graph with its
// inputs and outputs typed from the example, and has ONNX's checker and strict shape inference check it.
#include "onnx/export.h"

#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>

#include "autograd/variable.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "onnx/layers.h"

namespace tg::onnx {
namespace {

// Restores the layer's training mode when the export ends, also by an exception.
struct EvalGuard {
  nn::Layer& layer;
  bool was_training;
  explicit EvalGuard(nn::Layer& l) : layer(l), was_training(l.is_training()) { l.eval(); }
  ~EvalGuard() { layer.train(was_training); }
};

std::vector<Dim> dims_of(const std::string& name, const Tensor& t, const ExportOptions& options) {
  std::vector<Dim> dims(t.shape().begin(), t.shape().end());
  auto it = options.dynamic_axes.find(name);
  if (it == options.dynamic_axes.end()) return dims;
  for (const auto& [axis, symbol] : it->second) {
    check<ValueError>(axis >= 0 && axis < t.dim(), "onnx export: dynamic axis {} of '{}' is outside its shape {}",
                      axis, name, t.shape());
    dims[size_t(axis)] = symbol;
  }
  return dims;
}

std::vector<Tensor> run_forward(const ModelFunctions& fns, const std::vector<Tensor>& inputs) {
  std::string shapes;
  for (const Tensor& t : inputs) shapes += fmt::format("{}{} {}", shapes.empty() ? "" : ", ", t.shape(), t.dtype());
  NoGradGuard no_grad;
  try {
    return fns.forward(inputs);
  } catch (const Error& e) {
    throw ValueError(fmt::format("onnx export: the model refuses the example inputs ({}): {}", shapes, e.what()));
  }
}

DType float_dtype(const std::vector<Tensor>& outputs) {
  for (const Tensor& t : outputs)
    if (is_floating(t.dtype())) return t.dtype();
  return f32;
}

// The checker, then strict shape inference on a copy (it adds value infos the file does not need): a node
// whose input types or ranks do not fit its op is refused here rather than by a runtime.
void validate(const ::onnx::ModelProto& model) {
  try {
    ::onnx::checker::check_model(model);
    ::onnx::ModelProto inferred = model;
    ::onnx::shape_inference::InferShapes(inferred, ::onnx::OpSchemaRegistry::Instance(),
                                         ::onnx::ShapeInferenceOptions(true, 1, true));
  } catch (const std::exception& e) {  // ValidationError, InferenceError
    throw ValueError(fmt::format("onnx export: ONNX's checker refuses the model: {}", e.what()));
  }
}

}  // namespace

::onnx::ModelProto to_onnx(nn::Layer& layer, const std::vector<Tensor>& example_inputs, const ExportOptions& options,
                           const ModelFunctions& fns) {
  check<ValueError>(example_inputs.size() == options.input_names.size(), "onnx export: {} example inputs for {} "
                    "input names", example_inputs.size(), options.input_names.size());
  for (const auto& [name, axes] : options.dynamic_axes) {
    const auto& ins = options.input_names, &outs = options.output_names;
    check<ValueError>(std::find(ins.begin(), ins.end(), name) != ins.end() ||
                          std::find(outs.begin(), outs.end(), name) != outs.end(),
                      "onnx export: dynamic_axes names '{}', which is no input or output", name);
  }
  EvalGuard eval(layer);
  const std::vector<Tensor> outputs = run_forward(fns, example_inputs);
  check<ValueError>(outputs.size() == options.output_names.size(), "onnx export: the forward gives {} outputs for {} "
                    "output names", outputs.size(), options.output_names.size());
  GraphBuilder g(layer.type_name(), float_dtype(outputs));
  std::vector<std::string> inputs;
  for (size_t i = 0; i < example_inputs.size(); ++i) {
    const std::string& name = options.input_names[i];
    inputs.push_back(g.input(name, example_inputs[i].dtype(), dims_of(name, example_inputs[i], options)));
  }
  const std::vector<std::string> values = fns.graph(g, inputs);
  check<ValueError>(values.size() == outputs.size(), "onnx export: the graph gives {} outputs, the forward {}",
                    values.size(), outputs.size());
  for (size_t i = 0; i < values.size(); ++i) {
    const std::string& name = options.output_names[i];
    g.output(values[i], name, outputs[i].dtype(), dims_of(name, outputs[i], options));
  }
  ::onnx::ModelProto model = g.model(options.opset);
  validate(model);
  return model;
}

::onnx::ModelProto to_onnx(nn::Layer& layer, const Tensor& example_input, const ExportOptions& options) {
  ModelFunctions fns{
      .forward = [&](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{layer.forward(Variable(in[0])).value()};
      },
      .graph = [&](GraphBuilder& g, const std::vector<std::string>& in) {
        return std::vector<std::string>{emit(g, layer, "", in[0])};
      }};
  return to_onnx(layer, {example_input}, options, fns);
}

namespace {
// Atomically (write_file_atomic): a failed export leaves an earlier file at `path` whole.
void write(const ::onnx::ModelProto& model, const std::string& path) {
  std::string bytes;
  check<Error>(model.SerializeToString(&bytes), "onnx export: cannot serialise the model for {}", path);
  write_file_atomic(path, {bytes}, "onnx export");
}
}  // namespace

void export_model(nn::Layer& layer, const std::vector<Tensor>& example_inputs, const std::string& path,
                  const ExportOptions& options, const ModelFunctions& fns) {
  write(to_onnx(layer, example_inputs, options, fns), path);
}

void export_model(nn::Layer& layer, const Tensor& example_input, const std::string& path,
                  const ExportOptions& options) {
  write(to_onnx(layer, example_input, options), path);
}

}  // namespace tg::onnx
