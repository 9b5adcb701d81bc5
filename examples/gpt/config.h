#pragma once
// The GPT example's settings: the model's shape and the training recipe, the named configuration, and
// their JSON form (config.json in the model directory, so that a directory describes itself).
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace gpt {

/// A decoder-only Transformer over bytes (model.h): token and learned position embeddings, pre-norm GELU
/// blocks, a final LayerNorm, the output projection tied to the token embedding.
struct ModelConfig {
  int64_t vocab_size = 0;  ///< set from the vocabulary at training time
  int64_t block_size = 128;  ///< context length: the most bytes the model sees at once
  int64_t d_model = 128;
  int64_t num_heads = 4;
  int64_t num_layers = 4;
  int64_t dim_feedforward = 512;
  double dropout = 0.0;
};

/// How to train it: AdamW (or Muon for the blocks' matrices, muon_lr) on random windows of the training stream,
/// the learning rate warmed up linearly over warmup_steps, then cosine from lr down to min_lr at decay_steps,
/// then min_lr (nanoGPT's schedule; decay_steps apart from max_steps, so that a run can be extended without
/// changing the steps it took).
struct TrainConfig {
  int64_t max_steps = 2800;
  int64_t batch_size = 32;
  double lr = 2e-3;
  double min_lr = 2e-4;
  int64_t warmup_steps = 100;
  int64_t decay_steps = 2800;
  double weight_decay = 0.1;
  /// > 0: the decoder blocks' 2-D weights train by Muon (optim/muon.h, its update's RMS matched to AdamW's) at
  /// this learning rate, scheduled like lr (muon_lr · lr_at(step) / lr), the rest by AdamW; 0: AdamW alone.
  double muon_lr = 0.002;
  double clip_grad_norm = 1.0;  ///< 0 = no clipping
  int64_t eval_interval = 350;  ///< steps between validations (and checkpoints); the last step always validates
  /// Evaluation windows overlap: each window scores only its last eval_stride bytes, so every byte is
  /// predicted from at least block_size - eval_stride bytes of context (the stream's start aside).
  int64_t eval_stride = 64;
};

struct Config {
  std::string name;
  ModelConfig model;
  TrainConfig train;
};

/// The most steps a TrainConfig may ask for (far from int64 overflow in step counts and schedules).
inline constexpr int64_t kMaxSteps = 100'000'000;
/// Bounds on the sizes (block_size, d_model, dim_feedforward, batch_size; num_layers) and on the weights of a
/// model (4 GiB of f32): a config.json asking for more is refused before anything is allocated.
inline constexpr int64_t kMaxSize = int64_t(1) << 20, kMaxLayers = 1024, kMaxWeights = int64_t(1) << 30;

/// "default" (examples/gpt/RESULTS.md), else ValueError.
Config config_by_name(const std::string& name);
/// ValueError naming the field ("model: d_model 10 is not divisible by num_heads 4"), and for sizes above
/// kMaxSize or kMaxLayers or a model of more than kMaxWeights weights; vocab_size is not checked (it comes from
/// the vocabulary, at most 256 bytes).
void check_config(const Config& c);

/// {"kind": "gpt", "name": ..., "model": {...}, "train": {...}}.
void to_json(nlohmann::json& j, const Config& c);
/// ValueError naming the key when one is missing, unknown or mistyped; "kind" must be "gpt" when present
/// (a model directory's config.json always has it).
void from_json(const nlohmann::json& j, Config& c);

}  // namespace gpt
