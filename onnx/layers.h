#pragma once
// The ONNX form of our layers, in eval mode (dropout is the identity): each emitter adds the nodes of one
// layer's forward to a GraphBuilder, its parameters as initializers named `prefix` + their name in the layer
// (the layer's state_dict names under `prefix`, e.g. "encoder.layers.0.linear1.weight").
#include <string>

#include "core/error.h"
#include "nn/nn.h"
#include "onnx/graph_builder.h"

namespace tg::onnx {

/// The masks of a self-attention call, as graph values: key_padding_mask (B, S) bool (true = padding), or
/// empty; is_causal masks key j > query i.
struct AttentionMasks {
  std::string key_padding_mask;  ///< the (B, S) bool value's name, or empty for none
  bool is_causal = false;        ///< mask key j > query i
};

/// A unary layer: Dense, LayerNorm, Embedding, Dropout, ReLU, GELU (erf form), Tanh, Sigmoid, Softmax, and a
/// Sequential of them. ValueError naming the layer's type (and its path `prefix`) for any other layer.
std::string emit(GraphBuilder& g, nn::Layer& layer, const std::string& prefix, const std::string& x);

/// Dense: x (..., in) -> MatMul with weightᵀ, plus bias -> (..., out).
std::string emit_dense(GraphBuilder& g, const nn::Dense& dense, const std::string& prefix, const std::string& x);
/// LayerNorm: LayerNormalization (opset 17) over the last axis.
std::string emit_layer_norm(GraphBuilder& g, const nn::LayerNorm& norm, const std::string& prefix,
                            const std::string& x);
/// Embedding: Gather of weight rows; indices (...) i64 -> (..., embedding_dim).
std::string emit_embedding(GraphBuilder& g, const nn::Embedding& embedding, const std::string& prefix,
                           const std::string& indices);
/// Self-attention x (B, S, E) -> (B, S, E), batch first, one in_proj_weight: the composition of
/// nn/attention.cpp (Q·Kᵀ/√d_k, masked to -inf with Where, Softmax, ·V, out_proj). ValueError for the
/// layouts it does not cover (batch_first false, kdim or vdim != d_model). A query whose keys are all masked
/// gives NaN in ONNX (zeros in ours); padding masks never mask every key of a real sentence.
std::string emit_attention(GraphBuilder& g, nn::MultiHeadAttention& attention, const std::string& prefix,
                           const std::string& x, const AttentionMasks& masks);
/// EncoderLayer (post- or pre-norm, relu or gelu) and Encoder (its layers, then its final norm if any).
std::string emit_encoder_layer(GraphBuilder& g, nn::EncoderLayer& layer, const std::string& prefix,
                               const std::string& x, const AttentionMasks& masks);
std::string emit_encoder(GraphBuilder& g, nn::Encoder& encoder, const std::string& prefix, const std::string& x,
                         const AttentionMasks& masks);
/// The decoder-only DecoderLayer (no cross-attention: the GPT block) and a Decoder of them (masks: usually
/// is_causal); ValueError for a layer with cross-attention or without batch_first.
std::string emit_decoder_layer(GraphBuilder& g, nn::DecoderLayer& layer, const std::string& prefix,
                               const std::string& x, const AttentionMasks& masks);
std::string emit_decoder(GraphBuilder& g, nn::Decoder& decoder, const std::string& prefix, const std::string& x,
                         const AttentionMasks& masks);

/// GRU and LSTM (onnx/rnn.cpp) as ONNX's GRU and LSTM ops, one node per layer over both directions (GRU
/// with linear_before_reset = 1, PyTorch's form): x (B, T, in) with batch_first, else (T, B, in); seq_lens
/// (B) i32, each sequence's length (its steps after are padding), or empty: every one T long -> the
/// output (B, T, D·H) with batch_first, else (T, B, D·H), zeros at padded steps, as RNNBase's with
/// lengths. The weights become initializers prefix + "onnx_{k}.W", "R", "B": each direction's gate blocks in
/// ONNX's order (LSTM i, o, f, c from PyTorch's i, f, g, o; GRU z, r, h from r, z, n), directions stacked,
/// B = [b_ih, b_hh]. ValueError for an LSTM with proj_size, which ONNX's LSTM has no form for.
std::string emit_rnn(GraphBuilder& g, nn::RNNBase& rnn, const std::string& prefix, const std::string& x,
                     const std::string& seq_lens);

/// The direct sub-layer `name` of `layer` as an L; ValueError naming both when it is missing or of another type.
nn::Layer& sublayer(nn::Layer& layer, const std::string& name);
template <class L>
L& sublayer_as(nn::Layer& layer, const std::string& name) {
  L* c = dynamic_cast<L*>(&sublayer(layer, name));
  check<ValueError>(c != nullptr, "onnx export: sub-layer '{}' of {} has another type", name, layer.type_name());
  return *c;
}

/// Positions 0 .. n-1 (i64), n = the size of `x` along `axis`, read from the graph (a dynamic axis stays one).
std::string positions(GraphBuilder& g, const std::string& x, int64_t axis);
/// Sum over `axes` (ReduceSum, axes as an input since opset 13).
std::string reduce_sum(GraphBuilder& g, const std::string& x, const std::vector<int64_t>& axes, bool keepdims);
/// Unsqueeze at `axes` (axes as an input since opset 13).
std::string unsqueeze(GraphBuilder& g, const std::string& x, const std::vector<int64_t>& axes);

}  // namespace tg::onnx
