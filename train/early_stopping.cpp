// Early stopping: the best metric so far and the count of evaluations since it.
#include "train/early_stopping.h"

#include "core/error.h"

namespace tg::train {

EarlyStopping::EarlyStopping(const EarlyStoppingOptions& options) : options_(options), best_(worst(options.mode)) {
  check<ValueError>(options.patience >= 0, "EarlyStopping: patience must be >= 0, got {}", options.patience);
  check<ValueError>(std::isfinite(options.min_delta) && options.min_delta >= 0, "EarlyStopping: min_delta must be "
                    "finite and >= 0, got {}", options.min_delta);
}

bool EarlyStopping::step(double metric) {
  ++steps_;
  if (improves(options_.mode, metric, best_, options_.min_delta))
    best_ = metric, best_step_ = steps_, num_bad_ = 0;
  else
    ++num_bad_;
  return should_stop();
}

std::map<std::string, double> EarlyStopping::state_dict() const {
  return {{"best", best_}, {"best_step", double(best_step_)}, {"num_bad", double(num_bad_)}, {"steps", double(steps_)}};
}

void EarlyStopping::load_state_dict(const std::map<std::string, double>& state) {
  for (const char* key : {"best", "best_step", "num_bad", "steps"})
    check<ValueError>(state.count(key) > 0, "EarlyStopping: the state has no '{}'", key);
  best_ = state.at("best"), best_step_ = int64_t(state.at("best_step"));
  num_bad_ = int64_t(state.at("num_bad")), steps_ = int64_t(state.at("steps"));
}

}  // namespace tg::train
