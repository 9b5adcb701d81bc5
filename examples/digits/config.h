#pragma once
// The digits run's configuration: the network's sizes and the training recipe, by name or from a JSON file,
// and the model directory's config.json (the configuration, seed and data a model was trained with).
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace digits {

struct ModelConfig {
  int64_t channels1 = 16;  ///< filters of the first convolution (3×3 over the 8×8 image)
  int64_t channels2 = 32;  ///< filters of the second
  double dropout = 0.25;   ///< before the last (Dense) layer
};

struct TrainConfig {
  int64_t epochs = 30;
  int64_t batch_size = 32;
  double lr = 1e-2;               ///< AdamW's, at the first epoch
  double weight_decay = 1e-4;     ///< AdamW's decoupled decay
  std::string schedule = "cosine";  ///< "cosine" (per epoch, down to 0 after the last) or "constant"
};

struct Config {
  std::string name = "default";
  ModelConfig model;
  TrainConfig train;
};

/// "default" (the recipe of RESULTS.md) or "tiny" (4 and 8 filters, 2 epochs: seconds, for tests).
/// ValueError naming the known ones for another name.
Config config_by_name(const std::string& name);
/// A configuration name, or the path of a JSON file holding one (every field optional, unknown fields
/// refused). ValueError naming the file and the field.
Config load_config(const std::string& name_or_path);
/// ValueError naming the first field out of range (sizes are bounded: channels at most 1024, batch_size at
/// most 2^20).
void check_config(const Config& config);

nlohmann::json to_json(const Config& config);
/// The inverse; ValueError for an unknown or mistyped field (`where` starts the message).
Config config_from_json(const nlohmann::json& j, const std::string& where);

/// A model directory's config.json: what `eval`, `predict` and `train --resume` rebuild the run from.
struct RunInfo {
  Config config;
  uint64_t seed = 0;
  std::string data;  ///< the absolute path of the data directory it was trained on
};

/// Writes <dir>/config.json atomically (tg::Error naming the file when it fails).
void save_run_info(const std::string& dir, const RunInfo& info);
/// Reads <dir>/config.json. ValueError naming the directory when it is missing, not JSON, or not a digits
/// model's (another example's model directory).
RunInfo load_run_info(const std::string& dir);

}  // namespace digits
