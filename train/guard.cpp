// The non-finite guard. A rollback lowers the learning rate where each part keeps it: the optimizer's
// group lrs (and the initial_lr a scheduler started from), and the schedulers' base and last lrs, which
// their recursive formulas scale from. All through the parts' state dicts, so any scheduler is covered.
#include "train/guard.h"

#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "core/error.h"
#include "core/ops.h"

namespace tg::train {
namespace {

bool is_lr_key(const std::string& key) {
  return key.find("base_lr.") != std::string::npos || key.find("last_lr.") != std::string::npos ||
         (key.starts_with("group.") && (key.ends_with(".lr") || key.ends_with(".initial_lr")));
}

}  // namespace

NonFiniteGuard::NonFiniteGuard(TrainingState state, const NonFiniteGuardOptions& options)
    : state_(std::move(state)), options_(options) {
  tg::check<ValueError>(options.factor > 0 && options.factor < 1, "NonFiniteGuard: factor must be in (0, 1), got {}",
                    options.factor);
  tg::check<ValueError>(options.max_rollbacks >= 0, "NonFiniteGuard: max_rollbacks must be >= 0, got {}",
                    options.max_rollbacks);
  tg::check<ValueError>(state_.model && state_.optimizer, "NonFiniteGuard: the state needs a model and an optimizer");
  state_.loader = nullptr;  // the loop keeps its place in the data
  commit();
}

void NonFiniteGuard::commit() {
  good_ = capture(state_, true);
  since_commit_ = 1;
}

std::string NonFiniteGuard::nonfinite(double loss) const {
  if (!std::isfinite(loss)) return fmt::format("the loss is {}", std::isnan(loss) ? "nan" : loss > 0 ? "inf" : "-inf");
  for (const auto& [name, p] : state_.model->named_parameters())
    if (p.grad().defined() && !all_finite(p.grad())) return fmt::format("the gradient of {} has NaN or inf", name);
  return "";
}

bool NonFiniteGuard::check(double loss) {
  ++checks_;
  const std::string bad = nonfinite(loss);
  if (bad.empty()) return true;
  tg::check<Error>(options_.action == OnNonFinite::rollback, "NonFiniteGuard: step {}: {}; stopped before applying it",
                   checks_, bad);
  tg::check<Error>(rollbacks_ < options_.max_rollbacks, "NonFiniteGuard: step {}: {}; stopped: all {} rollbacks used "
                   "(learning rate scaled by {:.6g})", checks_, bad, options_.max_rollbacks, lr_scale_);
  roll_back();
  return false;
}

void NonFiniteGuard::roll_back() {
  ++rollbacks_, lr_scale_ *= options_.factor, since_commit_ *= options_.factor;
  Safetensors lowered = good_;
  for (auto& [key, value] : lowered.metadata)
    if ((key.starts_with("optim.") || key.starts_with("scheduler.")) && is_lr_key(key.substr(key.find('.') + 1)))
      value = fmt::format("{}", std::strtod(value.c_str(), nullptr) * since_commit_);
  restore(state_, lowered, "NonFiniteGuard");
  state_.optimizer->zero_grad();
  state_.model->zero_grad();
}

}  // namespace tg::train
