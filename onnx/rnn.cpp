// GRU and LSTM as ONNX's GRU and LSTM ops (opset 14+ semantics; layout 0, time-major), one node per layer
// over both directions. The initializers are the layer's weights in ONNX's form: each direction's gate blocks
// reordered and the directions stacked, so they carry their own names beside the state_dict's.
#include <string>
#include <vector>

#include "onnx/layers.h"

namespace tg::onnx {
namespace {

// The (G·H, ...) tensor's H-row gate blocks in the order `order` (indices into PyTorch's blocks).
Tensor gates(const Tensor& t, int64_t H, const std::vector<int64_t>& order) {
  std::vector<Tensor> blocks;
  for (int64_t k : order) blocks.push_back(t.slice(0, k * H, (k + 1) * H));
  return cat(blocks, 0);
}

Tensor parameter_of(const nn::Layer& layer, const std::string& name) {
  for (const auto& [n, p] : layer.named_parameters())
    if (n == name) return p.value();
  throw ValueError(fmt::format("onnx export: {} has no parameter '{}'", layer.type_name(), name));
}

}  // namespace

std::string emit_rnn(GraphBuilder& g, nn::RNNBase& rnn, const std::string& prefix, const std::string& x,
                     const std::string& seq_lens) {
  const nn::RNNOptions& o = rnn.options();
  const bool lstm = rnn.type_name() == "LSTM";
  check<ValueError>(o.proj_size == 0, "onnx export: {} '{}' has proj_size {}, which ONNX's LSTM has no form for",
                    rnn.type_name(), prefix, o.proj_size);
  const int64_t H = o.hidden_size, D = o.bidirectional ? 2 : 1;
  // ONNX's gate order from PyTorch's: LSTM i, o, f, c from i, f, g, o; GRU z, r, h from r, z, n.
  const std::vector<int64_t> order = lstm ? std::vector<int64_t>{0, 3, 1, 2} : std::vector<int64_t>{1, 0, 2};
  std::string h = o.batch_first ? g.op("Transpose", {x}, {{"perm", std::vector<int64_t>{1, 0, 2}}}) : x;  // (T, B, in)
  for (int64_t k = 0; k < o.num_layers; ++k) {
    std::vector<Tensor> W, R, B;
    for (int64_t d = 0; d < D; ++d) {
      const std::string suffix = "_l" + std::to_string(k) + (d == 1 ? "_reverse" : "");
      W.push_back(gates(parameter_of(rnn, "weight_ih" + suffix), H, order));
      R.push_back(gates(parameter_of(rnn, "weight_hh" + suffix), H, order));
      if (o.bias)
        B.push_back(cat({gates(parameter_of(rnn, "bias_ih" + suffix), H, order),
                         gates(parameter_of(rnn, "bias_hh" + suffix), H, order)}, 0));  // (2·G·H): Wb, then Rb
    }
    const std::string layer = prefix + "onnx_" + std::to_string(k) + ".";
    std::vector<std::string> in = {h, g.weight(layer + "W", stack(W, 0)), g.weight(layer + "R", stack(R, 0)),
                                   o.bias ? g.weight(layer + "B", stack(B, 0)) : "", seq_lens};
    std::vector<Attr> attrs = {{"hidden_size", H}, {"direction", std::string(D == 2 ? "bidirectional" : "forward")}};
    if (!lstm) attrs.push_back({"linear_before_reset", int64_t(1)});  // PyTorch's n = tanh(W x + b + r ⊙ (U h + b'))
    const std::string y = g.op(lstm ? "LSTM" : "GRU", in, attrs);        // (T, D, B, H)
    h = g.op("Reshape", {g.op("Transpose", {y}, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}}), g.ints({0, 0, -1})});
  }
  return o.batch_first ? g.op("Transpose", {h}, {{"perm", std::vector<int64_t>{1, 0, 2}}}) : h;  // (B, T, D·H)
}

}  // namespace tg::onnx
