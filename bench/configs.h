#pragma once
// The training-step configurations of issue 7 (S, M, L), shared by the step benchmark and mirrored in
// torch_step.py: a post-norm ReLU encoder over token + position embeddings, mean-pooled, Dense(d -> 2).
#include <cstdint>
#include <string>

#include <tensorgrad/tensorgrad.h>

namespace bench {

struct StepConfig {
  const char* name;
  int64_t batch, seq, d_model, heads, ffn, layers, vocab;
};

inline constexpr StepConfig kConfigs[] = {
    {"S", 32, 32, 64, 4, 128, 2, 5000},
    {"M", 32, 128, 256, 8, 1024, 4, 5000},
    {"L", 16, 256, 512, 8, 2048, 6, 5000},
};

inline const StepConfig& config_named(const std::string& name) {
  for (const StepConfig& c : kConfigs)
    if (name == c.name) return c;
  throw tg::ValueError(fmt::format("bench: unknown config '{}' (S, M or L)", name));
}

/// tokens (B, S) -> logits (B, 2). Dropout 0.1 everywhere (PyTorch's default), training mode.
class StepModel : public tg::nn::Layer {
 public:
  explicit StepModel(const StepConfig& c)
      : tokens_({.num_embeddings = c.vocab, .embedding_dim = c.d_model}),
        positions_({.num_embeddings = c.seq, .embedding_dim = c.d_model}),
        encoder_({.layer = {.d_model = c.d_model, .num_heads = c.heads, .dim_feedforward = c.ffn, .dropout = 0.1},
                  .num_layers = c.layers}),
        head_({.in_features = c.d_model, .out_features = 2}) {
    register_layer("tokens", tokens_);
    register_layer("positions", positions_);
    register_layer("encoder", encoder_);
    register_layer("head", head_);
  }
  tg::Variable logits(const tg::Tensor& ids) {
    tg::Tensor pos = tg::arange(0, double(ids.size(1)), 1, tg::i64);
    tg::Variable h = encoder_.forward(tokens_.forward(ids) + positions_.forward(pos));  // (B, S, D)
    return head_(tg::mean(h, {1}));                                                     // (B, 2)
  }

 private:
  tg::nn::Embedding tokens_, positions_;
  tg::nn::Encoder encoder_;
  tg::nn::Dense head_;
};

}  // namespace bench
