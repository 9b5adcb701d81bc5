// The schedules that cycle or restart, transcribed from torch 1.13's lr_scheduler.py: OneCycleLR (which also
// cycles the optimizer's momentum) and CosineAnnealingWarmRestarts. Both compute each lr in closed form
// from the step count, as torch does, with torch's operation order.
#include "optim/scheduler.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "core/error.h"

namespace tg::optim {

// ---- OneCycleLR ----

namespace {

// Options checked as torch's constructor does, each naming the bad value.
void check_one_cycle(const OneCycleLROptions& o, size_t groups) {
  check<ValueError>(o.total_steps > 0 || (o.epochs > 0 && o.steps_per_epoch > 0),
                    "OneCycleLR: expected total_steps > 0, or epochs > 0 and steps_per_epoch > 0; got {}, {} and {}",
                    o.total_steps, o.epochs, o.steps_per_epoch);
  check<ValueError>(o.total_steps >= 0, "OneCycleLR: invalid total_steps: {}", o.total_steps);
  check<ValueError>(o.pct_start >= 0 && o.pct_start <= 1, "OneCycleLR: invalid pct_start: {} (expected in [0, 1])",
                    o.pct_start);
  check<ValueError>(o.max_lr.size() == 1 || o.max_lr.size() == groups,
                    "OneCycleLR: expected 1 or {} max_lr values (one per group), got {}", groups, o.max_lr.size());
  for (double lr : o.max_lr) check<ValueError>(std::isfinite(lr) && lr >= 0, "OneCycleLR: invalid max_lr: {}", lr);
  check<ValueError>(std::isfinite(o.div_factor) && o.div_factor > 0, "OneCycleLR: invalid div_factor: {}",
                    o.div_factor);
  check<ValueError>(std::isfinite(o.final_div_factor) && o.final_div_factor > 0,
                    "OneCycleLR: invalid final_div_factor: {}", o.final_div_factor);
}

// The optimizer option that momentum cycling drives: SGD's "momentum", Adam's "betas.0".
std::string momentum_option(const Optimizer& optimizer) {
  for (const char* name : {"momentum", "betas.0"})
    if (optimizer.option(name)) return name;
  throw ValueError(
      "OneCycleLR: cycle_momentum needs an optimizer with 'momentum' or 'betas' (pass "
      "cycle_momentum = false)");
}

}  // namespace

OneCycleLR::OneCycleLR(Optimizer& optimizer, const OneCycleLROptions& options)
    : LRScheduler("OneCycleLR", optimizer), options_(options) {
  check_one_cycle(options_, base_lrs_.size());
  if (options_.total_steps == 0) options_.total_steps = options_.epochs * options_.steps_per_epoch;
  const double total = double(options_.total_steps), pct = options_.pct_start;
  enum { initial, max, min, base_m = 0, max_m = 1 };
  if (options_.three_phase)
    phases_ = {{pct * total - 1, initial, max, max_m, base_m},
               {2 * pct * total - 2, max, initial, base_m, max_m},
               {total - 1, initial, min, max_m, max_m}};
  else
    phases_ = {{pct * total - 1, initial, max, max_m, base_m}, {total - 1, max, min, base_m, max_m}};
  for (size_t g = 0; g < base_lrs_.size(); ++g) {
    const double max_lr = options_.max_lr[options_.max_lr.size() == 1 ? 0 : g], first = max_lr / options_.div_factor;
    group_lrs_.push_back({first, max_lr, first / options_.final_div_factor});
    set_base_lr(g, first);
  }
  if (options_.cycle_momentum) {
    momentum_name_ = momentum_option(optimizer);
    optimizer.set_option(momentum_name_, options_.max_momentum);
  }
  initial_step();
}

std::pair<size_t, double> OneCycleLR::position() const {
  const double step = double(last_epoch_);
  double start = 0;
  for (size_t i = 0; i < phases_.size(); ++i) {
    const double end = phases_[i].end_step;
    if (step <= end || i + 1 == phases_.size()) return {i, (step - start) / (end - start)};
    start = end;
  }
  return {0, 0};  // unreachable: the last phase always matches
}

double OneCycleLR::anneal(double start, double end, double pct) const {
  if (options_.anneal_strategy == OneCycleLROptions::Anneal::linear) return (end - start) * pct + start;
  return end + (start - end) / 2.0 * (std::cos(std::numbers::pi * pct) + 1);
}

std::vector<double> OneCycleLR::get_lr() const {
  const auto [i, pct] = position();
  std::vector<double> lrs;
  for (const auto& g : group_lrs_)  // 0 only where torch extrapolates past the end to a negative lr
    lrs.push_back(std::max(0.0, anneal(g[phases_[i].start_lr], g[phases_[i].end_lr], pct)));
  return lrs;
}

void OneCycleLR::step() {
  check<ValueError>(last_epoch_ + 1 <= options_.total_steps,
                    "OneCycleLR: tried to step {} times; the cycle has total_steps {}", last_epoch_ + 2,
                    options_.total_steps);
  LRScheduler::step();
  if (momentum_name_.empty()) return;
  const auto [i, pct] = position();
  const double momenta[2] = {options_.base_momentum, options_.max_momentum};
  optimizer_.set_option(momentum_name_, anneal(momenta[phases_[i].start_m], momenta[phases_[i].end_m], pct));
}

// ---- CosineAnnealingWarmRestarts ----

CosineAnnealingWarmRestarts::CosineAnnealingWarmRestarts(Optimizer& optimizer,
                                                         const CosineAnnealingWarmRestartsOptions& options)
    : LRScheduler("CosineAnnealingWarmRestarts", optimizer), options_(options), T_i_(options.T_0) {
  check<ValueError>(options.T_0 > 0, "CosineAnnealingWarmRestarts: invalid T_0: {} (expected > 0)", options.T_0);
  check<ValueError>(options.T_mult >= 1, "CosineAnnealingWarmRestarts: invalid T_mult: {} (expected >= 1)",
                    options.T_mult);
  check<ValueError>(std::isfinite(options.eta_min) && options.eta_min >= 0,
                    "CosineAnnealingWarmRestarts: invalid eta_min: {}", options.eta_min);
  initial_step();
}

std::vector<double> CosineAnnealingWarmRestarts::get_lr() const {
  const double eta_min = options_.eta_min;
  std::vector<double> lrs;
  for (double base : base_lrs_)
    lrs.push_back(eta_min + (base - eta_min) * (1 + std::cos(std::numbers::pi * T_cur_ / double(T_i_))) / 2);
  return lrs;
}

void CosineAnnealingWarmRestarts::step() {
  if (last_epoch_ < 0) return step(0.0);
  T_cur_ += 1;
  if (T_cur_ >= double(T_i_)) {  // a restart: the next period is T_mult times longer
    T_cur_ -= double(T_i_);
    T_i_ *= options_.T_mult;
  }
  ++last_epoch_;
  set_lrs(get_lr());
}

// The period holding `epoch`: with T_mult = m > 1 the n-th restart is at T_0·(mⁿ − 1)/(m − 1).
void CosineAnnealingWarmRestarts::step(double epoch) {
  check<ValueError>(epoch >= 0, "CosineAnnealingWarmRestarts: invalid epoch: {} (expected >= 0)", epoch);
  const double T_0 = double(options_.T_0), m = double(options_.T_mult);
  if (epoch < T_0) {
    T_i_ = options_.T_0;
    T_cur_ = epoch;
  } else if (options_.T_mult == 1) {
    T_cur_ = std::fmod(epoch, T_0);
  } else {
    const int n = int(std::log(epoch / T_0 * (m - 1) + 1) / std::log(m));
    T_cur_ = epoch - T_0 * (std::pow(m, n) - 1) / (m - 1);
    T_i_ = options_.T_0 * int64_t(std::pow(m, n));
  }
  last_epoch_ = int64_t(std::floor(epoch));
  set_lrs(get_lr());
}

SchedulerState CosineAnnealingWarmRestarts::state_dict() const {
  SchedulerState s = LRScheduler::state_dict();
  s["T_cur"] = T_cur_;
  s["T_i"] = double(T_i_);
  return s;
}

void CosineAnnealingWarmRestarts::load_state_dict(const SchedulerState& state) {
  SchedulerState base = state;
  const auto t_cur = base.find("T_cur"), t_i = base.find("T_i");
  check<ValueError>(t_cur != base.end() && t_i != base.end(),
                    "CosineAnnealingWarmRestarts.load_state_dict: the state has no 'T_cur' or 'T_i'");
  const double cur = t_cur->second, period = t_i->second;
  base.erase("T_cur");
  base.erase("T_i");
  LRScheduler::load_state_dict(base);
  T_cur_ = cur;
  T_i_ = int64_t(period);
}

}  // namespace tg::optim
