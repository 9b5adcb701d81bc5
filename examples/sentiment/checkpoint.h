#pragma once
// What a sentiment checkpoint holds beside the toolkit's training state. The files are the library's
// (tg::train::CheckpointManager: <out_dir>/checkpoint-<epoch>.safetensors, written atomically after every
// epoch, keep-last and keep-best): weights, optimizer, schedule and generators. The run's own record goes
// in their user metadata: what the run is, so that a resume can refuse another, and its counters and log.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <tensorgrad/tensorgrad.h>

#include "report.h"

namespace sentiment {

/// A run's record in its checkpoint (the user metadata of tg::train::CheckpointManager::save).
struct RunRecord {
  std::string path;              ///< the checkpoint file it was read from (empty when written)
  // What the run is: a resume must match all three.
  nlohmann::json config;         ///< the run's Config, vocab_size set (train.epochs may differ on resume)
  uint64_t seed = 0;
  std::string data_fingerprint;  ///< hash of the vocabulary and the encoded splits
  /// The data file the run read (Data::path): `sentiment train --resume` reads it again unless --data is given.
  std::string data_path;
  // Where it is.
  int64_t epoch = 0;             ///< epochs completed: the checkpoint's step
  int64_t step = 0;              ///< optimizer steps taken: the position in the learning-rate schedule
  double lr_scale = 1;           ///< product of the rollback factors applied so far
  int64_t rollbacks = 0;
  /// An ensemble's member generators (Classifier::generator_states; empty for one network).
  std::vector<std::string> member_rngs;
  std::vector<EpochLog> log;     ///< the metrics of the epochs done
};

/// An epoch's metrics as one JSON object, as the checkpoint's log keeps it (a NaN accuracy, for an
/// absent split, is null); doubles print with enough digits to read back bit-exact.
nlohmann::json epoch_json(const EpochLog& e);
/// The inverse; ValueError for a missing or mistyped field.
EpochLog epoch_from_json(const nlohmann::json& j);

/// The record as user metadata (the epoch is the checkpoint's step, not part of it). Numbers are shortest
/// round-trip decimals, which read back bit-exact.
std::map<std::string, std::string> record_metadata(const RunRecord& r);

/// Reads the record of the checkpoint at `path` without restoring anything. ValueError naming the file for
/// a missing or corrupt file, one that is not a sentiment checkpoint, or counters out of range (epoch outside
/// [0, kMaxEpochs], step or rollbacks < 0, lr_scale outside (0, 1], more log entries than epochs).
RunRecord read_record(const std::string& path);
/// The same on the metadata of a file already read; `path` names it in the errors.
RunRecord parse_record(const std::map<std::string, std::string>& metadata, const std::string& path);

/// The checkpoint `sentiment train --resume` continues from: the newest checkpoint-<epoch>.safetensors in
/// `out_dir`. ValueError naming the directory when there is none, and naming the old format when it holds
/// the checkpoint.safetensors of earlier versions instead (which cannot resume; its model still loads).
std::string resume_checkpoint(const std::string& out_dir);

/// The data file a model directory was trained on, as its newest checkpoint (or an old-format
/// checkpoint.safetensors) records it; "" when it holds none. Errors as read_record.
std::string recorded_data_path(const std::string& dir);

}  // namespace sentiment
