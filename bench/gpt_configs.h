#pragma once
// The GPT benchmark's configurations (issue 24), shared by bench_gpt and mirrored in torch_gpt.py:
// "default" is examples/gpt's default model on the fortunes corpus's 116-byte vocabulary; "nano" is like
// nanoGPT's shakespeare-char (6 layers, 384 wide, 6 heads, context 256, dropout 0.2, 65 characters) at
// batch 16. Training steps take AdamW (weight decay 0.1 on every parameter) and clip the gradient norm at 1,
// as examples/gpt's loop does.
#include <string>

#include "model.h"

namespace bench {

struct GptBenchConfig {
  const char* name;
  gpt::ModelConfig model;
  int64_t batch;
};

inline const GptBenchConfig kGptConfigs[] = {
    {"default", {.vocab_size = 116}, 32},
    {"nano", {.vocab_size = 65, .block_size = 256, .d_model = 384, .num_heads = 6, .num_layers = 6,
              .dim_feedforward = 1536, .dropout = 0.2}, 16},
};

inline const GptBenchConfig& gpt_config_named(const std::string& name) {
  for (const GptBenchConfig& c : kGptConfigs)
    if (name == c.name) return c;
  throw tg::ValueError(fmt::format("bench_gpt: unknown config '{}' (default or nano)", name));
}

}  // namespace bench
