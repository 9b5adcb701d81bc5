#pragma once
#include <string>

#include "nn/decoder.h"
#include "nn/encoder.h"

namespace tg::nn {

/// PyTorch's nn.Transformer arguments (nhead is num_heads).
struct TransformerOptions {
  int64_t d_model = 512;                     ///< E
  int64_t num_heads = 8;                     ///< H; E must be a multiple of it
  int64_t num_encoder_layers = 6;            ///< layers of the encoder
  int64_t num_decoder_layers = 6;            ///< layers of the decoder
  int64_t dim_feedforward = 2048;            ///< the feed-forward blocks' hidden width
  double dropout = 0.1;                      ///< the probability of every dropout
  Activation activation = Activation::relu;  ///< of the feed-forward blocks
  double layer_norm_eps = 1e-5;              ///< ε of every LayerNorm
  bool batch_first = true;                   ///< (B, S, E) when true, (S, B, E) when false (PyTorch's default)
  bool norm_first = false;                   ///< pre-norm (Xiong et al. 2020) instead of the original post-norm
  DType dtype = f32;                         ///< of every parameter
};

/// The masks of an encoder-decoder call, with PyTorch's names (see EncoderCall and DecoderCall).
struct TransformerCall {
  Tensor src_mask;                 ///< (S, S) or per head (B·H, S, S): the encoder's attn_mask
  Tensor tgt_mask;                 ///< (T, T) or per head (B·H, T, T): the decoder's self-attention mask
  Tensor memory_mask;              ///< (T, S) or per head (B·H, T, S): the cross-attention mask
  Tensor src_key_padding_mask;     ///< (B, S)
  Tensor tgt_key_padding_mask;     ///< (B, T)
  Tensor memory_key_padding_mask;  ///< (B, S), usually src_key_padding_mask
  bool src_is_causal = false;      ///< the encoder's self-attention is causal (on top of src_mask)
  bool tgt_is_causal = false;      ///< the decoder's self-attention is causal (on top of tgt_mask)
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
  const TransformerOptions& options() const { return options_; }  ///< as constructed
  Encoder& encoder() { return encoder_; }  ///< the encoder, for reading or setting its parameters
  Decoder& decoder() { return decoder_; }  ///< the decoder, likewise

 private:
  using Layer::forward;  // the unary one throws: a Transformer takes src and tgt
  TransformerOptions options_;
  Encoder encoder_;
  Decoder decoder_;
};

}  // namespace tg::nn
