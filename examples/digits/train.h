#pragma once
// Training: the loop on the library's toolkit (DataLoader, CheckpointManager, NonFiniteGuard, ProgressBar,
// CsvLogger, learning_curve_svg) and the model directory it writes.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "config.h"
#include "images.h"
#include "model.h"

namespace digits {

struct TrainOptions {
  std::string out_dir;   ///< the model directory (created)
  bool resume = false;   ///< continue from the newest checkpoint in out_dir
  uint64_t seed = 0;     ///< weights, dropout and the order of the batches
};

/// One epoch's metrics: a row of metrics.csv.
struct EpochLog {
  int64_t epoch = 0;
  double loss = 0, train_accuracy = 0, val_accuracy = 0, lr = 0, seconds = 0;
};

struct TrainResult {
  std::unique_ptr<DigitsNet> model;  ///< the final weights, in eval mode
  std::vector<EpochLog> log;         ///< every epoch of the run, resumed ones included
};

/// Trains `config` on split.train for config.train.epochs (validating on split.valid after each; a progress
/// bar on stderr, a line per epoch on stdout) and writes
/// the model directory: config.json, checkpoint-<epoch>.safetensors (after every epoch, and epoch 0 before
/// the first), metrics.csv, model.safetensors and learning_curve.svg. With options.resume it continues from
/// the newest checkpoint and ends with the weights of an uninterrupted run; a larger epoch count extends
/// it (a cosine schedule stretches to the new length). ValueError for a bad config, a resume without a
/// checkpoint or of another configuration, seed or data; tg::Error naming the file when a write fails.
TrainResult train(const Config& config, const Split& split, const TrainOptions& options);

/// The model of a model directory (config.json and model.safetensors), in eval mode, and its config.json.
/// ValueError naming the directory and the problem (missing files, another program's directory, weights
/// of another shape, NaN or inf weights).
std::pair<std::unique_ptr<DigitsNet>, RunInfo> load_model(const std::string& dir);

}  // namespace digits
