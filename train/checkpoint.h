#pragma once
// Checkpoints: the whole TrainingState in one safetensors file per save, written atomically (a temporary
// file, fsync, rename: a crash leaves the previous file whole), with keep-last-N and keep-best-K pruning.
// Files are <dir>/<prefix>-<step>.safetensors; every such file in `dir` belongs to the manager.
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "train/mode.h"
#include "train/state.h"

namespace tg::train {

/// CheckpointManager's options.
struct CheckpointOptions {
  std::string dir;                    ///< created if needed
  std::string prefix = "checkpoint";  ///< non-empty, no '/'
  int64_t keep_last = 1;              ///< the newest N are kept; 0 keeps every checkpoint
  int64_t keep_best = 0;              ///< also the K best by their metric (NaN metrics never count), >= 0
  Mode mode = Mode::min;              ///< whether a smaller or larger metric is better
};

/// One checkpoint file and what it was saved with.
struct CheckpointInfo {
  int64_t step = 0;                         ///< the step it was saved at
  double metric = NAN;                      ///< what ranks it for keep-best; NaN = unranked
  std::string path;                         ///< the file
  std::map<std::string, std::string> user;  ///< the metadata passed to save()
};

/// Saves a TrainingState atomically as numbered files in one directory, keeps the newest and the best, and
/// resumes from the newest (see the note at the top).
class CheckpointManager {
 public:
  /// ValueError for an empty dir or prefix, a prefix with '/', or negative keep counts.
  CheckpointManager(TrainingState state, CheckpointOptions options);

  /// Writes the state as `<prefix>-<step>.safetensors` (replacing one of the same step), then deletes the
  /// files neither among the keep_last newest nor the keep_best best. `metric` ranks it for keep-best;
  /// `user` is stored with it (keys and values UTF-8). Returns the path. tg::Error naming the file when a
  /// write fails; the previous checkpoints are then intact.
  std::string save(int64_t step, double metric = NAN, const std::map<std::string, std::string>& user = {});
  /// Restores the newest checkpoint in dir (largest step); nullopt when there is none. Errors as load().
  std::optional<CheckpointInfo> resume();
  /// The file of the newest checkpoint in dir (largest step), without reading it; nullopt when there is none
  /// (or no dir). For a look at its metadata before resume() restores it.
  std::optional<std::string> newest() const;
  /// Restores the checkpoint at `path` (restore()'s guarantee: on error nothing changes). ValueError
  /// naming the file when it is missing, truncated or corrupt, or holds another run's parts.
  CheckpointInfo load(const std::string& path);

  /// The checkpoints kept, by step.
  const std::vector<CheckpointInfo>& kept() const { return kept_; }
  /// The kept checkpoint with the best metric (the earliest of equals); nullopt when none has one.
  std::optional<CheckpointInfo> best() const;
  /// The file a checkpoint of `step` is written to.
  std::string path_for(int64_t step) const;

 private:
  // The step of a file name of ours, or -1.
  int64_t step_of(const std::string& filename) const;
  std::vector<CheckpointInfo> prune(std::vector<CheckpointInfo> all) const;

  TrainingState state_;
  CheckpointOptions options_;
  std::vector<CheckpointInfo> kept_;
};

}  // namespace tg::train
