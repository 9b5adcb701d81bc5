#pragma once
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "nn/encoder.h"

namespace tg::nn {

/// DecoderLayer's options, PyTorch's TransformerDecoderLayer arguments (nhead is num_heads).
struct DecoderLayerOptions {
  int64_t d_model = 0;  ///< E, the width of the target, the memory and the output
  int64_t num_heads = 0;  ///< H; E must be a multiple of it
  int64_t dim_feedforward = 2048;  ///< the feed-forward block's hidden width
  double dropout = 0.1;  ///< after each attention block and the feed-forward, inside it, on attention weights
  Activation activation = Activation::relu;  ///< of the feed-forward block
  double layer_norm_eps = 1e-5;  ///< ε of the LayerNorms
  bool norm_first = false;  ///< pre-norm (GPT-2, Xiong et al. 2020) instead of the original post-norm
  /// false = a decoder-only layer (the GPT block): self-attention and feed-forward, no memory.
  bool cross_attention = true;
  bool batch_first = true;  ///< (B, T, E) when true (as our encoder), (T, B, E) when false (PyTorch's default)
  DType dtype = f32;        ///< of every parameter
};

/// The optional arguments of a decoder call, with PyTorch's names (TransformerDecoder.forward). T is the
/// target length, S the memory's; with a KV cache holding T_c positions, the self-attention masks cover the
/// T_c + T keys.
struct DecoderCall {
  Tensor tgt_mask;                 ///< (T, T_c + T) or (B·H, T, T_c + T): bool, true = not allowed; or float, added
  Tensor tgt_key_padding_mask;     ///< (B, T_c + T): bool, true = padding; or float, added
  bool tgt_is_causal = false;      ///< masks key j > query i + T_c (the future), on top of any tgt_mask
  Tensor memory_mask;              ///< (T, S) or (B·H, T, S), as tgt_mask
  Tensor memory_key_padding_mask;  ///< (B, S)
  /// Empty, or one self-attention KV cache per layer (one for a DecoderLayer, num_layers for a Decoder),
  /// extended by this call's positions: feed the tokens one call at a time with tgt_is_causal to decode
  /// incrementally. The memory's keys and values are projected again at each call.
  std::span<KVCache> cache = {};
};

/// One Transformer decoder layer (Vaswani et al. 2017, §3.1), as PyTorch's TransformerDecoderLayer and with
/// its parameter names (self_attn, multihead_attn, linear1, linear2, norm1, norm2, norm3):
///   post-norm: x = norm1(x + sa(x)); x = norm2(x + ca(x, mem)); x = norm3(x + ff(x))
///   pre-norm:  x = x + sa(norm1(x)); x = x + ca(norm2(x), mem); x = x + ff(norm3(x))
/// (each block's output through dropout before the sum). Without cross_attention the layer is the GPT block
/// (Radford et al. 2019: pre-norm, gelu): no multihead_attn, and the feed-forward's norm is norm2. PyTorch
/// builds that block as a TransformerEncoderLayer with a causal mask; ours has exactly its parameter names,
/// so such a state_dict loads, and adds the KV cache. tgt (B, T, E), memory (B, S, E) -> (B, T, E).
class DecoderLayer : public Layer {
 public:
  /// ValueError for a non-positive size, dropout outside [0, 1) or layer_norm_eps <= 0.
  explicit DecoderLayer(const DecoderLayerOptions& options);
  /// memory undefined without cross-attention. ValueError when memory (or a memory mask) is given to a
  /// layer without cross-attention or missing for one with it, or when the cache is not one KVCache; the
  /// attention blocks' ShapeError/DTypeError for inputs and masks that do not fit.
  Variable forward(const Variable& tgt, const Variable& memory, const DecoderCall& call = {});
  /// forward(tgt, {}, {}): a decoder-only layer without masks (causality is not implied, as in PyTorch).
  Variable forward(const Variable& tgt) override;
  std::string type_name() const override { return "DecoderLayer"; }
  const DecoderLayerOptions& options() const { return options_; }  ///< as constructed
  /// The sub-layers by PyTorch's names, for reading or setting their parameters; multihead_attn and norm3
  /// throw ValueError on a layer without cross-attention.
  MultiHeadAttention& self_attn() { return self_attn_; }
  MultiHeadAttention& multihead_attn();  ///< the cross-attention over the memory
  Dense& linear1() { return linear1_; }  ///< E -> dim_feedforward
  Dense& linear2() { return linear2_; }  ///< dim_feedforward -> E
  LayerNorm& norm1() { return norm1_; }  ///< around the self-attention block
  /// Around the cross-attention block, or the feed-forward block without cross-attention.
  LayerNorm& norm2() { return norm2_; }
  LayerNorm& norm3();  ///< around the feed-forward block

 private:
  friend class Decoder;
  // forward without hooks.
  Variable apply(const Variable& tgt, const Variable& memory, const DecoderCall& call);
  // forward on batch-first tgt and memory, with this layer's cache (or null), unchecked, without hooks.
  Variable run(const Variable& tgt, const Variable& memory, const DecoderCall& call, KVCache* cache);
  void check_call(const Variable& memory, const DecoderCall& call) const;
  // The feed-forward block's norm and dropout: the third ones with cross-attention, else the second.
  LayerNorm& ff_norm() { return norm3_ ? *norm3_ : norm2_; }
  Dropout& ff_dropout() { return dropout3_ ? *dropout3_ : dropout2_; }

  DecoderLayerOptions options_;
  MultiHeadAttention self_attn_;
  std::unique_ptr<MultiHeadAttention> cross_attn_;  // "multihead_attn"; null without cross-attention
  Dense linear1_, linear2_;
  LayerNorm norm1_, norm2_;
  std::unique_ptr<LayerNorm> norm3_;  // null without cross-attention
  Dropout dropout_, dropout1_, dropout2_;
  std::unique_ptr<Dropout> dropout3_;  // null without cross-attention
};

/// Decoder's options: num_layers layers of the same options.
struct DecoderOptions {
  DecoderLayerOptions layer;  ///< the options of every layer
  int64_t num_layers = 0;     ///< how many layers (> 0)
  bool final_norm = false;    ///< a LayerNorm "norm" after the last layer (needed with norm_first; GPT-2's ln_f)
};

/// A stack of num_layers DecoderLayers ("layers.0", "layers.1", ...) and an optional final LayerNorm
/// ("norm"), as PyTorch's TransformerDecoder: tgt (B, T, E), memory (B, S, E) -> (B, T, E). With
/// cross_attention = false it is the body of a GPT (memory undefined).
class Decoder : public Layer {
 public:
  /// ValueError when num_layers <= 0, and as DecoderLayer.
  explicit Decoder(const DecoderOptions& options);
  /// As DecoderLayer::forward; call.cache is empty or holds num_layers caches (ValueError otherwise).
  Variable forward(const Variable& tgt, const Variable& memory, const DecoderCall& call = {});
  /// forward(tgt, {}, {}).
  Variable forward(const Variable& tgt) override;
  std::string type_name() const override { return "Decoder"; }
  const DecoderOptions& options() const { return options_; }      ///< as constructed
  int64_t num_layers() const { return int64_t(layers_.size()); }  ///< how many layers
  /// Layer i, for reading or setting its parameters (std::out_of_range past the end).
  DecoderLayer& layer(int64_t i) { return *layers_.at(size_t(i)); }

 private:
  Variable apply(const Variable& tgt, const Variable& memory, const DecoderCall& call);  // forward without hooks

  LayerList layer_list_;  // registered as "layers"
  std::vector<std::unique_ptr<DecoderLayer>> layers_;
  std::unique_ptr<LayerNorm> norm_;  // null without final_norm
  DecoderOptions options_;
};

}  // namespace tg::nn
