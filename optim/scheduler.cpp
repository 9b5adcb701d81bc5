// LR schedules, transcribed from torch 1.13's lr_scheduler.py. Each get_lr() is the recursive form torch's
// step() uses (the next lr from the current one), with torch's operation order so the sequences agree to
// rounding; closed_form_lr() is torch's _get_closed_form_lr, used when SequentialLR restarts a schedule.
#include "optim/scheduler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

#include "core/error.h"

namespace tg::optim {
namespace {

constexpr double kPi = std::numbers::pi;

double get_key(const SchedulerState& state, const std::string& op, const std::string& key) {
  auto it = state.find(key);
  check<ValueError>(it != state.end(), "{}.load_state_dict: the state has no '{}'", op, key);
  return it->second;
}

// ValueError naming the first key of `state` that is not in `expected`.
void check_keys(const SchedulerState& state, const SchedulerState& expected, const std::string& op) {
  for (const auto& [key, _] : state)
    check<ValueError>(expected.count(key) > 0, "{}.load_state_dict: unexpected key '{}'", op, key);
}

}  // namespace

// ---- LRScheduler ----

LRScheduler::LRScheduler(std::string name, Optimizer& optimizer) : name_(std::move(name)), optimizer_(optimizer) {
  for (ParamGroup& g : optimizer_.groups_) {
    if (!g.initial_lr) g.initial_lr = *g.lr;
    base_lrs_.push_back(*g.initial_lr);
  }
  last_lr_ = group_lrs();
}

void LRScheduler::initial_step() {
  last_epoch_ = -1;
  step();
}

std::vector<double> LRScheduler::group_lrs() const {
  std::vector<double> lrs;
  for (size_t g = 0; g < optimizer_.param_groups().size(); ++g) lrs.push_back(optimizer_.lr(g));
  return lrs;
}

void LRScheduler::set_lrs(const std::vector<double>& lrs) {
  for (size_t g = 0; g < lrs.size(); ++g) optimizer_.set_lr(g, lrs[g]);
  last_lr_ = lrs;
}

void LRScheduler::set_base_lr(size_t group, double lr) {
  optimizer_.groups_[group].initial_lr = lr;
  base_lrs_[group] = lr;
}

void LRScheduler::step() {
  ++last_epoch_;
  set_lrs(get_lr());
}

void LRScheduler::step_to(int64_t epoch) {
  last_epoch_ = epoch;
  set_lrs(closed_form_lr());
}

SchedulerState LRScheduler::state_dict() const {
  SchedulerState s{{"last_epoch", double(last_epoch_)}};
  for (size_t g = 0; g < base_lrs_.size(); ++g) {
    s[fmt::format("base_lr.{}", g)] = base_lrs_[g];
    s[fmt::format("last_lr.{}", g)] = last_lr_[g];
  }
  return s;
}

void LRScheduler::load_state_dict(const SchedulerState& state) {
  check_keys(state, state_dict(), name_);
  std::vector<double> base(base_lrs_.size()), last(last_lr_.size());
  for (size_t g = 0; g < base.size(); ++g) {
    base[g] = get_key(state, name_, fmt::format("base_lr.{}", g));
    last[g] = get_key(state, name_, fmt::format("last_lr.{}", g));
  }
  last_epoch_ = int64_t(get_key(state, name_, "last_epoch"));
  base_lrs_ = std::move(base);
  last_lr_ = std::move(last);
}

// ---- StepLR, ExponentialLR ----

StepLR::StepLR(Optimizer& optimizer, const StepLROptions& options)
    : LRScheduler("StepLR", optimizer), options_(options) {
  check<ValueError>(options.step_size > 0, "StepLR: invalid step_size: {} (expected > 0)", options.step_size);
  check<ValueError>(std::isfinite(options.gamma) && options.gamma >= 0, "StepLR: invalid gamma: {}", options.gamma);
  initial_step();
}
std::vector<double> StepLR::get_lr() const {
  std::vector<double> lrs = group_lrs();
  if (last_epoch_ == 0 || last_epoch_ % options_.step_size != 0) return lrs;
  for (double& lr : lrs) lr *= options_.gamma;
  return lrs;
}
std::vector<double> StepLR::closed_form_lr() const {
  std::vector<double> lrs;
  const double k = double(last_epoch_ / options_.step_size);
  for (double base : base_lrs_) lrs.push_back(base * std::pow(options_.gamma, k));
  return lrs;
}

ExponentialLR::ExponentialLR(Optimizer& optimizer, const ExponentialLROptions& options)
    : LRScheduler("ExponentialLR", optimizer), options_(options) {
  check<ValueError>(std::isfinite(options.gamma) && options.gamma >= 0, "ExponentialLR: invalid gamma: {}",
                    options.gamma);
  initial_step();
}
std::vector<double> ExponentialLR::get_lr() const {
  std::vector<double> lrs = group_lrs();
  if (last_epoch_ == 0) return lrs;
  for (double& lr : lrs) lr *= options_.gamma;
  return lrs;
}
std::vector<double> ExponentialLR::closed_form_lr() const {
  std::vector<double> lrs;
  for (double base : base_lrs_) lrs.push_back(base * std::pow(options_.gamma, double(last_epoch_)));
  return lrs;
}

// ---- LambdaLR, MultiStepLR ----

LambdaLR::LambdaLR(Optimizer& optimizer, std::vector<Lambda> lr_lambdas)
    : LRScheduler("LambdaLR", optimizer), lr_lambdas_(std::move(lr_lambdas)) {
  const size_t groups = base_lrs_.size();
  check<ValueError>(lr_lambdas_.size() == 1 || lr_lambdas_.size() == groups,
                    "LambdaLR: expected 1 or {} lr_lambdas (one per group), got {}", groups, lr_lambdas_.size());
  for (const Lambda& f : lr_lambdas_) check<ValueError>(bool(f), "LambdaLR: an lr_lambda is empty");
  if (lr_lambdas_.size() == 1) lr_lambdas_.resize(groups, lr_lambdas_[0]);
  initial_step();
}
std::vector<double> LambdaLR::get_lr() const {
  std::vector<double> lrs;
  for (size_t g = 0; g < base_lrs_.size(); ++g) lrs.push_back(base_lrs_[g] * lr_lambdas_[g](last_epoch_));
  return lrs;
}

MultiStepLR::MultiStepLR(Optimizer& optimizer, MultiStepLROptions options)
    : LRScheduler("MultiStepLR", optimizer), options_(std::move(options)) {
  std::sort(options_.milestones.begin(), options_.milestones.end());
  for (int64_t m : options_.milestones)
    check<ValueError>(m >= 0, "MultiStepLR: invalid milestone: {} (expected >= 0)", m);
  check<ValueError>(std::isfinite(options_.gamma) && options_.gamma >= 0, "MultiStepLR: invalid gamma: {}",
                    options_.gamma);
  initial_step();
}
std::vector<double> MultiStepLR::get_lr() const {
  const auto& m = options_.milestones;
  const auto hits = std::count(m.begin(), m.end(), last_epoch_);
  std::vector<double> lrs = group_lrs();
  if (hits == 0) return lrs;
  for (double& lr : lrs) lr *= std::pow(options_.gamma, double(hits));
  return lrs;
}
std::vector<double> MultiStepLR::closed_form_lr() const {
  const auto& m = options_.milestones;
  const double passed = double(std::upper_bound(m.begin(), m.end(), last_epoch_) - m.begin());
  std::vector<double> lrs;
  for (double base : base_lrs_) lrs.push_back(base * std::pow(options_.gamma, passed));
  return lrs;
}

// ---- LinearLR ----

LinearLR::LinearLR(Optimizer& optimizer, const LinearLROptions& options)
    : LRScheduler("LinearLR", optimizer), options_(options) {
  check<ValueError>(options.start_factor > 0 && options.start_factor <= 1,
                    "LinearLR: invalid start_factor: {} (expected in (0, 1])", options.start_factor);
  check<ValueError>(options.end_factor >= 0 && options.end_factor <= 1,
                    "LinearLR: invalid end_factor: {} (expected in [0, 1])", options.end_factor);
  check<ValueError>(options.total_iters > 0, "LinearLR: invalid total_iters: {} (expected > 0)", options.total_iters);
  initial_step();
}
std::vector<double> LinearLR::get_lr() const {
  const double s = options_.start_factor, e = options_.end_factor, n = double(options_.total_iters);
  std::vector<double> lrs = group_lrs();
  if (last_epoch_ == 0) {
    for (double& lr : lrs) lr *= s;
  } else if (last_epoch_ <= options_.total_iters) {  // factor(t) / factor(t-1), factor(t) = s + (e - s)·t/n
    for (double& lr : lrs) lr *= 1. + (e - s) / (n * s + double(last_epoch_ - 1) * (e - s));
  }
  return lrs;
}
std::vector<double> LinearLR::closed_form_lr() const {
  const double s = options_.start_factor, e = options_.end_factor, n = double(options_.total_iters);
  std::vector<double> lrs;
  for (double base : base_lrs_)
    lrs.push_back(base * (s + (e - s) * double(std::min(options_.total_iters, last_epoch_)) / n));
  return lrs;
}

// ---- CosineAnnealingLR ----

CosineAnnealingLR::CosineAnnealingLR(Optimizer& optimizer, const CosineAnnealingLROptions& options)
    : LRScheduler("CosineAnnealingLR", optimizer), options_(options) {
  check<ValueError>(options.T_max > 0, "CosineAnnealingLR: invalid T_max: {} (expected > 0)", options.T_max);
  check<ValueError>(std::isfinite(options.eta_min) && options.eta_min >= 0, "CosineAnnealingLR: invalid eta_min: {}",
                    options.eta_min);
  initial_step();
}
std::vector<double> CosineAnnealingLR::get_lr() const {
  const double t = double(last_epoch_), T = double(options_.T_max), eta_min = options_.eta_min;
  std::vector<double> lrs = group_lrs();
  if (last_epoch_ == 0) return lrs;
  for (size_t g = 0; g < lrs.size(); ++g) {
    if ((last_epoch_ - 1 - options_.T_max) % (2 * options_.T_max) == 0)  // just past a minimum: the ratio is 0/0
      lrs[g] = lrs[g] + (base_lrs_[g] - eta_min) * (1 - std::cos(kPi / T)) / 2;
    else  // lr_t - η = (lr_{t-1} - η)·(1 + cos(πt/T)) / (1 + cos(π(t-1)/T))
      lrs[g] = (1 + std::cos(kPi * t / T)) / (1 + std::cos(kPi * (t - 1) / T)) * (lrs[g] - eta_min) + eta_min;
  }
  return lrs;
}
std::vector<double> CosineAnnealingLR::closed_form_lr() const {
  const double t = double(last_epoch_), T = double(options_.T_max), eta_min = options_.eta_min;
  std::vector<double> lrs;
  for (double base : base_lrs_) lrs.push_back(eta_min + (base - eta_min) * (1 + std::cos(kPi * t / T)) / 2);
  return lrs;
}

// ---- SequentialLR ----

SequentialLR::SequentialLR(Optimizer& optimizer, std::vector<std::shared_ptr<LRScheduler>> schedulers,
                           std::vector<int64_t> milestones)
    : LRScheduler("SequentialLR", optimizer), schedulers_(std::move(schedulers)), milestones_(std::move(milestones)) {
  check<ValueError>(!schedulers_.empty() && milestones_.size() == schedulers_.size() - 1,
                    "SequentialLR: expected one milestone fewer than schedulers: {} schedulers vs {} milestones",
                    schedulers_.size(), milestones_.size());
  for (size_t k = 0; k < schedulers_.size(); ++k) {
    check<ValueError>(schedulers_[k] && &schedulers_[k]->optimizer_ == &optimizer,
                      "SequentialLR: scheduler {} is null or belongs to another optimizer", k);
    check<ValueError>(dynamic_cast<SequentialLR*>(schedulers_[k].get()) == nullptr,
                      "SequentialLR: scheduler {} is a SequentialLR; nesting is not supported", k);
  }
  for (size_t k = 0; k < milestones_.size(); ++k)
    check<ValueError>(milestones_[k] > (k == 0 ? 0 : milestones_[k - 1]),
                      "SequentialLR: milestones must be positive and increasing: milestone {} is {}", k,
                      milestones_[k]);
  // As torch: back to the initial lrs, undo the children's construction step, and start the first one.
  for (size_t g = 0; g < base_lrs_.size(); ++g) optimizer_.set_lr(g, base_lrs_[g]);
  for (auto& s : schedulers_) --s->last_epoch_;
  schedulers_[0]->initial_step();
  last_epoch_ = 0;
  last_lr_ = schedulers_[0]->last_lr_;
}

void SequentialLR::step() {
  ++last_epoch_;
  const size_t k = std::upper_bound(milestones_.begin(), milestones_.end(), last_epoch_) - milestones_.begin();
  LRScheduler& s = *schedulers_[k];
  if (k > 0 && milestones_[k - 1] == last_epoch_) s.step_to(0);  // restart the next schedule at its epoch 0
  else s.step();
  last_lr_ = s.last_lr_;
}

SchedulerState SequentialLR::state_dict() const {
  SchedulerState s = LRScheduler::state_dict();
  for (size_t k = 0; k < schedulers_.size(); ++k)
    for (const auto& [key, value] : schedulers_[k]->state_dict()) s[fmt::format("scheduler.{}.{}", k, key)] = value;
  return s;
}

void SequentialLR::load_state_dict(const SchedulerState& state) {
  check_keys(state, state_dict(), name_);
  std::vector<SchedulerState> parts(schedulers_.size() + 1);  // the children's, then our own
  for (const auto& [key, value] : state) {
    size_t k = schedulers_.size();
    for (size_t j = 0; j < schedulers_.size(); ++j) {
      const std::string prefix = fmt::format("scheduler.{}.", j);
      if (key.rfind(prefix, 0) == 0) parts[k = j][key.substr(prefix.size())] = value;
    }
    if (k == schedulers_.size()) parts[k][key] = value;
  }
  for (size_t k = 0; k < schedulers_.size(); ++k) schedulers_[k]->load_state_dict(parts[k]);
  LRScheduler::load_state_dict(parts.back());
}

// ---- ReduceLROnPlateau ----

ReduceLROnPlateau::ReduceLROnPlateau(Optimizer& optimizer, const ReduceLROnPlateauOptions& options)
    : optimizer_(optimizer), options_(options) {
  const auto& o = options;
  check<ValueError>(o.factor >= 0 && o.factor < 1, "ReduceLROnPlateau: invalid factor: {} (expected in [0, 1))",
                    o.factor);
  check<ValueError>(o.patience >= 0, "ReduceLROnPlateau: invalid patience: {} (expected >= 0)", o.patience);
  check<ValueError>(o.cooldown >= 0, "ReduceLROnPlateau: invalid cooldown: {} (expected >= 0)", o.cooldown);
  check<ValueError>(std::isfinite(o.threshold) && o.threshold >= 0, "ReduceLROnPlateau: invalid threshold: {}",
                    o.threshold);
  check<ValueError>(std::isfinite(o.min_lr) && o.min_lr >= 0, "ReduceLROnPlateau: invalid min_lr: {}", o.min_lr);
  check<ValueError>(std::isfinite(o.eps) && o.eps >= 0, "ReduceLROnPlateau: invalid eps: {}", o.eps);
  const double inf = std::numeric_limits<double>::infinity();
  best_ = o.mode == ReduceLROnPlateauOptions::Mode::min ? inf : -inf;
  for (size_t g = 0; g < optimizer_.param_groups().size(); ++g) last_lr_.push_back(optimizer_.lr(g));
}

bool ReduceLROnPlateau::is_better(double a) const {
  using O = ReduceLROnPlateauOptions;
  const bool rel = options_.threshold_mode == O::ThresholdMode::rel;
  const double t = options_.threshold;
  // Before the first metric best_ is ±inf, and rel with threshold 1 would compare with inf·0 = NaN (never
  // better, as torch 1.13): any metric beats ±inf.
  if (std::isinf(best_)) return options_.mode == O::Mode::min ? a < best_ : a > best_;
  if (options_.mode == O::Mode::min) return rel ? a < best_ * (1. - t) : a < best_ - t;
  return rel ? a > best_ * (t + 1.) : a > best_ + t;
}

void ReduceLROnPlateau::step(double metric) {
  ++last_epoch_;
  if (is_better(metric)) {
    best_ = metric;
    num_bad_epochs_ = 0;
  } else {
    ++num_bad_epochs_;
  }
  if (cooldown_counter_ > 0) {  // in cooldown: bad epochs do not count
    --cooldown_counter_;
    num_bad_epochs_ = 0;
  }
  if (num_bad_epochs_ > options_.patience) {
    for (size_t g = 0; g < optimizer_.param_groups().size(); ++g) {
      const double old_lr = optimizer_.lr(g), new_lr = std::max(old_lr * options_.factor, options_.min_lr);
      if (old_lr - new_lr > options_.eps) optimizer_.set_lr(g, new_lr);
    }
    cooldown_counter_ = options_.cooldown;
    num_bad_epochs_ = 0;
  }
  last_lr_.clear();
  for (size_t g = 0; g < optimizer_.param_groups().size(); ++g) last_lr_.push_back(optimizer_.lr(g));
}

SchedulerState ReduceLROnPlateau::state_dict() const {
  return {{"best", best_},
          {"num_bad_epochs", double(num_bad_epochs_)},
          {"cooldown_counter", double(cooldown_counter_)},
          {"last_epoch", double(last_epoch_)}};
}

void ReduceLROnPlateau::load_state_dict(const SchedulerState& state) {
  const std::string op = "ReduceLROnPlateau";
  check_keys(state, state_dict(), op);
  const double best = get_key(state, op, "best"), bad = get_key(state, op, "num_bad_epochs"),
               cooldown = get_key(state, op, "cooldown_counter"), epoch = get_key(state, op, "last_epoch");
  best_ = best;
  num_bad_epochs_ = int64_t(bad);
  cooldown_counter_ = int64_t(cooldown);
  last_epoch_ = int64_t(epoch);
  last_lr_.clear();
  for (size_t g = 0; g < optimizer_.param_groups().size(); ++g) last_lr_.push_back(optimizer_.lr(g));
}

}  // namespace tg::optim
