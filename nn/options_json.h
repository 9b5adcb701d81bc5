#pragma once
// The JSON of every options struct of the library's layers, for save_model's architecture (nn/registry.h):
// a struct is an object with one key per field, under the field's name. A user's options struct that holds
// one of these (a block built around an EncoderLayer) includes this header for its own JSON.
//   Size2 [h, w];  Padding2d [h, w] or "same" / "valid";  Padding1d a number or "same" / "valid";
//   enums by their names ("gelu", "tanh");  std::optional null or its value;  DType "f32";  Shape [2, 3].
// A field added to a struct needs its name added here, or save_model drops it.
#include "nn/activation.h"
#include "nn/attention.h"
#include "nn/batch_norm.h"
#include "nn/conv.h"
#include "nn/decoder.h"
#include "nn/dense.h"
#include "nn/embedding.h"
#include "nn/encoder.h"
#include "nn/group_norm.h"
#include "nn/layer_norm.h"
#include "nn/pool.h"
#include "nn/positional.h"
#include "nn/registry.h"
#include "nn/rms_norm.h"
#include "nn/rnn.h"
#include "nn/transformer.h"

namespace tg {

// Always a pair: `3`, which a Size2 accepts in C++, is bad options here (and [1, 2, 3] reads back as [1, 2]).
inline void to_json(nlohmann::json& j, const Size2& s) { j = {s.h, s.w}; }
inline void from_json(const nlohmann::json& j, Size2& s) { s = Size2(j.at(0).get<int64_t>(), j.at(1).get<int64_t>()); }

NLOHMANN_JSON_SERIALIZE_ENUM(PaddingMode,
                             {{PaddingMode::sizes, "sizes"}, {PaddingMode::same, "same"}, {PaddingMode::valid, "valid"}})

// A padding (Padding2d, Padding1d) is its sizes, or its mode's name ("sizes" as a name reads back as sizes
// 0: an error).
namespace detail {
template <class P>
nlohmann::json padding_to_json(const P& p) {
  return p.mode == PaddingMode::sizes ? nlohmann::json(p.size) : nlohmann::json(p.mode);
}
template <class P>
P padding_from_json(const nlohmann::json& j) {
  P p;
  if (j.is_string()) p.mode = j.get<PaddingMode>();
  else j.get_to(p.size);
  return p;
}
}  // namespace detail
inline void to_json(nlohmann::json& j, const Padding2d& p) { j = detail::padding_to_json(p); }
inline void from_json(const nlohmann::json& j, Padding2d& p) { p = detail::padding_from_json<Padding2d>(j); }
inline void to_json(nlohmann::json& j, const Padding1d& p) { j = detail::padding_to_json(p); }
inline void from_json(const nlohmann::json& j, Padding1d& p) { p = detail::padding_from_json<Padding1d>(j); }

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(MaxPool2dFuncOptions, kernel_size, stride, padding, dilation, ceil_mode)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(MaxPool1dFuncOptions, kernel_size, stride, padding, dilation, ceil_mode)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(AvgPool2dFuncOptions, kernel_size, stride, padding, ceil_mode, count_include_pad)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(AvgPool1dFuncOptions, kernel_size, stride, padding, ceil_mode, count_include_pad)

}  // namespace tg

namespace tg::nn {

NLOHMANN_JSON_SERIALIZE_ENUM(GELUOptions::Approximate, {{GELUOptions::Approximate::none, "none"},
                                                       {GELUOptions::Approximate::tanh, "tanh"}})
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(GELUOptions, approximate)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(LeakyReLUOptions, negative_slope)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ELUOptions, alpha)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(SoftplusOptions, beta, threshold)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(HardtanhOptions, min_val, max_val)

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(DenseOptions, in_features, out_features, bias, dtype)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(EmbeddingOptions, num_embeddings, embedding_dim, padding_idx, dtype)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Conv2dOptions, in_channels, out_channels, kernel_size, stride, padding, dilation,
                                   groups, bias, dtype)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Conv1dOptions, in_channels, out_channels, kernel_size, stride, padding, dilation,
                                   groups, bias, dtype)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ConvTranspose2dOptions, in_channels, out_channels, kernel_size, stride, padding,
                                   output_padding, groups, bias, dilation, dtype)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(FlattenOptions, start_dim, end_dim)

// normalized_shape is a list, as PyTorch's; a number (what files wrote while it was one int) reads as [n].
inline void to_json(nlohmann::json& j, const LayerNormOptions& o) {
  j = {{"normalized_shape", o.normalized_shape}, {"eps", o.eps}, {"elementwise_affine", o.elementwise_affine},
       {"dtype", o.dtype}};
}
inline void from_json(const nlohmann::json& j, LayerNormOptions& o) {
  const nlohmann::json& s = j.at("normalized_shape");
  o.normalized_shape = s.is_number() ? Shape{s.get<int64_t>()} : s.get<Shape>();
  j.at("eps").get_to(o.eps), j.at("elementwise_affine").get_to(o.elementwise_affine), j.at("dtype").get_to(o.dtype);
}
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(RMSNormOptions, normalized_shape, eps, elementwise_affine, dtype)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(GroupNormOptions, num_groups, num_channels, eps, affine, dtype)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(BatchNormOptions, num_features, eps, momentum, affine, track_running_stats, dtype)

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(RNNOptions, input_size, hidden_size, num_layers, bias, batch_first, dropout,
                                   bidirectional, proj_size, dtype)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(RNNCellOptions, input_size, hidden_size, bias, dtype)

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(PositionalEncodingOptions, d_model, max_len, dtype)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(LearnedPositionalEncodingOptions, d_model, max_len, std, dtype)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(MultiHeadAttentionOptions, d_model, num_heads, dropout, bias, kdim, vdim,
                                   batch_first, dtype)
NLOHMANN_JSON_SERIALIZE_ENUM(Activation, {{Activation::relu, "relu"}, {Activation::gelu, "gelu"}})
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(EncoderLayerOptions, d_model, num_heads, dim_feedforward, dropout, activation,
                                   layer_norm_eps, norm_first, dtype)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(EncoderOptions, layer, num_layers, final_norm)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(DecoderLayerOptions, d_model, num_heads, dim_feedforward, dropout, activation,
                                   layer_norm_eps, norm_first, cross_attention, batch_first, dtype)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(DecoderOptions, layer, num_layers, final_norm)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(TransformerOptions, d_model, num_heads, num_encoder_layers, num_decoder_layers,
                                   dim_feedforward, dropout, activation, layer_norm_eps, batch_first, norm_first, dtype)

}  // namespace tg::nn
