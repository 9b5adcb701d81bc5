#pragma once
#include <string>

#include "nn/decoder.h"
#include "nn/encoder.h"

namespace tg::nn {

/// PyTorch's nn.Transformer arguments (nhead is num_heads).
struct TransformerOptions {
  int64_t d_model = 512;
  int64_t num_heads = 8;
  int64_t num_encoder_layers = 6;
  int64_t num_decoder_layers = 6;
  int64_t dim_feedforward = 2048;
  double dropout = 0.1;
  Activation activation = Activation::relu;
  double layer_norm_eps = 1e-5;
  bool batch_first = true;  ///< (B, S, E) when true, (S, B, E) when false (PyTorch's default)
  bool norm_first = false;
  DType dtype = f32;
};

/// The masks of an encoder-decoder call, with PyTorch's names (see EncoderCall and DecoderCall).
struct TransformerCall {
  Tensor src_mask, tgt_mask, memory_mask;  ///< (S, S), (T, T), (T, S), or per head (B·H, ., .)
  Tensor src_key_padding_mask;              ///< (B, S)
  Tensor tgt_key_padding_mask;              ///< (B, T)
  Tensor memory_key_padding_mask;           ///< (B, S), usually src_key_padding_mask
  bool src_is_causal = false;
  bool tgt_is_causal = false;
};

/// The encoder-decoder Transformer (Vaswani et al. 2017), as PyTorch's nn.Transformer: an Encoder "encoder"
/// and a Decoder "decoder", each with its final LayerNorm ("encoder.norm", "decoder.norm"), so that its
/// state_dict ("encoder.layers.0.self_attn.in_proj_weight", ...) loads. src (B, S, E), tgt (B, T, E) ->
/// (B, T, E); embeddings, positions and the output projection are the caller's, as in PyTorch.
class Transformer : public Layer {
 public:
  /// ValueError for non-positive sizes, as EncoderLayer and DecoderLayer.
  explicit Transformer(const TransformerOptions& options);
  /// decoder(tgt, encoder(src)). The encoder's and decoder's errors for inputs and masks that do not fit.
  Variable forward(const Variable& src, const Variable& tgt, const TransformerCall& call = {});
  std::string type_name() const override { return "Transformer"; }
  const TransformerOptions& options() const { return options_; }
  Encoder& encoder() { return encoder_; }
  Decoder& decoder() { return decoder_; }

 private:
  using Layer::forward;  // the unary one throws: a Transformer takes src and tgt
  TransformerOptions options_;
  Encoder encoder_;
  Decoder decoder_;
};

}  // namespace tg::nn
