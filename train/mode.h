#pragma once
// Whether a smaller or a larger metric is better, for keep-best checkpoints and early stopping.
#include <cmath>

namespace tg::train {

enum class Mode {
  min,  ///< smaller is better (a loss)
  max,  ///< larger is better (an accuracy)
};

/// Whether `value` beats `best` by more than `min_delta` (>= 0); a NaN value never does.
inline bool improves(Mode mode, double value, double best, double min_delta = 0) {
  return mode == Mode::min ? value < best - min_delta : value > best + min_delta;
}
/// The best value before any: +inf for min, -inf for max.
inline double worst(Mode mode) { return mode == Mode::min ? INFINITY : -INFINITY; }

}  // namespace tg::train
