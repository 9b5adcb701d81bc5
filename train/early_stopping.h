#pragma once
// Early stopping (Keras' EarlyStopping, Lightning's): stop when a monitored metric has not improved for
// `patience` evaluations. The loop asks; nothing is stopped behind its back.
#include <cstdint>
#include <map>
#include <string>

#include "train/mode.h"

namespace tg::train {

/// EarlyStopping's options.
struct EarlyStoppingOptions {
  int64_t patience = 5;   ///< evaluations without improvement tolerated, >= 0
  double min_delta = 0;   ///< an improvement must exceed this, >= 0
  Mode mode = Mode::min;  ///< min: a smaller metric is better (a loss); max: a larger one (an accuracy)
};

/// Counts evaluations without improvement of one metric and says when `patience` is used up.
class EarlyStopping {
 public:
  /// ValueError for a negative or non-finite patience or min_delta.
  explicit EarlyStopping(const EarlyStoppingOptions& options = {});
  /// Records one evaluation; true when training should stop: `patience` evaluations in a row did not
  /// improve on the best by more than min_delta (a NaN never improves).
  bool step(double metric);
  /// Whether the last step() said stop.
  bool should_stop() const { return num_bad_ > 0 && num_bad_ >= options_.patience; }
  double best() const { return best_; }  ///< the best metric so far (±inf before the first)
  /// The evaluation (1-based count of step() calls) that gave best(); 0 before any improvement.
  int64_t best_step() const { return best_step_; }
  int64_t num_bad() const { return num_bad_; }  ///< evaluations in a row without improvement

  /// "best", "best_step", "num_bad", "steps": for checkpoints (TrainingState::early_stopping).
  std::map<std::string, double> state_dict() const;
  /// ValueError naming a missing key.
  void load_state_dict(const std::map<std::string, double>& state);

 private:
  EarlyStoppingOptions options_;
  double best_;
  int64_t best_step_ = 0, num_bad_ = 0, steps_ = 0;
};

}  // namespace tg::train
