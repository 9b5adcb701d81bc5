#pragma once
// Learning-rate schedules. Each writes the lr of every param group of one Optimizer, which it refers to
// (the optimizer must outlive it); call step() once per epoch (or iteration) after optimizer.step(), as in
// PyTorch. They follow torch 1.13's recursive
// ("chainable") formulas, so their lr sequences match PyTorch's to rounding.
#include <array>
#include <cstdint>
#include <functional>
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
  int64_t last_epoch() const { return last_epoch_; }   ///< the epoch of the last step (0 after construction)
  Optimizer& optimizer() const { return optimizer_; }  ///< the optimizer whose lrs it sets

  /// "last_epoch", "base_lr.<group>", "last_lr.<group>" (SequentialLR adds its schedulers' under
  /// "scheduler.<k>."). Together with the optimizer's state (its group lrs) this resumes a schedule exactly.
  virtual SchedulerState state_dict() const;
  /// ValueError naming a missing or unexpected key.
  virtual void load_state_dict(const SchedulerState& state);

 protected:
  /// For the schedulers: `name` for errors and state, and the optimizer's lrs as the base lrs.
  LRScheduler(std::string name, Optimizer& optimizer);
  /// Epoch 0. Each concrete scheduler's constructor calls it last, as PyTorch's base constructor does.
  void initial_step();
  /// The next lrs (last_epoch_ already advanced) from the groups' current lrs: the recursive form.
  virtual std::vector<double> get_lr() const = 0;
  /// The lrs at last_epoch_ straight from the base lrs; what step(epoch) uses (SequentialLR's milestones).
  virtual std::vector<double> closed_form_lr() const { return get_lr(); }
  /// PyTorch's step(epoch): jumps to `epoch` with the closed form.
  void step_to(int64_t epoch);
  /// Each group's current lr.
  std::vector<double> group_lrs() const;
  /// Sets each group's lr (one per group).
  void set_lrs(const std::vector<double>& lrs);
  /// Sets a group's base lr and initial_lr (OneCycleLR, whose base is max_lr / div_factor, not the lr).
  void set_base_lr(size_t group, double lr);

  std::string name_;              ///< the scheduler's type, for errors and state
  Optimizer& optimizer_;          ///< the optimizer whose lrs it sets
  std::vector<double> base_lrs_;  ///< each group's initial lr
  std::vector<double> last_lr_;   ///< each group's lr after the last step
  int64_t last_epoch_ = -1;       ///< the epoch of the last step

 private:
  friend class SequentialLR;
};

/// StepLR's options.
struct StepLROptions {
  int64_t step_size = 0;  ///< > 0
  double gamma = 0.1;     ///< γ, the factor (>= 0)
};
/// lr·γ every step_size epochs.
class StepLR : public LRScheduler {
 public:
  /// ValueError for step_size <= 0 or a negative or non-finite gamma.
  StepLR(Optimizer& optimizer, const StepLROptions& options);

 private:
  std::vector<double> get_lr() const override;
  std::vector<double> closed_form_lr() const override;
  StepLROptions options_;
};

/// ExponentialLR's options.
struct ExponentialLROptions {
  double gamma = 0;  ///< γ, the factor per epoch (>= 0)
};
/// lr·γ every epoch (multiplied step by step, as PyTorch, so not bit-equal to base·γᵏ).
class ExponentialLR : public LRScheduler {
 public:
  /// ValueError for a negative or non-finite gamma.
  ExponentialLR(Optimizer& optimizer, const ExponentialLROptions& options);

 private:
  std::vector<double> get_lr() const override;
  std::vector<double> closed_form_lr() const override;
  ExponentialLROptions options_;
};

/// LinearLR's options.
struct LinearLROptions {
  double start_factor = 1.0 / 3;  ///< in (0, 1]
  double end_factor = 1.0;        ///< in [0, 1]
  int64_t total_iters = 5;        ///< > 0
};
/// Linear warmup (or decay): base·start_factor at epoch 0 to base·end_factor at total_iters, then constant.
class LinearLR : public LRScheduler {
 public:
  /// ValueError for factors outside their ranges or total_iters <= 0.
  LinearLR(Optimizer& optimizer, const LinearLROptions& options = {});

 private:
  std::vector<double> get_lr() const override;
  std::vector<double> closed_form_lr() const override;
  LinearLROptions options_;
};

/// CosineAnnealingLR's options.
struct CosineAnnealingLROptions {
  int64_t T_max = 0;   ///< > 0: epochs from base lr down to eta_min
  double eta_min = 0;  ///< the lowest lr (>= 0)
};
/// eta_min + (base − eta_min)·(1 + cos(π·t/T_max))/2 (Loshchilov & Hutter 2017, without restarts); past
/// T_max the lr rises again. Computed recursively from the current lr, as PyTorch.
class CosineAnnealingLR : public LRScheduler {
 public:
  /// ValueError for T_max <= 0 or a negative eta_min.
  CosineAnnealingLR(Optimizer& optimizer, const CosineAnnealingLROptions& options);

 private:
  std::vector<double> get_lr() const override;
  std::vector<double> closed_form_lr() const override;
  CosineAnnealingLROptions options_;
};

/// lr = base·lr_lambda(epoch) (torch's LambdaLR): one function for every group, or one per group. The
/// functions are not part of state_dict(): construct the scheduler with the same ones before loading.
/// ValueError when the count of functions is neither 1 nor the group count, or one is empty.
class LambdaLR : public LRScheduler {
 public:
  using Lambda = std::function<double(int64_t epoch)>;  ///< the factor of the base lr at an epoch
  /// One function for every group, or one per group; errors as above.
  LambdaLR(Optimizer& optimizer, std::vector<Lambda> lr_lambdas);

 private:
  std::vector<double> get_lr() const override;
  std::vector<Lambda> lr_lambdas_;  // one per group
};

/// MultiStepLR's options.
struct MultiStepLROptions {
  std::vector<int64_t> milestones;  ///< epochs at which lr is multiplied by gamma; a repeated one counts twice
  double gamma = 0.1;               ///< γ, the factor at each milestone (>= 0)
};
/// lr·γ at each milestone epoch (torch's MultiStepLR). ValueError for a negative milestone or gamma.
class MultiStepLR : public LRScheduler {
 public:
  /// ValueError as above.
  MultiStepLR(Optimizer& optimizer, MultiStepLROptions options);

 private:
  std::vector<double> get_lr() const override;
  std::vector<double> closed_form_lr() const override;
  MultiStepLROptions options_;  // milestones sorted
};

/// OneCycleLR's options, torch's names and defaults.
struct OneCycleLROptions {
  std::vector<double> max_lr;   ///< the peak lr: one for every group, or one per group
  int64_t total_steps = 0;      ///< steps in the cycle; 0 = epochs·steps_per_epoch
  int64_t epochs = 0;           ///< with steps_per_epoch, the cycle's length when total_steps is 0
  int64_t steps_per_epoch = 0;  ///< with epochs, the cycle's length when total_steps is 0
  double pct_start = 0.3;       ///< the fraction of the cycle spent raising the lr, in [0, 1]
  /// Cosine or linear annealing between the phases' lrs.
  enum class Anneal { cos, linear };
  Anneal anneal_strategy = Anneal::cos;  ///< how the lr moves between its phases
  /// Cycle the optimizer's "momentum" (SGD) or "betas.0" (Adam) inversely to the lr, between these two
  /// (optimizer-wide: every group shares them here). ValueError when the optimizer has neither.
  bool cycle_momentum = true;
  double base_momentum = 0.85;    ///< the momentum at the peak lr
  double max_momentum = 0.95;     ///< the momentum at the initial and final lrs
  double div_factor = 25;         ///< initial lr = max_lr / div_factor
  double final_div_factor = 1e4;  ///< min lr = initial lr / final_div_factor
  bool three_phase = false;       ///< up, down to the initial lr, then to min lr (the paper's form)
};
/// The 1cycle policy (Smith & Topin 2017, "Super-Convergence"), as torch's OneCycleLR: step() once per
/// batch; the lr rises from max_lr/div_factor to max_lr over pct_start of total_steps, then anneals to
/// min_lr. Stepping more than total_steps times throws ValueError (as torch); the extrapolated lr of the
/// very last allowed step is clamped at 0 where torch's linear anneal would make it negative.
/// ValueError for a bad option (naming it).
class OneCycleLR : public LRScheduler {
 public:
  /// ValueError for a bad option (naming it).
  OneCycleLR(Optimizer& optimizer, const OneCycleLROptions& options);
  void step() override;

 private:
  struct Phase {  // torch's _schedule_phases
    double end_step;
    int start_lr, end_lr;  // indices into group_lrs_[g]: 0 initial, 1 max, 2 min
    int start_m, end_m;    // 0 base_momentum, 1 max_momentum
  };
  std::vector<double> get_lr() const override;
  // (phase index, fraction of it done) at last_epoch_.
  std::pair<size_t, double> position() const;
  double anneal(double start, double end, double pct) const;
  OneCycleLROptions options_;
  std::string momentum_name_;  // "momentum", "betas.0", or empty without cycle_momentum
  std::vector<Phase> phases_;
  std::vector<std::array<double, 3>> group_lrs_;  // per group: initial, max, min
};

/// CosineAnnealingWarmRestarts's options.
struct CosineAnnealingWarmRestartsOptions {
  int64_t T_0 = 0;     ///< > 0: epochs until the first restart
  int64_t T_mult = 1;  ///< >= 1: each period is T_mult times the previous one
  double eta_min = 0;  ///< the lowest lr (>= 0)
};
/// SGDR (Loshchilov & Hutter 2017): eta_min + (base − eta_min)·(1 + cos(π·T_cur/T_i))/2, T_cur restarting
/// at 0 after each period T_i (torch's CosineAnnealingWarmRestarts). step(epoch) takes a fractional epoch,
/// for stepping once per batch (epoch + i/batches). state_dict() adds "T_cur" and "T_i".
class CosineAnnealingWarmRestarts : public LRScheduler {
 public:
  /// ValueError for T_0 <= 0, T_mult < 1 or a negative eta_min.
  CosineAnnealingWarmRestarts(Optimizer& optimizer, const CosineAnnealingWarmRestartsOptions& options);
  void step() override;
  /// Jumps to `epoch` (>= 0, else ValueError).
  void step(double epoch);
  SchedulerState state_dict() const override;
  void load_state_dict(const SchedulerState& state) override;

 private:
  std::vector<double> get_lr() const override;
  CosineAnnealingWarmRestartsOptions options_;
  double T_cur_ = -1;
  int64_t T_i_ = 0;
};

/// Runs `schedulers` one after another, switching at the epochs in `milestones` (one fewer than
/// schedulers, increasing); at a switch the next scheduler restarts from its epoch 0 in closed form.
/// E.g. warmup then cosine: SequentialLR(opt, {warm, cos}, {5}), with warm and cos built on `opt` first.
/// ValueError for a scheduler of another optimizer, a nested SequentialLR or bad milestones.
class SequentialLR : public LRScheduler {
 public:
  /// ValueError as above.
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

/// ReduceLROnPlateau's options, torch's names and defaults.
struct ReduceLROnPlateauOptions {
  /// Which way the metric improves.
  enum class Mode { min, max };
  /// How the threshold applies.
  enum class ThresholdMode { rel, abs };
  Mode mode = Mode::min;    ///< min: lower metric is better (a loss); max: higher is (an accuracy)
  double factor = 0.1;      ///< lr ← max(lr·factor, min_lr); in [0, 1)
  int64_t patience = 10;    ///< epochs without improvement tolerated before reducing
  double threshold = 1e-4;  ///< the least improvement counted (>= 0)
  /// rel: an improvement beats best·(1 ∓ threshold); abs: best ∓ threshold. Any metric beats the initial ±inf
  /// (torch 1.13 compares with inf·0 = NaN at rel threshold 1, and never improves).
  ThresholdMode threshold_mode = ThresholdMode::rel;
  int64_t cooldown = 0;  ///< epochs after a reduction during which bad epochs are not counted
  double min_lr = 0;     ///< the lowest lr (>= 0)
  double eps = 1e-8;     ///< a reduction smaller than this is skipped
};
/// Reduces the lr by `factor` when a metric has stopped improving for more than `patience` epochs
/// (torch.optim.lr_scheduler.ReduceLROnPlateau). step(metric) once per epoch.
class ReduceLROnPlateau {
 public:
  /// ValueError for an option out of its range (naming it).
  explicit ReduceLROnPlateau(Optimizer& optimizer, const ReduceLROnPlateauOptions& options = {});
  /// Takes the epoch's metric; reduces the lrs after `patience` epochs without improvement.
  void step(double metric);
  const std::vector<double>& get_last_lr() const { return last_lr_; }  ///< each group's lr after the last step
  /// "best", "num_bad_epochs", "cooldown_counter", "last_epoch".
  SchedulerState state_dict() const;
  /// Restores state_dict(); ValueError naming a missing or unexpected key.
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
