// The encoder-decoder Transformer: PyTorch's nn.Transformer as an Encoder and a Decoder, each closed by a
// LayerNorm (PyTorch builds both norms whether or not norm_first). The encoder is batch-first, so the layout
// is turned once here and the decoder is built batch-first.
#include "nn/transformer.h"

namespace tg::nn {
namespace {

EncoderOptions encoder_options(const TransformerOptions& o) {
  return {.layer = {.d_model = o.d_model, .num_heads = o.num_heads, .dim_feedforward = o.dim_feedforward,
                    .dropout = o.dropout, .activation = o.activation, .layer_norm_eps = o.layer_norm_eps,
                    .norm_first = o.norm_first, .dtype = o.dtype},
          .num_layers = o.num_encoder_layers, .final_norm = true};
}

DecoderOptions decoder_options(const TransformerOptions& o) {
  return {.layer = {.d_model = o.d_model, .num_heads = o.num_heads, .dim_feedforward = o.dim_feedforward,
                    .dropout = o.dropout, .activation = o.activation, .layer_norm_eps = o.layer_norm_eps,
                    .norm_first = o.norm_first, .cross_attention = true, .batch_first = true, .dtype = o.dtype},
          .num_layers = o.num_decoder_layers, .final_norm = true};
}

}  // namespace

Transformer::Transformer(const TransformerOptions& options)
    : options_(options), encoder_(encoder_options(options)), decoder_(decoder_options(options)) {
  register_layer("encoder", encoder_);
  register_layer("decoder", decoder_);
}

Variable Transformer::forward(const Variable& src, const Variable& tgt, const TransformerCall& call) {
  const bool batch_first = options_.batch_first;
  const Variable s = batch_first ? src : src.transpose(0, 1), t = batch_first ? tgt : tgt.transpose(0, 1);
  const Variable memory = encoder_.forward(s, {.key_padding_mask = call.src_key_padding_mask,
                                                .attn_mask = call.src_mask, .is_causal = call.src_is_causal});
  const DecoderCall decoding{.tgt_mask = call.tgt_mask, .tgt_key_padding_mask = call.tgt_key_padding_mask,
                             .tgt_is_causal = call.tgt_is_causal, .memory_mask = call.memory_mask,
                             .memory_key_padding_mask = call.memory_key_padding_mask};
  Variable y = decoder_.forward(t, memory, decoding);
  if (!batch_first) y = y.transpose(0, 1);
  run_forward_hooks(src, y);
  return y;
}

}  // namespace tg::nn
