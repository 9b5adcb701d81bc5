#pragma once
#include "nn/layer.h"

namespace tg::nn {

/// Embedding's options, PyTorch's names.
struct EmbeddingOptions {
  int64_t num_embeddings = 0;  ///< V, the rows of the table
  int64_t embedding_dim = 0;   ///< D, the width of a row
  int64_t padding_idx = -1;    ///< a row kept at zero and never updated; -1 = none
  DType dtype = f32;           ///< of the table
};

/// A lookup table: indices (...) i64 -> (..., embedding_dim). Weights start N(0, 1) (padding row zero),
/// as PyTorch. IndexError naming an index outside [0, num_embeddings).
class Embedding : public Layer {
 public:
  /// ValueError for non-positive sizes or a padding_idx outside [-1, num_embeddings).
  explicit Embedding(const EmbeddingOptions& options);
  /// indices: any shape, i64.
  Variable forward(const Tensor& indices);
  /// The same, for i64 indices held in a Variable (so an Embedding can head a Sequential).
  Variable forward(const Variable& indices) override;
  /// forward(indices), then the forward hooks.
  Variable operator()(const Tensor& indices);
  using Layer::operator();
  std::string type_name() const override { return "Embedding"; }
  Variable weight() const { return weight_; }  ///< the table (V, D), "weight"
  /// The tied output projection (Press & Wolf 2017; GPT-2's lm_head, Flax's Embed.attend): logits = x·Wᵀ,
  /// x (..., embedding_dim) -> (..., num_embeddings), on this layer's own weight. The weight stays one
  /// parameter, under this layer's name only (as PyTorch's named_parameters lists a tied weight once), and
  /// gets the gradients of both uses. A PyTorch state_dict of a tied model also holds the output layer's
  /// key (nanoGPT's "lm_head.weight"): drop it, or load non-strict, which skips it.
  Variable attend(const Variable& x) const;
  const EmbeddingOptions& options() const { return options_; }  ///< as constructed

 private:
  EmbeddingOptions options_;
  Variable weight_;  // (num_embeddings, embedding_dim)
};

}  // namespace tg::nn
