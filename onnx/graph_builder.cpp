// GraphBuilder: nodes, initializers and value infos of an ONNX graph, written into onnx::GraphProto.
#include "onnx/graph_builder.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"

namespace tg::onnx {
namespace {

void set_type(::onnx::ValueInfoProto& info, DType dtype, const std::vector<Dim>& dims) {
  ::onnx::TypeProto_Tensor* t = info.mutable_type()->mutable_tensor_type();
  t->set_elem_type(element_type(dtype));
  ::onnx::TensorShapeProto* shape = t->mutable_shape();
  for (const Dim& d : dims) {
    ::onnx::TensorShapeProto_Dimension* out = shape->add_dim();
    if (const int64_t* size = std::get_if<int64_t>(&d)) out->set_dim_value(*size);
    else out->set_dim_param(std::get<std::string>(d));
  }
}

// The tensor's elements in row-major order as little-endian raw bytes (ONNX's raw_data), any layout in.
void set_tensor(::onnx::TensorProto& out, const std::string& name, const Tensor& value) {
  out.set_name(name);
  out.set_data_type(element_type(value.dtype()));
  for (int64_t d = 0; d < value.dim(); ++d) out.add_dims(value.size(d));
  const Tensor c = value.contiguous();
  const size_t bytes = size_t(c.numel() * dtype_size(c.dtype()));
  std::string raw(bytes, '\0');
  if (bytes > 0) std::memcpy(raw.data(), static_cast<const char*>(c.storage()->data) +
                                             c.offset() * dtype_size(c.dtype()), bytes);
  out.set_raw_data(std::move(raw));
}

}  // namespace

int32_t element_type(DType dtype) {
  switch (dtype) {
    case f32: return ::onnx::TensorProto_DataType_FLOAT;
    case f64: return ::onnx::TensorProto_DataType_DOUBLE;
    case i64: return ::onnx::TensorProto_DataType_INT64;
    case boolean: return ::onnx::TensorProto_DataType_BOOL;
  }
  throw DTypeError(fmt::format("onnx: no element type for dtype {}", dtype));
}

GraphBuilder::GraphBuilder(const std::string& name, DType float_dtype) : float_dtype_(float_dtype) {
  graph_.set_name(name);
}

std::string GraphBuilder::fresh(const std::string& stem) { return fmt::format("{}_{}", stem, next_++); }

std::string GraphBuilder::input(const std::string& name, DType dtype, const std::vector<Dim>& dims) {
  set_type(*graph_.add_input(), dtype, dims);
  graph_.mutable_input(graph_.input_size() - 1)->set_name(name);
  return name;
}

void GraphBuilder::output(const std::string& value, const std::string& name, DType dtype,
                          const std::vector<Dim>& dims) {
  if (value != name) {
    ::onnx::NodeProto* node = graph_.add_node();
    node->set_op_type("Identity");
    node->set_name(fresh("Identity"));
    node->add_input(value);
    node->add_output(name);
  }
  ::onnx::ValueInfoProto* info = graph_.add_output();
  info->set_name(name);
  set_type(*info, dtype, dims);
}

std::string GraphBuilder::weight(const std::string& name, const Tensor& value) {
  for (const ::onnx::TensorProto& t : graph_.initializer()) {
    if (t.name() != name) continue;
    const bool same = t.dims_size() == value.dim() &&
                      std::equal(t.dims().begin(), t.dims().end(), value.shape().begin());
    check<ValueError>(same, "onnx export: initializer '{}' added twice with different shapes (now {})", name,
                      value.shape());
    return name;
  }
  set_tensor(*graph_.add_initializer(), name, value);
  return name;
}

std::string GraphBuilder::constant(const Tensor& value) { return weight(fresh("const"), value); }

std::string GraphBuilder::ints(const std::vector<int64_t>& values) {
  std::vector<double> v(values.begin(), values.end());
  return constant(tensor(v, {int64_t(values.size())}, i64));
}

std::string GraphBuilder::scalar(double value, DType dtype) { return constant(full({}, value, dtype)); }

std::string GraphBuilder::op(const std::string& type, const std::vector<std::string>& inputs,
                             const std::vector<Attr>& attrs) {
  return op(type, inputs, 1, attrs).front();
}

std::vector<std::string> GraphBuilder::op(const std::string& type, const std::vector<std::string>& inputs,
                                          int outputs, const std::vector<Attr>& attrs) {
  ::onnx::NodeProto* node = graph_.add_node();
  node->set_op_type(type);
  node->set_name(fresh(type));
  for (const std::string& in : inputs) node->add_input(in);
  std::vector<std::string> out;
  for (int i = 0; i < outputs; ++i) out.push_back(fresh(type)), node->add_output(out.back());
  for (const Attr& a : attrs) {
    ::onnx::AttributeProto* p = node->add_attribute();
    p->set_name(a.name);
    if (const int64_t* i = std::get_if<int64_t>(&a.value)) {
      p->set_type(::onnx::AttributeProto_AttributeType_INT), p->set_i(*i);
    } else if (const double* f = std::get_if<double>(&a.value)) {
      p->set_type(::onnx::AttributeProto_AttributeType_FLOAT), p->set_f(float(*f));
    } else if (const std::string* text = std::get_if<std::string>(&a.value)) {
      p->set_type(::onnx::AttributeProto_AttributeType_STRING), p->set_s(*text);
    } else {
      p->set_type(::onnx::AttributeProto_AttributeType_INTS);
      for (int64_t v : std::get<std::vector<int64_t>>(a.value)) p->add_ints(v);
    }
  }
  return out;
}

::onnx::ModelProto GraphBuilder::model(int64_t opset) const {
  ::onnx::ModelProto m;
  m.set_ir_version(::onnx::IR_VERSION);
  m.set_producer_name("tensorgrad");
  m.set_producer_version("0.1.0");
  ::onnx::OperatorSetIdProto* set = m.add_opset_import();
  set->set_domain("");
  set->set_version(opset);
  *m.mutable_graph() = graph_;
  return m;
}

}  // namespace tg::onnx
