// The layer emitters: each writes the ONNX ops that compute what the layer's forward computes in eval mode,
// op for op where ONNX has the op (Gather, LayerNormalization, Softmax), so that onnxruntime's results match
// ours to rounding.
#include "onnx/layers.h"

#include <cmath>
#include <limits>

#include "core/error.h"

namespace tg::onnx {
namespace {

// A direct parameter of `layer` (not a sub-layer's) by its name there.
Tensor parameter(const nn::Layer& layer, const std::string& name) {
  for (const auto& [n, p] : layer.named_parameters())
    if (n == name) return p.value();
  throw ValueError(fmt::format("onnx export: {} has no parameter '{}'", layer.type_name(), name));
}

// y = x · W with W (out, in) transposed in the graph: the initializer keeps the state_dict's layout.
std::string linear(GraphBuilder& g, const std::string& x, const std::string& w, const std::string& b) {
  std::string y = g.op("MatMul", {x, g.op("Transpose", {w}, {{"perm", std::vector<int64_t>{1, 0}}})});
  return b.empty() ? y : g.op("Add", {y, b});
}

// gelu(x) = x · Φ(x) = 0.5 · x · (1 + erf(x / √2)), the exact form (Hendrycks & Gimpel 2016).
std::string gelu(GraphBuilder& g, const std::string& x) {
  const DType dtype = g.float_dtype();
  std::string erf = g.op("Erf", {g.op("Div", {x, g.scalar(std::sqrt(2.0), dtype)})});
  std::string phi = g.op("Mul", {g.scalar(0.5, dtype), g.op("Add", {erf, g.scalar(1.0, dtype)})});
  return g.op("Mul", {x, phi});
}

// (B, S, E) -> (B, H, S, d_k) and back; Reshape's 0 copies B and S from the input, so both stay dynamic.
std::string split_heads(GraphBuilder& g, const std::string& x, int64_t H, int64_t d_k) {
  std::string r = g.op("Reshape", {x, g.ints({0, 0, H, d_k})});
  return g.op("Transpose", {r}, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}});
}
std::string merge_heads(GraphBuilder& g, const std::string& x, int64_t E) {
  std::string t = g.op("Transpose", {x}, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}});
  return g.op("Reshape", {t, g.ints({0, 0, E})});
}

// True where key j > query i: (S, S) bool from the sequence length of x (B, S, E).
std::string causal_mask(GraphBuilder& g, const std::string& x) {
  std::string p = positions(g, x, 1);
  return g.op("Greater", {unsqueeze(g, p, {0}), unsqueeze(g, p, {1})});
}

}  // namespace

nn::Layer& sublayer(nn::Layer& layer, const std::string& name) {
  for (const auto& [n, c] : layer.named_children())
    if (n == name) return *c;
  throw ValueError(fmt::format("onnx export: {} has no sub-layer '{}'", layer.type_name(), name));
}

std::string positions(GraphBuilder& g, const std::string& x, int64_t axis) {
  std::string n = g.op("Gather", {g.op("Shape", {x}), g.scalar(double(axis), i64)}, {{"axis", int64_t(0)}});
  return g.op("Range", {g.scalar(0, i64), n, g.scalar(1, i64)});
}

std::string reduce_sum(GraphBuilder& g, const std::string& x, const std::vector<int64_t>& axes, bool keepdims) {
  return g.op("ReduceSum", {x, g.ints(axes)}, {{"keepdims", int64_t(keepdims)}});
}

std::string unsqueeze(GraphBuilder& g, const std::string& x, const std::vector<int64_t>& axes) {
  return g.op("Unsqueeze", {x, g.ints(axes)});
}

std::string emit_dense(GraphBuilder& g, const nn::Dense& dense, const std::string& prefix, const std::string& x) {
  std::string w = g.weight(prefix + "weight", dense.weight().value());
  return linear(g, x, w, dense.bias() ? g.weight(prefix + "bias", dense.bias().value()) : "");
}

std::string emit_layer_norm(GraphBuilder& g, const nn::LayerNorm& norm, const std::string& prefix,
                            const std::string& x) {
  const nn::LayerNormOptions& o = norm.options();
  std::string scale = o.elementwise_affine ? g.weight(prefix + "weight", parameter(norm, "weight"))
                                           : g.constant(ones({o.normalized_shape}, o.dtype));
  std::vector<std::string> in = {x, scale};
  if (o.elementwise_affine) in.push_back(g.weight(prefix + "bias", parameter(norm, "bias")));
  return g.op("LayerNormalization", in, {{"axis", int64_t(-1)}, {"epsilon", o.eps}});
}

std::string emit_embedding(GraphBuilder& g, const nn::Embedding& embedding, const std::string& prefix,
                           const std::string& indices) {
  return g.op("Gather", {g.weight(prefix + "weight", embedding.weight().value()), indices}, {{"axis", int64_t(0)}});
}

std::string emit(GraphBuilder& g, nn::Layer& layer, const std::string& prefix, const std::string& x) {
  const std::string type = layer.type_name();
  if (auto* d = dynamic_cast<nn::Dense*>(&layer)) return emit_dense(g, *d, prefix, x);
  if (auto* n = dynamic_cast<nn::LayerNorm*>(&layer)) return emit_layer_norm(g, *n, prefix, x);
  if (auto* e = dynamic_cast<nn::Embedding*>(&layer)) return emit_embedding(g, *e, prefix, x);
  if (type == "Dropout") return x;
  if (type == "ReLU") return g.op("Relu", {x});
  if (type == "Tanh") return g.op("Tanh", {x});
  if (type == "Sigmoid") return g.op("Sigmoid", {x});
  if (auto* s = dynamic_cast<nn::Softmax*>(&layer)) return g.op("Softmax", {x}, {{"axis", s->dim()}});
  if (auto* a = dynamic_cast<nn::GELU*>(&layer)) {
    check<ValueError>(a->options().approximate == nn::GELUOptions::Approximate::none,
                      "onnx export: GELU '{}' with the tanh approximation has no mapping (only the erf form)", prefix);
    return gelu(g, x);
  }
  if (type == "Sequential") {
    std::string y = x;
    for (const auto& [name, c] : layer.named_children()) y = emit(g, *c, prefix + name + ".", y);
    return y;
  }
  throw ValueError(fmt::format("onnx export: no ONNX mapping for layer {} at '{}'", type, prefix));
}

std::string emit_attention(GraphBuilder& g, nn::MultiHeadAttention& attention, const std::string& prefix,
                           const std::string& x, const AttentionMasks& masks) {
  const nn::MultiHeadAttentionOptions& o = attention.options();
  check<ValueError>(o.batch_first && o.kdim == o.d_model && o.vdim == o.d_model,
                    "onnx export: MultiHeadAttention '{}' needs batch_first and kdim = vdim = d_model", prefix);
  const int64_t E = o.d_model, H = o.num_heads, d_k = E / H;
  std::string b = o.bias ? g.weight(prefix + "in_proj_bias", parameter(attention, "in_proj_bias")) : "";
  std::string qkv = linear(g, x, g.weight(prefix + "in_proj_weight", parameter(attention, "in_proj_weight")), b);
  std::vector<std::string> parts = g.op("Split", {qkv, g.ints({E, E, E})}, 3, {{"axis", int64_t(-1)}});
  std::string q = split_heads(g, parts[0], H, d_k), k = split_heads(g, parts[1], H, d_k);
  std::string v = split_heads(g, parts[2], H, d_k);                                          // (B, H, S, d_k)
  std::string kt = g.op("Transpose", {k}, {{"perm", std::vector<int64_t>{0, 1, 3, 2}}});
  std::string scores = g.op("MatMul", {g.op("Div", {q, g.scalar(std::sqrt(double(d_k)), g.float_dtype())}), kt});
  std::string minus_inf = g.scalar(-std::numeric_limits<double>::infinity(), g.float_dtype());
  if (!masks.key_padding_mask.empty())  // (B, S) -> (B, 1, 1, S)
    scores = g.op("Where", {unsqueeze(g, masks.key_padding_mask, {1, 2}), minus_inf, scores});
  if (masks.is_causal) scores = g.op("Where", {causal_mask(g, x), minus_inf, scores});
  std::string weights = g.op("Softmax", {scores}, {{"axis", int64_t(-1)}});                   // (B, H, S, S)
  std::string heads = merge_heads(g, g.op("MatMul", {weights, v}), E);                        // (B, S, E)
  return emit_dense(g, sublayer_as<nn::Dense>(attention, "out_proj"), prefix + "out_proj.", heads);
}

namespace {
// The block EncoderLayer and the decoder-only DecoderLayer share (sub-layers self_attn, linear1, linear2, norm1,
// norm2): post-norm x = norm1(x + sa(x)); x = norm2(x + ff(x)), or pre-norm x = x + sa(norm1(x)); x = x + ff(norm2(x)).
std::string self_attention_block(GraphBuilder& g, nn::Layer& layer, const std::string& prefix, const std::string& x,
                                 const AttentionMasks& masks, bool norm_first, nn::Activation activation) {
  auto norm = [&](const char* name, const std::string& v) {
    return emit_layer_norm(g, sublayer_as<nn::LayerNorm>(layer, name), prefix + name + ".", v);
  };
  auto attend = [&](const std::string& v) {
    return emit_attention(g, sublayer_as<nn::MultiHeadAttention>(layer, "self_attn"), prefix + "self_attn.", v, masks);
  };
  auto feed_forward = [&](const std::string& v) {
    std::string h = emit_dense(g, sublayer_as<nn::Dense>(layer, "linear1"), prefix + "linear1.", v);
    h = activation == nn::Activation::gelu ? gelu(g, h) : g.op("Relu", {h});
    return emit_dense(g, sublayer_as<nn::Dense>(layer, "linear2"), prefix + "linear2.", h);
  };
  if (norm_first) {
    std::string h = g.op("Add", {x, attend(norm("norm1", x))});
    return g.op("Add", {h, feed_forward(norm("norm2", h))});
  }
  std::string h = norm("norm1", g.op("Add", {x, attend(x)}));
  return norm("norm2", g.op("Add", {h, feed_forward(h)}));
}
}  // namespace

std::string emit_encoder_layer(GraphBuilder& g, nn::EncoderLayer& layer, const std::string& prefix,
                               const std::string& x, const AttentionMasks& masks) {
  const nn::EncoderLayerOptions& o = layer.options();
  return self_attention_block(g, layer, prefix, x, masks, o.norm_first, o.activation);
}

std::string emit_decoder_layer(GraphBuilder& g, nn::DecoderLayer& layer, const std::string& prefix,
                               const std::string& x, const AttentionMasks& masks) {
  const nn::DecoderLayerOptions& o = layer.options();
  check<ValueError>(!o.cross_attention && o.batch_first, "onnx export: DecoderLayer '{}' with cross-attention or "
                    "without batch_first has no mapping (only the decoder-only block)", prefix);
  return self_attention_block(g, layer, prefix, x, masks, o.norm_first, o.activation);
}

namespace {
// Encoder and Decoder alike: layers "layers.<i>" in turn, then the final LayerNorm "norm" if there is one.
template <class Stack, class EmitLayer>
std::string emit_stack(GraphBuilder& g, Stack& stack, const std::string& prefix, const std::string& x,
                       const AttentionMasks& masks, EmitLayer emit_layer) {
  std::string h = x;
  for (int64_t i = 0; i < stack.num_layers(); ++i)
    h = emit_layer(g, stack.layer(i), fmt::format("{}layers.{}.", prefix, i), h, masks);
  if (!stack.options().final_norm) return h;
  return emit_layer_norm(g, sublayer_as<nn::LayerNorm>(stack, "norm"), prefix + "norm.", h);
}
}  // namespace

std::string emit_decoder(GraphBuilder& g, nn::Decoder& decoder, const std::string& prefix, const std::string& x,
                         const AttentionMasks& masks) {
  return emit_stack(g, decoder, prefix, x, masks, emit_decoder_layer);
}

std::string emit_encoder(GraphBuilder& g, nn::Encoder& encoder, const std::string& prefix, const std::string& x,
                         const AttentionMasks& masks) {
  return emit_stack(g, encoder, prefix, x, masks, emit_encoder_layer);
}

}  // namespace tg::onnx
