// Embedding: a row lookup by index (tg::embedding), whose backward adds rows at repeated indices and
// leaves the padding row without gradient.
#include "nn/embedding.h"

#include "nn/init.h"

namespace tg::nn {

// PyTorch's reset_parameters: N(0, 1), then the padding row set to zero.
Embedding::Embedding(const EmbeddingOptions& o) : options_(o) {
  check<ValueError>(o.num_embeddings > 0 && o.embedding_dim > 0,
                    "Embedding: num_embeddings and embedding_dim must be > 0, got {} and {}", o.num_embeddings,
                    o.embedding_dim);
  check<ValueError>(o.padding_idx == -1 || (o.padding_idx >= 0 && o.padding_idx < o.num_embeddings),
                    "Embedding: padding_idx {} is out of range for {} embeddings (-1 = none)", o.padding_idx,
                    o.num_embeddings);
  check<DTypeError>(is_floating(o.dtype), "Embedding: dtype must be f32 or f64, got {}", o.dtype);
  Tensor w = init::normal(empty({o.num_embeddings, o.embedding_dim}, o.dtype));
  if (o.padding_idx >= 0) w.select(0, o.padding_idx).zero_();
  weight_ = register_parameter("weight", w);
}

// indices (...) i64 -> (..., embedding_dim)
Variable Embedding::forward(const Tensor& indices) { return embedding(weight_, indices, options_.padding_idx); }

Variable Embedding::forward(const Variable& indices) { return forward(indices.value()); }

Variable Embedding::operator()(const Tensor& indices) { return Layer::operator()(Variable(indices)); }

// x (..., D) -> (..., V): one product with the transposed table, no bias.
Variable Embedding::attend(const Variable& x) const {
  check<ShapeError>(x.dim() >= 1 && x.size(-1) == options_.embedding_dim,
                    "Embedding::attend: x must be (..., {}), got {}", options_.embedding_dim, x.shape());
  return linear(x, weight_, Variable());
}

}  // namespace tg::nn
