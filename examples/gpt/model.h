#pragma once
// The GPT: a decoder-only Transformer over bytes (Radford et al. 2019), in the layout of nanoGPT.
#include <span>
#include <vector>

#include <tensorgrad/tensorgrad.h>

#include "config.h"

namespace gpt {

/// tokens (B, T) i64 -> logits (B, T, V): token embedding + learned positions, dropout, num_layers pre-norm
/// GELU decoder blocks with causal self-attention, a final LayerNorm, and logits from the token embedding
/// (tied weights, Press & Wolf 2017). Parameters "token_embedding.weight", "position.weight",
/// "decoder.layers.<i>.<PyTorch TransformerEncoderLayer names>", "decoder.norm.*". Embeddings start at
/// N(0, 0.02²) as GPT-2's.
class Gpt : public tg::nn::Layer {
 public:
  /// ValueError for a config check_config refuses, or vocab_size < 1.
  explicit Gpt(const ModelConfig& config);
  /// Logits of tokens at positions start .. start + T - 1. With `cache` (num_layers KVCaches holding the
  /// `start` positions before), the new keys and values are appended to it (incremental decoding).
  /// ValueError when start + T > block_size.
  tg::Variable forward(const tg::Tensor& tokens, int64_t start = 0, std::span<tg::nn::KVCache> cache = {});
  std::string type_name() const override { return "Gpt"; }
  const ModelConfig& config() const { return config_; }

 private:
  using Layer::forward;  // the unary one takes a Variable; a GPT takes token ids
  ModelConfig config_;
  tg::nn::Embedding token_embedding_;
  tg::nn::LearnedPositionalEncoding position_;
  tg::nn::Dropout dropout_;
  tg::nn::Decoder decoder_;
};

/// The cross-entropy of every byte of `stream` given the bytes before it, in nats, summed: windows of
/// block_size bytes, each scoring its last `stride` targets (the first window all of its own), B windows
/// per forward, in eval mode without a graph. The first byte is predicted after the separator "\n%\n"
/// (what precedes every other document). ValueError for an empty stream.
double stream_nats(Gpt& model, const std::vector<int64_t>& separator, const std::vector<int64_t>& stream,
                   int64_t stride, int64_t batch_size = 32);

}  // namespace gpt
