// The Transformer encoder: one layer (self-attention and feed-forward blocks, each with a residual and a
// LayerNorm, post- or pre-norm) and a stack of them. Both follow PyTorch's TransformerEncoderLayer and
// TransformerEncoder on the standard (non-fused) path, so a PyTorch state_dict loads by name.
#include "nn/encoder.h"

namespace tg::nn {
namespace {

EncoderLayerOptions validated(const EncoderLayerOptions& o) {
  check_layer_options("EncoderLayer", o.dim_feedforward, o.dropout, o.layer_norm_eps);
  return o;
}

}  // namespace

void check_layer_options(const char* op, int64_t dim_feedforward, double dropout, double layer_norm_eps) {
  check<ValueError>(dim_feedforward > 0, "{}: dim_feedforward must be positive, got {}", op, dim_feedforward);
  check<ValueError>(dropout >= 0 && dropout < 1, "{}: dropout must be in [0, 1), got {}", op, dropout);
  check<ValueError>(layer_norm_eps > 0, "{}: layer_norm_eps must be positive, got {}", op, layer_norm_eps);
}

EncoderLayer::EncoderLayer(const EncoderLayerOptions& options)
    : options_(validated(options)),
      self_attn_({.d_model = options_.d_model, .num_heads = options_.num_heads, .dropout = options_.dropout,
                  .dtype = options_.dtype}),
      linear1_({.in_features = options_.d_model, .out_features = options_.dim_feedforward, .dtype = options_.dtype}),
      linear2_({.in_features = options_.dim_feedforward, .out_features = options_.d_model, .dtype = options_.dtype}),
      norm1_({.normalized_shape = {options_.d_model}, .eps = options_.layer_norm_eps, .dtype = options_.dtype}),
      norm2_({.normalized_shape = {options_.d_model}, .eps = options_.layer_norm_eps, .dtype = options_.dtype}),
      dropout_(options_.dropout),
      dropout1_(options_.dropout),
      dropout2_(options_.dropout) {
  register_layer("self_attn", self_attn_);
  register_layer("linear1", linear1_);
  register_layer("dropout", dropout_);
  register_layer("linear2", linear2_);
  register_layer("norm1", norm1_);
  register_layer("norm2", norm2_);
  register_layer("dropout1", dropout1_);
  register_layer("dropout2", dropout2_);
}

// ff(x) = linear2(drop(act(linear1(x)))): (B, S, E) -> (B, S, dim_feedforward) -> (B, S, E).
Variable feed_forward(Dense& linear1, Dropout& dropout, Dense& linear2, Activation activation, const Variable& x) {
  const Variable h = linear1(x);
  return linear2(activation == Activation::gelu ? dropout(gelu(h)) : dropout.forward_relu(h));
}

AttentionOutput EncoderLayer::run(const Variable& src, const EncoderCall& call, bool need_weights) {
  const MhaCall mha{.key_padding_mask = call.key_padding_mask, .attn_mask = call.attn_mask,
                    .is_causal = call.is_causal, .need_weights = need_weights, .average_attn_weights = false};
  AttentionOutput sa;
  Variable x = src;  // (B, S, E)
  if (options_.norm_first) {
    const Variable h = norm1_(x);
    sa = self_attn_.forward(h, h, h, mha);
    x = x + dropout1_(sa.output);
    x = x + dropout2_(feed_forward(norm2_(x)));
  } else {
    sa = self_attn_.forward(x, x, x, mha);
    x = norm1_(x + dropout1_(sa.output));
    x = norm2_(x + dropout2_(feed_forward(x)));
  }
  return {.output = x, .weights = sa.weights};
}

// Hooks run here, not in run(): operator()(src) calls the unary override and then runs them itself.
Variable EncoderLayer::forward(const Variable& src, const EncoderCall& call) {
  Variable y = run(src, call, false).output;
  run_forward_hooks(src, y);
  return y;
}
Variable EncoderLayer::forward(const Variable& src) { return run(src, {}, false).output; }
AttentionOutput EncoderLayer::forward_with_attention(const Variable& src, const EncoderCall& call) {
  AttentionOutput out = run(src, call, true);
  run_forward_hooks(src, out.output);
  return out;
}

Encoder::Encoder(const EncoderOptions& options) : options_(options) {
  check<ValueError>(options.num_layers > 0, "Encoder: num_layers must be positive, got {}", options.num_layers);
  for (int64_t i = 0; i < options.num_layers; ++i) {
    layers_.push_back(std::make_unique<EncoderLayer>(options.layer));
    layer_list_.append(*layers_.back());
  }
  register_layer("layers", layer_list_);
  if (options.final_norm) {
    norm_ = std::make_unique<LayerNorm>(LayerNormOptions{.normalized_shape = {options.layer.d_model},
                                                         .eps = options.layer.layer_norm_eps,
                                                         .dtype = options.layer.dtype});
    register_layer("norm", *norm_);
  }
}

EncoderOutput Encoder::run(const Variable& src, const EncoderCall& call, bool need_weights) {
  EncoderOutput out{.output = src, .attention = {}};
  for (const auto& layer : layers_) {
    if (need_weights) {
      AttentionOutput step = layer->forward_with_attention(out.output, call);
      out.output = step.output;
      out.attention.push_back(step.weights);
    } else {
      out.output = layer->forward(out.output, call);
    }
  }
  if (norm_) out.output = (*norm_)(out.output);
  return out;
}

Variable Encoder::forward(const Variable& src, const EncoderCall& call) {
  Variable y = run(src, call, false).output;
  run_forward_hooks(src, y);
  return y;
}
Variable Encoder::forward(const Variable& src) { return run(src, {}, false).output; }
EncoderOutput Encoder::forward_with_attention(const Variable& src, const EncoderCall& call) {
  EncoderOutput out = run(src, call, true);
  run_forward_hooks(src, out.output);
  return out;
}

}  // namespace tg::nn
