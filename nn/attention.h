#pragma once
#include <array>

#include "nn/dense.h"
#include "nn/layer.h"

namespace tg::nn {

/// MultiHeadAttention's options, PyTorch's nn.MultiheadAttention arguments (nhead is num_heads).
struct MultiHeadAttentionOptions {
  int64_t d_model = 0;      ///< E, the query and output width
  int64_t num_heads = 0;    ///< H; d_model must be a multiple of it (each head has d_k = E/H)
  double dropout = 0.0;     ///< on the attention weights, in training only
  bool bias = true;         ///< in_proj_bias and out_proj.bias
  int64_t kdim = 0;         ///< key width; 0 = d_model
  int64_t vdim = 0;         ///< value width; 0 = d_model
  bool batch_first = true;  ///< (B, S, E) when true, (S, B, E) when false
  DType dtype = f32;        ///< of every parameter
};

/// The keys and values of the positions a MultiHeadAttention has seen, per head, for incremental decoding
/// (the "past_key_values" of GPT-2 implementations): keys and values (B, H, T, d_k), undefined before the
/// first call. A call that is given a cache appends its new keys and values to it and attends over all T.
/// Appended under gradient recording, keys and values are joined by cat, which the backward goes through.
/// Appended without (generation), they are views of key_buffer and value_buffer, which have room for more
/// positions and double their capacity when full, as std::vector does: a token then copies only its own keys
/// and values, not the T cached ones.
struct KVCache {
  Variable keys;    ///< (B, H, T, d_k)
  Variable values;  ///< (B, H, T, d_v)
  Tensor key_buffer;    ///< (B, H, capacity, d_k) behind keys when appended without gradients, else undefined
  Tensor value_buffer;  ///< (B, H, capacity, d_v) behind values likewise
  /// T, the number of cached positions (0 when empty).
  int64_t length() const { return keys ? keys.size(2) : 0; }
  /// Empties the cache, for a new sequence.
  void clear() {
    keys = values = Variable();
    key_buffer = value_buffer = Tensor();
  }
};

/// The optional arguments of one attention call, with PyTorch's names and meanings.
struct MhaCall {
  /// (B, S_k): bool, true = ignore that key; or float, added to the scores.
  Tensor key_padding_mask;
  /// (S_q, S_k) or (B·H, S_q, S_k), batch-major as PyTorch: bool, true = not allowed; or float, added.
  Tensor attn_mask;
  /// Masks key j > query i + T (T = the cache's length before the call, 0 without one), on top of any
  /// attn_mask. Without weights and with S_k = T + S_q (self-attention), the work above the diagonal is
  /// skipped (scaled_dot_product_attention's is_causal).
  bool is_causal = false;
  bool need_weights = true;  ///< return the attention weights (AttentionOutput::weights); false leaves them undefined
  /// Weights averaged over heads (B, S_q, S_k) instead of per head (B, H, S_q, S_k).
  bool average_attn_weights = true;
  /// When set, the projected keys and values of this call are appended to *cache and the query attends
  /// over all of them: key_padding_mask and attn_mask then cover the T + S_k keys. Generating token t costs
  /// O(t) instead of recomputing the O(t²) scores of the whole prefix.
  KVCache* cache = nullptr;
};

/// What MultiHeadAttention::forward returns.
struct AttentionOutput {
  Variable output;   ///< (B, S_q, E), or (S_q, B, E) when !batch_first
  /// (B, H, S_q, S_k), or (B, S_q, S_k) averaged; as used (after dropout in training), as PyTorch returns
  /// them; undefined when !need_weights.
  Variable weights;
};

/// Multi-head attention (Vaswani et al. 2017, §3.2.2): softmax(QKᵀ/√d_k + masks)·V per head, heads
/// concatenated, then out_proj. Parameters as PyTorch's nn.MultiheadAttention: in_proj_weight (3E, E)
/// and in_proj_bias (3E), or q/k/v_proj_weight (E, E|kdim|vdim) when kdim or vdim differ from E, and
/// out_proj (a Dense E -> E). A query whose keys are all masked gets zero weights and zero output from
/// attention (PyTorch gives NaN). ValueError when d_model is not a multiple of num_heads.
class MultiHeadAttention : public Layer {
 public:
  /// ValueError when d_model is not a multiple of num_heads, or for non-positive sizes or dropout outside [0, 1).
  explicit MultiHeadAttention(const MultiHeadAttentionOptions& options);
  /// query (B, S_q, E), key (B, S_k, kdim), value (B, S_k, vdim) (seq-first when !batch_first).
  /// ShapeError naming both shapes when inputs or masks do not fit; DTypeError for an integer mask.
  AttentionOutput forward(const Variable& query, const Variable& key, const Variable& value,
                          const MhaCall& call = {});
  std::string type_name() const override { return "MultiHeadAttention"; }
  const MultiHeadAttentionOptions& options() const { return options_; }  ///< as constructed
  /// The parameters by PyTorch's names, for reading them or setting them with copy_: in_proj_weight (3E, E)
  /// (rows q, k, v) and in_proj_bias (3E), or, when kdim or vdim differ from E, q/k/v_proj_weight with
  /// in_proj_weight undefined; in_proj_bias undefined without bias.
  Variable in_proj_weight() const { return in_proj_weight_; }
  Variable in_proj_bias() const { return in_proj_bias_; }    ///< (3E), see above
  Variable q_proj_weight() const { return q_proj_weight_; }  ///< (E, E) when kdim or vdim differ from E, else undefined
  /// (E, kdim) when kdim or vdim differ from E, else undefined.
  Variable k_proj_weight() const { return k_proj_weight_; }
  /// (E, vdim) when kdim or vdim differ from E, else undefined.
  Variable v_proj_weight() const { return v_proj_weight_; }
  /// The output projection, a Dense E -> E ("out_proj.weight", "out_proj.bias").
  Dense& out_proj() { return out_proj_; }
  const Dense& out_proj() const { return out_proj_; }  ///< the output projection, read-only

 private:
  // The unary Layer::forward(x), which throws for this layer: declared here so that it is hidden on purpose
  // (clang's -Woverloaded-virtual) and mha.forward(x) stays a compile error, not a runtime one.
  using Layer::forward;
  // Q, K, V projected and split into heads: (B, H, S_q|S_k, d_k); inputs batch-first. One in_proj product
  // when query, key and value are one input.
  std::array<Variable, 3> project(const Variable& query, const Variable& key, const Variable& value) const;
  void check_inputs(const Variable& query, const Variable& key, const Variable& value) const;
  void check_masks(const Variable& query, const Variable& key, const MhaCall& call) const;
  void check_cache(const Variable& query, const KVCache& cache) const;
  // Keys and values with the cache's in front, and the cache updated (nothing without a cache).
  void extend(Variable& k, Variable& v, KVCache* cache) const;

  MultiHeadAttentionOptions options_;
  int64_t head_dim_ = 0;
  // Either in_proj_weight_ (3E, E) or q/k/v_proj_weight_ (E, E), (E, kdim), (E, vdim) is defined.
  Variable in_proj_weight_, q_proj_weight_, k_proj_weight_, v_proj_weight_;
  Variable in_proj_bias_;  // (3E); undefined without bias
  Dense out_proj_;
};

}  // namespace tg::nn
