// tg::onnx: the ops each layer maps to (GRU and LSTM: their gate order), initializers named and valued as the
// state_dict, dynamic axes, eval-mode export of a layer in train mode, and the errors for unmapped layers and
// bad inputs. That onnxruntime computes
// what we compute is checked by tools/onnx_check.sh (tests/onnx/sentiment_check.sh).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "nn/nn.h"
#include "onnx/cases.h"
#include "onnx/export.h"
#include "onnx/layers.h"

using namespace tg;
// tg::onnx, short: `onnx` alone is ambiguous beside ONNX's own namespace once tg is used.
namespace ox = tg::onnx;

namespace {

std::vector<std::string> op_types(const ::onnx::ModelProto& m) {
  std::vector<std::string> out;
  for (const ::onnx::NodeProto& n : m.graph().node()) out.push_back(n.op_type());
  return out;
}

bool has_op(const ::onnx::ModelProto& m, const std::string& type) {
  const std::vector<std::string> ops = op_types(m);
  return std::find(ops.begin(), ops.end(), type) != ops.end();
}

const ::onnx::TensorProto* initializer(const ::onnx::ModelProto& m, const std::string& name) {
  for (const ::onnx::TensorProto& t : m.graph().initializer())
    if (t.name() == name) return &t;
  return nullptr;
}

std::unique_ptr<nn::Sequential> mlp() {
  auto s = std::make_unique<nn::Sequential>();
  s->add(std::make_unique<nn::Dense>(nn::DenseOptions{.in_features = 4, .out_features = 8}));
  s->add(std::make_unique<nn::ReLU>());
  s->add(std::make_unique<nn::Dropout>(0.5));
  s->add(std::make_unique<nn::Dense>(nn::DenseOptions{.in_features = 8, .out_features = 3}));
  s->add(std::make_unique<nn::GELU>());
  s->add(std::make_unique<nn::LayerNorm>(nn::LayerNormOptions{.normalized_shape = {3}}));
  return s;
}

}  // namespace

TEST_CASE("a Sequential maps to MatMul, Relu, Erf and LayerNormalization at opset 17") {
  auto model = mlp();
  const ::onnx::ModelProto m = ox::to_onnx(*model, randn({2, 4}));
  CHECK(m.opset_import(0).version() == 17);
  const std::vector<std::string> want = {"Transpose", "MatMul", "Add", "Relu", "Transpose", "MatMul", "Add",
                                         "Div", "Erf", "Add", "Mul", "Mul", "LayerNormalization", "Identity"};
  CHECK(op_types(m) == want);  // Dropout is the identity in eval mode: no node
  CHECK(m.graph().input(0).name() == "input");
  CHECK(m.graph().output(0).name() == "output");
}

TEST_CASE("initializers carry the state_dict's names and values") {
  auto model = mlp();
  const ::onnx::ModelProto m = ox::to_onnx(*model, randn({2, 4}));
  for (const auto& entry : model->state_dict()) {
    const std::string& name = entry.first;  // not a structured binding: clang 14's CAPTURE cannot name one
    const Tensor& value = entry.second;
    CAPTURE(name);
    const ::onnx::TensorProto* t = initializer(m, name);
    REQUIRE(t != nullptr);
    CHECK(t->data_type() == ::onnx::TensorProto_DataType_FLOAT);
    CHECK(std::vector<int64_t>(t->dims().begin(), t->dims().end()) ==
          std::vector<int64_t>(value.shape().begin(), value.shape().end()));
    const std::vector<float> v = value.to_vector<float>();
    REQUIRE(t->raw_data().size() == v.size() * sizeof(float));
    CHECK(std::memcmp(t->raw_data().data(), v.data(), t->raw_data().size()) == 0);
  }
}

TEST_CASE("dynamic axes become named dimensions, the others keep the example's size") {
  auto model = mlp();
  const ::onnx::ModelProto m = ox::to_onnx(*model, randn({2, 4}), {.dynamic_axes = {{"input", {{0, "batch"}}},
                                                                                       {"output", {{0, "batch"}}}}});
  const ::onnx::TensorShapeProto& in = m.graph().input(0).type().tensor_type().shape();
  CHECK(in.dim(0).dim_param() == "batch");
  CHECK(in.dim(1).dim_value() == 4);
  CHECK(m.graph().output(0).type().tensor_type().shape().dim(0).dim_param() == "batch");
  CHECK(m.graph().output(0).type().tensor_type().shape().dim(1).dim_value() == 3);
}

TEST_CASE("a layer in train mode is exported in eval mode and left in train mode") {
  auto model = mlp();
  model->train();
  const ::onnx::ModelProto m = ox::to_onnx(*model, randn({2, 4}));
  CHECK_FALSE(has_op(m, "Dropout"));
  CHECK(model->is_training());
}

TEST_CASE("an Encoder with a padding mask maps to Where, Softmax and LayerNormalization") {
  nn::Encoder encoder({.layer = {.d_model = 8, .num_heads = 2, .dim_feedforward = 16,
                                 .activation = nn::Activation::gelu, .norm_first = true},
                       .num_layers = 2, .final_norm = true});
  const Tensor mask = tensor({0, 0, 1, 0, 0, 0}, {2, 3}, boolean);
  ox::ModelFunctions fns{
      .forward = [&](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{encoder.forward(Variable(in[0]), {.key_padding_mask = in[1]}).value()};
      },
      .graph = [&](ox::GraphBuilder& g, const std::vector<std::string>& in) {
        return std::vector<std::string>{ox::emit_encoder(g, encoder, "", in[0], {.key_padding_mask = in[1]})};
      }};
  const ::onnx::ModelProto m = ox::to_onnx(encoder, {randn({2, 3, 8}), mask},
                                             {.input_names = {"x", "pad_mask"}, .output_names = {"y"}}, fns);
  const std::vector<std::string> ops = op_types(m);
  CHECK(std::count(ops.begin(), ops.end(), "Where") == 2);  // one per layer
  CHECK(std::count(ops.begin(), ops.end(), "Softmax") == 2);
  CHECK(std::count(ops.begin(), ops.end(), "LayerNormalization") == 5);  // two per layer and the final norm
  for (const auto& entry : encoder.state_dict()) CHECK_MESSAGE(initializer(m, entry.first) != nullptr, entry.first);
}

TEST_CASE("a decoder-only Decoder maps to a causal mask built from the sequence length") {
  nn::Decoder decoder({.layer = {.d_model = 8, .num_heads = 2, .dim_feedforward = 16, .norm_first = true,
                                 .cross_attention = false},
                       .num_layers = 1});
  ox::ModelFunctions fns{
      .forward = [&](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{decoder.forward(Variable(in[0]), {}, {.tgt_is_causal = true}).value()};
      },
      .graph = [&](ox::GraphBuilder& g, const std::vector<std::string>& in) {
        return std::vector<std::string>{ox::emit_decoder(g, decoder, "", in[0], {.is_causal = true})};
      }};
  const ::onnx::ModelProto m = ox::to_onnx(decoder, {randn({2, 3, 8})}, {.dynamic_axes = {{"input", {{1, "T"}}}}}, fns);
  for (const char* op : {"Shape", "Range", "Greater", "Where", "Softmax"}) CHECK_MESSAGE(has_op(m, op), op);
  nn::Decoder cross({.layer = {.d_model = 8, .num_heads = 2, .dim_feedforward = 16}, .num_layers = 1});
  ox::GraphBuilder g("cross");
  CHECK_THROWS_WITH_AS(ox::emit_decoder(g, cross, "decoder.", g.input("x", f32, {2, 3, 8}), {}),
                       doctest::Contains("DecoderLayer 'decoder.layers.0.' with cross-attention"), ValueError);
}

TEST_CASE("GraphBuilder adds a named weight once and refuses the name for another shape") {
  ox::GraphBuilder g("weights");
  CHECK(g.weight("w", ones({2, 3})) == "w");
  CHECK(g.weight("w", ones({2, 3})) == "w");
  CHECK(g.graph().initializer_size() == 1);
  CHECK_THROWS_WITH_AS(g.weight("w", ones({3, 2})),
                       "onnx export: initializer 'w' added twice with different shapes (now (3, 2))", ValueError);
}

TEST_CASE("a layer without a mapping is named in the error") {
  nn::Sequential s;
  s.add(std::make_unique<nn::Dense>(nn::DenseOptions{.in_features = 4, .out_features = 4}));
  s.add(std::make_unique<nn::SiLU>());
  CHECK_THROWS_WITH_AS(ox::to_onnx(s, randn({2, 4})), "onnx export: no ONNX mapping for layer SiLU at '1.'",
                       ValueError);
  nn::GELU tanh_gelu({.approximate = nn::GELUOptions::Approximate::tanh});
  CHECK_THROWS_WITH_AS(ox::to_onnx(tanh_gelu, randn({2, 4})), doctest::Contains("tanh approximation"), ValueError);
}

TEST_CASE("an example input the model refuses is named with its shape and the model's message") {
  nn::Dense dense({.in_features = 4, .out_features = 3});
  CHECK_THROWS_WITH_AS(ox::to_onnx(dense, randn({2, 5})),
                       doctest::Contains("onnx export: the model refuses the example inputs ((2, 5) f32): "),
                       ValueError);
}

TEST_CASE("bad export options are named") {
  nn::Dense dense({.in_features = 4, .out_features = 3});
  CHECK_THROWS_WITH_AS(ox::to_onnx(dense, randn({2, 4}), {.dynamic_axes = {{"input", {{2, "x"}}}}}),
                       "onnx export: dynamic axis 2 of 'input' is outside its shape (2, 4)", ValueError);
  CHECK_THROWS_WITH_AS(ox::to_onnx(dense, randn({2, 4}), {.dynamic_axes = {{"tokens", {{0, "batch"}}}}}),
                       "onnx export: dynamic_axes names 'tokens', which is no input or output", ValueError);
  CHECK_THROWS_WITH_AS(ox::to_onnx(dense, randn({2, 4}), {.input_names = {"a", "b"}}),
                       "onnx export: 1 example inputs for 2 input names", ValueError);
}

TEST_CASE("ONNX's checker refuses a graph whose node types do not fit") {
  nn::Dense dense({.in_features = 4, .out_features = 3});
  ox::ModelFunctions fns{
      .forward = [&](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{dense.forward(Variable(in[0])).value()};
      },
      .graph = [&](ox::GraphBuilder& g, const std::vector<std::string>& in) {  // Relu of an int64 input
        return std::vector<std::string>{g.op("Relu", {g.op("Cast", {in[0]}, {{"to", int64_t(7)}})})};
      }};
  CHECK_THROWS_WITH_AS(ox::to_onnx(dense, {randn({2, 4})}, {}, fns),
                       doctest::Contains("onnx export: ONNX's checker refuses the model"), ValueError);
}

TEST_CASE("write_cases refuses a case whose tensor count differs from the names'") {
  CHECK_THROWS_WITH_AS(ox::write_cases("unused.json", {"a"}, {"y"}, {{{randn({2})}, {}}}),
                       "onnx cases: case 0 has 1 inputs and 0 outputs for 1 and 1 names", ValueError);
}

TEST_CASE("an LSTM and a GRU map to one ONNX node per layer, gates in ONNX's order, directions stacked") {
  for (bool lstm : {true, false}) {
    CAPTURE(lstm);
    const nn::RNNOptions o{.input_size = 3, .hidden_size = 2, .num_layers = 2, .batch_first = true, .bidirectional = true};
    std::unique_ptr<nn::RNNBase> rnn;
    if (lstm) rnn = std::make_unique<nn::LSTM>(o);
    else rnn = std::make_unique<nn::GRU>(o);
    ox::GraphBuilder g("rnn");
    ox::emit_rnn(g, *rnn, "rnn.", g.input("x", f32, {2, 5, 3}), "");  // (B, T, in), every sequence T long
    const ::onnx::ModelProto m = g.model(17);
    const std::vector<std::string> ops = op_types(m);
    CHECK(std::count(ops.begin(), ops.end(), lstm ? "LSTM" : "GRU") == 2);
    const ::onnx::TensorProto* W = initializer(m, "rnn.onnx_1.W");
    REQUIRE(W != nullptr);
    const int64_t G = lstm ? 4 : 3, H = 2, in = 2 * H;  // layer 1 reads both directions of layer 0
    CHECK(std::vector<int64_t>(W->dims().begin(), W->dims().end()) == std::vector<int64_t>{2, G * H, in});
    CHECK(initializer(m, "rnn.onnx_0.B")->dims(1) == 2 * G * H);  // b_ih, then b_hh
    // ONNX's gate block 1 of direction 1 is PyTorch's o gate (block 3) for an LSTM, its r gate (block 0) for a GRU.
    std::vector<float> w(size_t(W->raw_data().size() / sizeof(float)));
    std::memcpy(w.data(), W->raw_data().data(), W->raw_data().size());
    std::vector<float> torch;
    for (const auto& entry : rnn->named_parameters())
      if (entry.first == "weight_ih_l1_reverse") torch = entry.second.value().to_vector<float>();  // (G·H, in)
    REQUIRE(torch.size() == size_t(G * H * in));
    const int64_t from = (lstm ? 3 : 0) * H * in, at = G * H * in + 1 * H * in;
    CHECK(std::vector<float>(w.begin() + at, w.begin() + at + H * in) ==
          std::vector<float>(torch.begin() + from, torch.begin() + from + H * in));
  }
  nn::LSTM projected({.input_size = 3, .hidden_size = 4, .proj_size = 2});
  ox::GraphBuilder g("rnn");
  CHECK_THROWS_WITH_AS(ox::emit_rnn(g, projected, "rnn.", g.input("x", f32, {2, 4, 3}), ""),
                       "onnx export: LSTM 'rnn.' has proj_size 2, which ONNX's LSTM has no form for", ValueError);
}
