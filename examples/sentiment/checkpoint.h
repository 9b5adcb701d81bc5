#pragma once
// A training checkpoint: everything `train` needs to continue a run so that it ends with the same weights
// as a run that was never interrupted. One safetensors file, replaced atomically after every epoch.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <tensorgrad/tensorgrad.h>

#include "report.h"

namespace sentiment {

struct Checkpoint {
  // What the run is: a resume must match all three.
  nlohmann::json config;         ///< the run's Config, vocab_size set (train.epochs may differ on resume)
  uint64_t seed = 0;
  std::string data_fingerprint;  ///< hash of the vocabulary and the encoded splits
  /// The data file the run read (Data::path; empty when unknown, as in checkpoints written before it was
  /// kept): `sentiment train --resume` reads it again unless --data is given.
  std::string data_path;
  // Where it is.
  int64_t epoch = 0;             ///< epochs completed
  int64_t step = 0;              ///< optimizer steps taken: the position in the learning-rate schedule
  double lr_scale = 1;           ///< product of the rollback factors applied to the schedule so far
  int64_t rollbacks = 0;
  std::string default_rng;       ///< tg::default_generator(): dropout and word dropout draw from it
  std::string shuffle_rng;       ///< the generator that shuffles the training batches
  /// An ensemble's member generators (Classifier::generator_states; empty for one network, and in
  /// checkpoints written before members had their own)
  std::vector<std::string> member_rngs;
  // What it has: weights, optimizer state (moments, step counts, lrs), keep-best state, metrics so far.
  tg::TensorMap model;
  tg::optim::OptimizerState optimizer;
  double best_val = -1;          ///< best validation accuracy so far (-1: none yet)
  int64_t best_epoch = 0;
  tg::TensorMap best_model;      ///< the weights of best_epoch when keep_best is on, else empty
  std::vector<EpochLog> log;
};

/// An epoch's metrics as one JSON object, as the checkpoint's log keeps it (a NaN accuracy, for an
/// absent split, is null); doubles print with enough digits to read back bit-exact.
nlohmann::json epoch_json(const EpochLog& e);
/// The inverse; ValueError for a missing or mistyped field.
EpochLog epoch_from_json(const nlohmann::json& j);

/// Writes `c` to `path` as one safetensors file ("model.*", "best.*", "optim.*" tensors; the rest as
/// metadata) through tg::save_safetensors: a temporary file, fsync, rename, fsync of the folder. A failed
/// save throws tg::Error and leaves the previous checkpoint at `path` intact.
void save_checkpoint(const std::string& path, const Checkpoint& c);

/// Reads a checkpoint back, bit-exact. ValueError naming the path for a missing file, a corrupt one, a
/// safetensors file that is not a checkpoint of this version, or counters out of range (epoch outside
/// [0, kMaxEpochs], step or rollbacks < 0, lr_scale outside (0, 1], best_epoch past epoch, more log entries
/// than epochs).
Checkpoint load_checkpoint(const std::string& path);
/// The same on a file already read; `path` names it in the errors.
Checkpoint parse_checkpoint(const tg::Safetensors& file, const std::string& path);

}  // namespace sentiment
