#pragma once
// The non-finite guard: after backward, before the optimizer step, checks the loss and every gradient.
// A NaN or inf step is never applied: the guard either stops the run with an error saying where, or
// rolls the model, optimizer and schedulers back to the last state committed as good and lowers the
// learning rate, so the loop can go on.
#include <cstdint>

#include "train/state.h"

namespace tg::train {

enum class OnNonFinite {
  stop,      ///< throw tg::Error naming the step and what was not finite
  rollback,  ///< restore the last committed state, scale the learning rates by `factor`, skip the step
};

/// NonFiniteGuard's options.
struct NonFiniteGuardOptions {
  OnNonFinite action = OnNonFinite::stop;  ///< stop, or roll back and go on
  double factor = 0.5;                     ///< in (0, 1): the learning rates' factor per rollback
  int64_t max_rollbacks = 3;               ///< one more non-finite step after these stops as OnNonFinite::stop does
};

/// Usage: `loss.backward(); if (guard.check(loss.item())) opt.step();` and `guard.commit()` whenever the
/// state is known good (e.g. after each epoch). The guard's snapshot holds a copy of the model's and
/// optimizer's state (their memory, once more). The loader is not part of it: after a rollback the loop
/// goes on with the next batch, on the restored weights.
class NonFiniteGuard {
 public:
  /// Commits the current state. ValueError for a factor outside (0, 1), max_rollbacks < 0, or a state
  /// without model or optimizer.
  NonFiniteGuard(TrainingState state, const NonFiniteGuardOptions& options = {});
  /// True when `loss` and every parameter's gradient are finite: take the step. Otherwise stop (throws) or
  /// roll back (drops the gradients and returns false: skip this step).
  bool check(double loss);
  /// Records the current state as the one to roll back to.
  void commit();
  int64_t rollbacks() const { return rollbacks_; }  ///< rollbacks so far
  /// The product of the factors applied so far.
  double lr_scale() const { return lr_scale_; }

 private:
  std::string nonfinite(double loss) const;  // what is not finite, or ""
  void roll_back();

  TrainingState state_;
  NonFiniteGuardOptions options_;
  Safetensors good_;
  int64_t checks_ = 0, rollbacks_ = 0;
  double lr_scale_ = 1, since_commit_ = 1;  // the factors applied in all; since good_ was taken
};

}  // namespace tg::train
