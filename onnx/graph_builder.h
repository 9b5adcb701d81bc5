#pragma once
// GraphBuilder: writes an ONNX graph node by node with ONNX's own protobuf classes (Debian's libonnx-dev), for
// the layer emitters (layers.h) and a model's glue (examples/sentiment/export_onnx.cpp). Values are named by
// strings, as in ONNX; the builder makes the names unique.
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "core/tensor.h"

namespace tg::onnx {

/// One dimension of a graph input or output: a size, or the name of a dynamic axis ("batch").
using Dim = std::variant<int64_t, std::string>;

/// One node attribute: an integer, a float, a list of integers or a string (ONNX's INT, FLOAT, INTS, STRING).
struct Attr {
  std::string name;                                                        ///< ONNX's attribute name ("axis")
  std::variant<int64_t, double, std::vector<int64_t>, std::string> value;  ///< INT, FLOAT, INTS or STRING
};

/// The ONNX element type of a dtype (FLOAT, DOUBLE, INT64, BOOL).
int32_t element_type(DType dtype);

/// A graph under construction; model() wraps it in a ModelProto of one opset.
class GraphBuilder {
 public:
  /// `float_dtype` is the model's float type (f32 or f64): the type of the float constants emitters add.
  explicit GraphBuilder(const std::string& name, DType float_dtype = f32);
  /// The model's float type, given at construction.
  DType float_dtype() const { return float_dtype_; }

  /// Declares a graph input and returns its value name (= name).
  std::string input(const std::string& name, DType dtype, const std::vector<Dim>& dims);
  /// Declares `value` as the graph output `name` (through an Identity when the names differ).
  void output(const std::string& value, const std::string& name, DType dtype, const std::vector<Dim>& dims);
  /// The tensor as an initializer named `name` (a state_dict name), added once: a second call with the same
  /// name returns it again. ValueError when `name` already holds a different tensor shape.
  std::string weight(const std::string& name, const Tensor& value);
  /// An unnamed constant tensor (an initializer "const_N").
  std::string constant(const Tensor& value);
  /// A 1-d i64 constant, for shapes, axes and split sizes.
  std::string ints(const std::vector<int64_t>& values);
  /// A 0-d constant of `dtype`.
  std::string scalar(double value, DType dtype);
  /// Adds one node of `type` with one output; returns the output's name.
  std::string op(const std::string& type, const std::vector<std::string>& inputs, const std::vector<Attr>& attrs = {});
  /// The same with `outputs` outputs (Split).
  std::vector<std::string> op(const std::string& type, const std::vector<std::string>& inputs, int outputs,
                              const std::vector<Attr>& attrs);

  /// The graph so far: inputs, outputs, initializers and nodes.
  const ::onnx::GraphProto& graph() const { return graph_; }
  /// The model: IR version of libonnx, the default domain at `opset`, producer "tensorgrad".
  ::onnx::ModelProto model(int64_t opset) const;

 private:
  std::string fresh(const std::string& stem);

  ::onnx::GraphProto graph_;
  DType float_dtype_;
  int64_t next_ = 0;
};

}  // namespace tg::onnx
