// Early stopping: improvements beyond min_delta reset the count; `patience` evaluations without one stop.
#include <doctest/doctest.h>

#include <cmath>

#include "core/error.h"
#include "train/early_stopping.h"

using namespace tg;
using namespace tg::train;

TEST_CASE("early stopping counts evaluations without an improvement beyond min_delta") {
  EarlyStopping es({.patience = 2, .min_delta = 0.1, .mode = Mode::min});
  CHECK_FALSE(es.step(1.0));
  CHECK_FALSE(es.step(0.95));  // better, but not by more than 0.1
  CHECK(es.num_bad() == 1);
  CHECK_FALSE(es.step(0.85));  // 0.15 better than 1.0: the count restarts
  CHECK(es.num_bad() == 0);
  CHECK_FALSE(es.step(NAN));   // NaN never improves
  CHECK(es.step(0.84));        // the second in a row without improvement
  CHECK(es.best() == 0.85);
  CHECK(es.best_step() == 3);
}

TEST_CASE("early stopping in max mode, with patience 0, and its state round trip") {
  EarlyStopping es({.patience = 0, .mode = Mode::max});
  CHECK_FALSE(es.step(0.5));
  CHECK(es.step(0.5));  // patience 0: the first evaluation without improvement stops
  EarlyStopping copy({.patience = 0, .mode = Mode::max});
  copy.load_state_dict(es.state_dict());
  CHECK(copy.should_stop());
  CHECK(copy.best() == 0.5);
  CHECK_THROWS_WITH_AS(copy.load_state_dict({}), "EarlyStopping: the state has no 'best'", ValueError);
  CHECK_THROWS_WITH_AS(EarlyStopping({.patience = -1}), "EarlyStopping: patience must be >= 0, got -1", ValueError);
  CHECK_THROWS_AS(EarlyStopping({.min_delta = -0.1}), ValueError);
}
