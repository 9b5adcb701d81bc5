#pragma once
// The sentiment classifier: token embedding + learned position embedding -> dropout -> Transformer
// encoder (with the key padding mask) -> pooling over real tokens -> Dense to class logits.
#include <vector>

#include <tensorgrad/tensorgrad.h>

#include "config.h"
#include "text.h"

namespace sentiment {

class Classifier : public tg::nn::Layer {
 public:
  /// ValueError for a config the layers refuse (e.g. d_model not divisible by num_heads, vocab_size < 2).
  explicit Classifier(const ModelConfig& config);
  /// tokens (B, S) i64, pad_mask (B, S) bool (true at padding) -> logits (B, num_classes).
  tg::Variable forward(const tg::Tensor& tokens, const tg::Tensor& pad_mask);
  /// The attention weights of every layer, each (B, H, S, S), for the same inputs.
  std::vector<tg::Variable> attention(const tg::Tensor& tokens, const tg::Tensor& pad_mask);
  std::string type_name() const override { return "SentimentClassifier"; }
  const ModelConfig& config() const { return config_; }

 private:
  tg::Variable embed(tg::Tensor tokens);                                      // (B, S, d_model)
  tg::Variable pool(const tg::Variable& h, const tg::Tensor& pad_mask) const;  // (B, d_model)

  ModelConfig config_;
  tg::nn::Embedding token_embedding_, position_embedding_;
  tg::nn::Dropout dropout_;
  tg::nn::Encoder encoder_;
  tg::nn::Dense classifier_;
};

}  // namespace sentiment
