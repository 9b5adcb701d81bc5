#pragma once
#include <memory>
#include <string>
#include <vector>

#include "nn/attention.h"
#include "nn/dense.h"
#include "nn/dropout.h"
#include "nn/layer_norm.h"

namespace tg::nn {

/// The feed-forward non-linearity; gelu is the exact erf form (torch's "gelu").
enum class Activation { relu, gelu };

/// The position-wise feed-forward block of a Transformer layer (Vaswani et al. 2017, §3.3),
/// linear2(dropout(act(linear1(x)))): (..., d_model) -> (..., d_model). Shared by EncoderLayer and DecoderLayer,
/// which own the three layers under PyTorch's names.
Variable feed_forward(Dense& linear1, Dropout& dropout, Dense& linear2, Activation activation, const Variable& x);
/// The checks of a Transformer layer's own options (attention checks its own), naming `op` and the value:
/// ValueError unless dim_feedforward > 0, 0 <= dropout < 1 and layer_norm_eps > 0.
void check_layer_options(const char* op, int64_t dim_feedforward, double dropout, double layer_norm_eps);

/// EncoderLayer's options, PyTorch's TransformerEncoderLayer arguments (nhead is num_heads).
struct EncoderLayerOptions {
  int64_t d_model = 0;  ///< E, the width of the input and output
  int64_t num_heads = 0;  ///< H; E must be a multiple of it
  int64_t dim_feedforward = 2048;  ///< the feed-forward block's hidden width
  double dropout = 0.1;  ///< after attention, inside and after the feed-forward block, on attention weights
  Activation activation = Activation::relu;  ///< of the feed-forward block
  double layer_norm_eps = 1e-5;  ///< ε of both LayerNorms
  bool norm_first = false;  ///< pre-norm (Xiong et al. 2020) instead of the original post-norm
  DType dtype = f32;  ///< of every parameter
};

/// The optional arguments of an encoder call (see MhaCall).
struct EncoderCall {
  Tensor key_padding_mask;  ///< (B, S): bool, true = padding; or float, added to the scores
  Tensor attn_mask;         ///< (S, S) or (B·H, S, S): bool, true = not allowed; or float, added
  bool is_causal = false;   ///< masks position j > i, on top of any attn_mask
};

/// One Transformer encoder layer (Vaswani et al. 2017, §3.1), as PyTorch's TransformerEncoderLayer with
/// batch_first=True and the same parameter names (self_attn, linear1, linear2, norm1, norm2):
///   post-norm: x = norm1(x + drop(sa(x))); x = norm2(x + drop(ff(x)))
///   pre-norm:  x = x + drop(sa(norm1(x))); x = x + drop(ff(norm2(x)))
/// with ff(x) = linear2(drop(act(linear1(x)))). src: (B, S, d_model) -> (B, S, d_model).
class EncoderLayer : public Layer {
 public:
  /// ValueError for a non-positive size, E not a multiple of H, dropout outside [0, 1) or layer_norm_eps <= 0.
  explicit EncoderLayer(const EncoderLayerOptions& options);
  /// The layer on src (B, S, E) with the call's masks; the attention's ShapeError/DTypeError for masks that do not fit.
  Variable forward(const Variable& src, const EncoderCall& call);
  Variable forward(const Variable& src) override;
  /// forward, also returning the self-attention weights per head (B, H, S, S) for inspection.
  AttentionOutput forward_with_attention(const Variable& src, const EncoderCall& call = {});
  std::string type_name() const override { return "EncoderLayer"; }
  /// The sub-layers by PyTorch's names, for reading or setting their parameters.
  MultiHeadAttention& self_attn() { return self_attn_; }
  Dense& linear1() { return linear1_; }                            ///< E -> dim_feedforward
  Dense& linear2() { return linear2_; }                            ///< dim_feedforward -> E
  LayerNorm& norm1() { return norm1_; }                            ///< before or after the attention block (norm_first)
  LayerNorm& norm2() { return norm2_; }                            ///< before or after the feed-forward block
  const EncoderLayerOptions& options() const { return options_; }  ///< as constructed

 private:
  AttentionOutput run(const Variable& src, const EncoderCall& call, bool need_weights);
  Variable feed_forward(const Variable& x) {
    return nn::feed_forward(linear1_, dropout_, linear2_, options_.activation, x);
  }

  EncoderLayerOptions options_;
  MultiHeadAttention self_attn_;
  Dense linear1_, linear2_;
  LayerNorm norm1_, norm2_;
  Dropout dropout_, dropout1_, dropout2_;  // inside ff, after attention, after ff (torch's names)
};

/// Encoder's options: num_layers layers of the same options.
struct EncoderOptions {
  EncoderLayerOptions layer;  ///< the options of every layer
  int64_t num_layers = 0;     ///< how many layers (> 0)
  bool final_norm = false;    ///< a LayerNorm "norm" after the last layer (needed with norm_first)
};

/// What Encoder::forward_with_attention returns.
struct EncoderOutput {
  Variable output;                  ///< (B, S, d_model)
  std::vector<Variable> attention;  ///< per layer, the self-attention weights per head (B, H, S, S)
};

/// A list of sub-layers named "0", "1", ... in order (PyTorch's ModuleList), so that a stack's parameters
/// are "layers.0.linear1.weight" (a registered name may not contain '.'). Refers to, does not own, its layers.
class LayerList : public Layer {
 public:
  /// Registers `layer` as the next child, named by its index.
  void append(Layer& layer) { register_layer(std::to_string(named_children().size()), layer); }
  std::string type_name() const override { return "LayerList"; }
};

/// A stack of num_layers EncoderLayers, each with its own parameters ("layers.0", "layers.1", ...), and an
/// optional final LayerNorm ("norm"), as PyTorch's TransformerEncoder. src: (B, S, d_model).
class Encoder : public Layer {
 public:
  /// ValueError when num_layers <= 0, and as EncoderLayer.
  explicit Encoder(const EncoderOptions& options);
  /// The layers in turn on src (B, S, E) with the same call, then the final norm; errors as EncoderLayer's.
  Variable forward(const Variable& src, const EncoderCall& call);
  Variable forward(const Variable& src) override;
  /// forward, also returning every layer's attention weights per head.
  EncoderOutput forward_with_attention(const Variable& src, const EncoderCall& call = {});
  std::string type_name() const override { return "Encoder"; }
  int64_t num_layers() const { return int64_t(layers_.size()); }  ///< how many layers
  /// Layer i, for reading or setting its parameters (std::out_of_range past the end).
  EncoderLayer& layer(int64_t i) { return *layers_.at(size_t(i)); }
  const EncoderOptions& options() const { return options_; }  ///< as constructed

 private:
  EncoderOutput run(const Variable& src, const EncoderCall& call, bool need_weights);

  EncoderOptions options_;
  LayerList layer_list_;  // registered as "layers"
  std::vector<std::unique_ptr<EncoderLayer>> layers_;
  std::unique_ptr<LayerNorm> norm_;  // null without final_norm
};

}  // namespace tg::nn
