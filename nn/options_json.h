#pragma once
// The JSON of every options struct of the library's layers, for save_model's architecture (nn/registry.h):
// a struct is an object with one key per field, under the field's name. A user's options struct that holds
// one of these (a block built around an EncoderLayer) includes this header for its own JSON.
//   enums by their names ("gelu", "tanh");  std::optional null or its value;  DType "f32";  Shape [2, 3].
// A field added to a struct needs its name added here, or save_model drops it.
#include "nn/activation.h"
#include "nn/attention.h"
#include "nn/batch_norm.h"
#include "nn/dense.h"
#include "nn/embedding.h"
#include "nn/encoder.h"
#include "nn/group_norm.h"
#include "nn/layer_norm.h"
#include "nn/positional.h"
#include "nn/registry.h"
#include "nn/rms_norm.h"

namespace tg::nn {

NLOHMANN_JSON_SERIALIZE_ENUM(GELUOptions::Approximate, {{GELUOptions::Approximate::none, "none"},
                                                       {GELUOptions::Approximate::tanh, "tanh"}})
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(GELUOptions, approximate)

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(DenseOptions, in_features, out_features, bias, dtype)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(EmbeddingOptions, num_embeddings, embedding_dim, padding_idx, dtype)

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(LayerNormOptions, normalized_shape, eps, elementwise_affine, dtype)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(RMSNormOptions, normalized_shape, eps, elementwise_affine, dtype)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(GroupNormOptions, num_groups, num_channels, eps, affine, dtype)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(BatchNormOptions, num_features, eps, momentum, affine, track_running_stats, dtype)

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(PositionalEncodingOptions, d_model, max_len, dtype)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(LearnedPositionalEncodingOptions, d_model, max_len, std, dtype)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(MultiHeadAttentionOptions, d_model, num_heads, dropout, bias, kdim, vdim,
                                   batch_first, dtype)
NLOHMANN_JSON_SERIALIZE_ENUM(Activation, {{Activation::relu, "relu"}, {Activation::gelu, "gelu"}})
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(EncoderLayerOptions, d_model, num_heads, dim_feedforward, dropout, activation,
                                   layer_norm_eps, norm_first, dtype)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(EncoderOptions, layer, num_layers, final_norm)

}  // namespace tg::nn
