#pragma once
// A tiny sentiment run for the checkpoint, resume and guard tests: 150 made-up sentences (96 train, 24
// validation, 30 test), one one-layer d_model 8 network and the default recipe (AdamW, warmup + cosine, dropout,
// word dropout, label smoothing) with keep-best, so an epoch is 6 steps and a few milliseconds.
#include <string>

#include "checkpoint.h"
#include "temp_dir.h"
#include "train.h"

namespace sentiment_test {

/// Writes the sentences as `tiny.tsv` in `dir` and returns its path.
inline std::string write_tiny_tsv(const TempDir& dir) {
  const char* good[] = {"good", "great", "fine", "lovely", "superb"};
  const char* bad[] = {"bad", "awful", "poor", "boring", "dull"};
  const char* things[] = {"film", "plot", "cast", "phone", "food", "service"};
  std::string tsv = "text\tlabel\n";
  for (int i = 0; i < 150; ++i) {
    const bool positive = i % 2 == 0;
    tsv += std::string("the ") + things[i % 6] + " was " + (positive ? good : bad)[(i / 2) % 5];
    tsv += i % 3 == 0 ? " and the " + std::string(things[(i / 3) % 6]) + " too" : "";
    tsv += positive ? "\t1\n" : "\t0\n";
  }
  return dir.write("tiny.tsv", tsv);
}

inline sentiment::Config tiny_config(int64_t epochs = 4) {
  sentiment::Config c = sentiment::config_by_name("default");
  c.name = "tiny";
  c.model.d_model = 8, c.model.num_heads = 2, c.model.num_layers = 1, c.model.dim_feedforward = 16;
  c.model.max_len = 12;
  c.train.epochs = epochs, c.train.batch_size = 16, c.train.val_fraction = 0.2, c.train.keep_best = true;
  c.model.ensemble = 1, c.train.ensemble_data = sentiment::EnsembleData::shared;  // one network, validated on the carved split
  return c;
}

/// The newest checkpoint of a model directory as its file holds it: the toolkit's TrainingState (tensors
/// "model.<name>" and "optim.<key>"; metadata "rng.default", "rng.shuffle") and the run's record ("user.<key>").
inline tg::Safetensors newest_checkpoint(const std::string& dir) {
  return tg::load_safetensors(sentiment::resume_checkpoint(dir));
}

/// The tensors of `file` under `prefix`, the prefix removed.
inline tg::TensorMap tensors_under(const tg::Safetensors& file, const std::string& prefix) {
  tg::TensorMap out;
  for (const auto& [name, t] : file.tensors)
    if (name.starts_with(prefix)) out[name.substr(prefix.size())] = t;
  return out;
}

/// The metadata of a checkpoint file but the epochs' log, whose timings differ from run to run.
inline std::map<std::string, std::string> timeless(const tg::Safetensors& file) {
  std::map<std::string, std::string> out = file.metadata;
  out.erase("user.log");
  return out;
}

}  // namespace sentiment_test
