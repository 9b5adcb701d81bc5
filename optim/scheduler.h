#pragma once
// Learning-rate schedules. Each writes the lr of every param group of one Optimizer, which it refers to
// (the optimizer must outlive it); call step() once per epoch (or iteration) after optimizer.step(), as in
// PyTorch. They follow torch 1.13's recursive
// ("chainable") formulas, so their lr sequences match PyTorch's to rounding.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "optim/optimizer.h"

namespace tg::optim {

/// A scheduler's resumable state: counters and lrs by name ("last_epoch", "base_lr.0", "last_lr.0").
using SchedulerState = std::map<std::string, double>;

/// The base of the epoch-driven schedules. Base lrs are the groups' initial_lr, which the first scheduler
/// attached to an optimizer sets to the current lr (as PyTorch). Constructing a scheduler applies epoch 0.
class LRScheduler {
 public:
  virtual ~LRScheduler() = default;
  LRScheduler(const LRScheduler&) = delete;  // SequentialLR and the optimizer refer to schedulers by address
  LRScheduler& operator=(const LRScheduler&) = delete;

  /// Advances one epoch and writes each group's new lr into the optimizer.
  virtual void step();
  /// Each group's lr after the last step (or after construction).
  const std::vector<double>& get_last_lr() const { return last_lr_; }
  int64_t last_epoch() const { return last_epoch_; }
  Optimizer& optimizer() const { return optimizer_; }

  /// "last_epoch", "base_lr.<group>", "last_lr.<group>" (SequentialLR adds its schedulers' under
  /// "scheduler.<k>."). Together with the optimizer's state (its group lrs) this resumes a schedule exactly.
  virtual SchedulerState state_dict() const;
  /// ValueError naming a missing or unexpected key.
  virtual void load_state_dict(const SchedulerState& state);

 protected:
  LRScheduler(std::string name, Optimizer& optimizer);
  /// Epoch 0. Each concrete scheduler's constructor calls it last, as PyTorch's base constructor does.
  void initial_step();
  /// The next lrs (last_epoch_ already advanced) from the groups' current lrs: the recursive form.
  virtual std::vector<double> get_lr() const = 0;
  /// The lrs at last_epoch_ straight from the base lrs; what step(epoch) uses (SequentialLR's milestones).
  virtual std::vector<double> closed_form_lr() const { return get_lr(); }
  /// PyTorch's step(epoch): jumps to `epoch` with the closed form.
  void step_to(int64_t epoch);
  std::vector<double> group_lrs() const;
  void set_lrs(const std::vector<double>& lrs);

  std::string name_;
  Optimizer& optimizer_;
  std::vector<double> base_lrs_, last_lr_;
  int64_t last_epoch_ = -1;

 private:
  friend class SequentialLR;
};

struct StepLROptions {
  int64_t step_size = 0;  ///< > 0
  double gamma = 0.1;
};
/// lr·γ every step_size epochs.
class StepLR : public LRScheduler {
 public:
  StepLR(Optimizer& optimizer, const StepLROptions& options);

 private:
  std::vector<double> get_lr() const override;
  std::vector<double> closed_form_lr() const override;
  StepLROptions options_;
};

struct ExponentialLROptions {
  double gamma = 0;
};
/// lr·γ every epoch (multiplied step by step, as PyTorch, so not bit-equal to base·γᵏ).
class ExponentialLR : public LRScheduler {
 public:
  ExponentialLR(Optimizer& optimizer, const ExponentialLROptions& options);

 private:
  std::vector<double> get_lr() const override;
  std::vector<double> closed_form_lr() const override;
  ExponentialLROptions options_;
};

struct LinearLROptions {
  double start_factor = 1.0 / 3;  ///< in (0, 1]
  double end_factor = 1.0;        ///< in [0, 1]
  int64_t total_iters = 5;        ///< > 0
};
/// Linear warmup (or decay): base·start_factor at epoch 0 to base·end_factor at total_iters, then constant.
class LinearLR : public LRScheduler {
 public:
  LinearLR(Optimizer& optimizer, const LinearLROptions& options = {});

 private:
  std::vector<double> get_lr() const override;
  std::vector<double> closed_form_lr() const override;
  LinearLROptions options_;
};

struct CosineAnnealingLROptions {
  int64_t T_max = 0;  ///< > 0: epochs from base lr down to eta_min
  double eta_min = 0;
};
/// eta_min + (base − eta_min)·(1 + cos(π·t/T_max))/2 (Loshchilov & Hutter 2017, without restarts); past
/// T_max the lr rises again. Computed recursively from the current lr, as PyTorch.
class CosineAnnealingLR : public LRScheduler {
 public:
  CosineAnnealingLR(Optimizer& optimizer, const CosineAnnealingLROptions& options);

 private:
  std::vector<double> get_lr() const override;
  std::vector<double> closed_form_lr() const override;
  CosineAnnealingLROptions options_;
};

/// Runs `schedulers` one after another, switching at the epochs in `milestones` (one fewer than
/// schedulers, increasing); at a switch the next scheduler restarts from its epoch 0 in closed form.
/// E.g. warmup then cosine: SequentialLR(opt, {warm, cos}, {5}), with warm and cos built on `opt` first.
/// ValueError for a scheduler of another optimizer, a nested SequentialLR or bad milestones.
class SequentialLR : public LRScheduler {
 public:
  SequentialLR(Optimizer& optimizer, std::vector<std::shared_ptr<LRScheduler>> schedulers,
               std::vector<int64_t> milestones);
  void step() override;
  SchedulerState state_dict() const override;
  void load_state_dict(const SchedulerState& state) override;

 private:
  std::vector<double> get_lr() const override { return group_lrs(); }  // unused: step() delegates
  std::vector<std::shared_ptr<LRScheduler>> schedulers_;
  std::vector<int64_t> milestones_;
};

struct ReduceLROnPlateauOptions {
  enum class Mode { min, max };
  enum class ThresholdMode { rel, abs };
  Mode mode = Mode::min;  ///< min: lower metric is better (a loss); max: higher is (an accuracy)
  double factor = 0.1;    ///< lr ← max(lr·factor, min_lr); in [0, 1)
  int64_t patience = 10;  ///< epochs without improvement tolerated before reducing
  double threshold = 1e-4;
  /// rel: an improvement beats best·(1 ∓ threshold); abs: best ∓ threshold. Any metric beats the initial ±inf
  /// (torch 1.13 compares with inf·0 = NaN at rel threshold 1, and never improves).
  ThresholdMode threshold_mode = ThresholdMode::rel;
  int64_t cooldown = 0;  ///< epochs after a reduction during which bad epochs are not counted
  double min_lr = 0;
  double eps = 1e-8;  ///< a reduction smaller than this is skipped
};
/// Reduces the lr by `factor` when a metric has stopped improving for more than `patience` epochs
/// (torch.optim.lr_scheduler.ReduceLROnPlateau). step(metric) once per epoch.
class ReduceLROnPlateau {
 public:
  explicit ReduceLROnPlateau(Optimizer& optimizer, const ReduceLROnPlateauOptions& options = {});
  void step(double metric);
  const std::vector<double>& get_last_lr() const { return last_lr_; }
  /// "best", "num_bad_epochs", "cooldown_counter", "last_epoch".
  SchedulerState state_dict() const;
  void load_state_dict(const SchedulerState& state);

 private:
  bool is_better(double metric) const;
  Optimizer& optimizer_;
  ReduceLROnPlateauOptions options_;
  std::vector<double> last_lr_;
  double best_;
  int64_t num_bad_epochs_ = 0, cooldown_counter_ = 0, last_epoch_ = 0;
};

}  // namespace tg::optim
