// The Transformer decoder: one layer (causal self-attention, optional cross-attention over the encoder's
// memory, feed-forward; each with a residual and a LayerNorm, post- or pre-norm) and a stack of them. Both
// follow PyTorch's TransformerDecoderLayer and TransformerDecoder on the standard path, so a PyTorch
// state_dict loads by name; the self-attention KV cache threads through the stack for incremental decoding.
#include "nn/decoder.h"

namespace tg::nn {
namespace {

DecoderLayerOptions validated(const DecoderLayerOptions& o) {
  check_layer_options("DecoderLayer", o.dim_feedforward, o.dropout, o.layer_norm_eps);
  return o;
}

MultiHeadAttentionOptions attention_options(const DecoderLayerOptions& o) {
  return {.d_model = o.d_model, .num_heads = o.num_heads, .dropout = o.dropout, .dtype = o.dtype};
}

LayerNormOptions norm_options(const DecoderLayerOptions& o) {
  return {.normalized_shape = {o.d_model}, .eps = o.layer_norm_eps, .dtype = o.dtype};
}

// (T, B, E) <-> (B, T, E) when the layout is sequence-first; undefined stays undefined.
Variable batch_major(const Variable& x, bool batch_first) { return batch_first || !x ? x : x.transpose(0, 1); }

}  // namespace

DecoderLayer::DecoderLayer(const DecoderLayerOptions& options)
    : options_(validated(options)),
      self_attn_(attention_options(options_)),
      linear1_({.in_features = options_.d_model, .out_features = options_.dim_feedforward, .dtype = options_.dtype}),
      linear2_({.in_features = options_.dim_feedforward, .out_features = options_.d_model, .dtype = options_.dtype}),
      norm1_(norm_options(options_)),
      norm2_(norm_options(options_)),
      dropout_(options_.dropout),
      dropout1_(options_.dropout),
      dropout2_(options_.dropout) {
  if (options_.cross_attention) {
    cross_attn_ = std::make_unique<MultiHeadAttention>(attention_options(options_));
    norm3_ = std::make_unique<LayerNorm>(norm_options(options_));
    dropout3_ = std::make_unique<Dropout>(options_.dropout);
  }
  register_layer("self_attn", self_attn_);  // PyTorch's order
  if (cross_attn_) register_layer("multihead_attn", *cross_attn_);
  register_layer("linear1", linear1_);
  register_layer("dropout", dropout_);
  register_layer("linear2", linear2_);
  register_layer("norm1", norm1_);
  register_layer("norm2", norm2_);
  if (norm3_) register_layer("norm3", *norm3_);
  register_layer("dropout1", dropout1_);
  register_layer("dropout2", dropout2_);
  if (dropout3_) register_layer("dropout3", *dropout3_);
}

void DecoderLayer::check_call(const Variable& memory, const DecoderCall& call) const {
  if (options_.cross_attention) {
    check<ValueError>(memory.defined(), "DecoderLayer: cross-attention needs the encoder's memory, got none");
    return;
  }
  check<ValueError>(!memory && !call.memory_mask.defined() && !call.memory_key_padding_mask.defined(),
                    "DecoderLayer: a layer without cross-attention (cross_attention = false) takes no memory or "
                    "memory masks");
}

// sa(x) = self_attn(x, x, x) (causal and cached as asked), ca(x) = multihead_attn(x, memory, memory).
Variable DecoderLayer::run(const Variable& tgt, const Variable& memory, const DecoderCall& call, KVCache* cache) {
  const MhaCall self{.key_padding_mask = call.tgt_key_padding_mask, .attn_mask = call.tgt_mask,
                     .is_causal = call.tgt_is_causal, .need_weights = false, .cache = cache};
  const MhaCall cross{.key_padding_mask = call.memory_key_padding_mask, .attn_mask = call.memory_mask,
                      .need_weights = false};
  auto sa = [&](const Variable& x) { return dropout1_(self_attn_.forward(x, x, x, self).output); };
  auto ca = [&](const Variable& x) { return dropout2_(cross_attn_->forward(x, memory, memory, cross).output); };
  auto ff = [&](const Variable& x) {
    return ff_dropout()(feed_forward(linear1_, dropout_, linear2_, options_.activation, x));
  };
  Variable x = tgt;  // (B, T, E)
  if (options_.norm_first) {
    x = x + sa(norm1_(x));
    if (cross_attn_) x = x + ca(norm2_(x));
    x = x + ff(ff_norm()(x));
  } else {
    x = norm1_(x + sa(x));
    if (cross_attn_) x = norm2_(x + ca(x));
    x = ff_norm()(x + ff(x));
  }
  return x;
}

Variable DecoderLayer::apply(const Variable& tgt, const Variable& memory, const DecoderCall& call) {
  check_call(memory, call);
  check<ValueError>(call.cache.size() <= 1, "DecoderLayer: the cache must be one KVCache, got {}", call.cache.size());
  const bool bf = options_.batch_first;
  KVCache* cache = call.cache.empty() ? nullptr : &call.cache[0];
  return batch_major(run(batch_major(tgt, bf), batch_major(memory, bf), call, cache), bf);
}

// Hooks run here, not in apply(): operator()(tgt) calls the unary override and then runs them itself.
Variable DecoderLayer::forward(const Variable& tgt, const Variable& memory, const DecoderCall& call) {
  Variable y = apply(tgt, memory, call);
  run_forward_hooks(tgt, y);
  return y;
}
Variable DecoderLayer::forward(const Variable& tgt) { return apply(tgt, {}, {}); }

MultiHeadAttention& DecoderLayer::multihead_attn() {
  check<ValueError>(bool(cross_attn_), "DecoderLayer: multihead_attn: the layer has no cross-attention");
  return *cross_attn_;
}

LayerNorm& DecoderLayer::norm3() {
  check<ValueError>(bool(norm3_), "DecoderLayer: norm3: the layer has no cross-attention");
  return *norm3_;
}

Decoder::Decoder(const DecoderOptions& options) : options_(options) {
  check<ValueError>(options.num_layers > 0, "Decoder: num_layers must be positive, got {}", options.num_layers);
  for (int64_t i = 0; i < options.num_layers; ++i) {
    layers_.push_back(std::make_unique<DecoderLayer>(options.layer));
    layer_list_.append(*layers_.back());
  }
  register_layer("layers", layer_list_);
  if (options.final_norm) {
    norm_ = std::make_unique<LayerNorm>(norm_options(options.layer));
    register_layer("norm", *norm_);
  }
}

// The layout is turned batch-first once for the whole stack; each layer gets its own cache.
Variable Decoder::apply(const Variable& tgt, const Variable& memory, const DecoderCall& call) {
  check<ValueError>(call.cache.empty() || call.cache.size() == layers_.size(),
                    "Decoder: the cache must hold one KVCache per layer ({}), got {}", layers_.size(),
                    call.cache.size());
  const Variable mem = batch_major(memory, options_.layer.batch_first);
  Variable x = batch_major(tgt, options_.layer.batch_first);  // (B, T, E)
  for (size_t i = 0; i < layers_.size(); ++i) {
    layers_[i]->check_call(memory, call);
    x = layers_[i]->run(x, mem, call, call.cache.empty() ? nullptr : &call.cache[i]);
  }
  return batch_major(norm_ ? (*norm_)(x) : x, options_.layer.batch_first);
}

Variable Decoder::forward(const Variable& tgt, const Variable& memory, const DecoderCall& call) {
  Variable y = apply(tgt, memory, call);
  run_forward_hooks(tgt, y);
  return y;
}
Variable Decoder::forward(const Variable& tgt) { return apply(tgt, {}, {}); }

}  // namespace tg::nn
