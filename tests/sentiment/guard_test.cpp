// The numerical guard of the training loop (tg::train::NonFiniteGuard), on a real divergence: a learning rate
// of 1e30 makes the weights overflow within a few steps. By default training stops naming the epoch, the step
// and the value; with OnNonFinite::rollback it goes back to the end of the last epoch with a lower learning
// rate and on with the next batch, up to a cap; detect_anomaly names the op that first produced NaN or inf.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "checkpoint.h"
#include "tiny_run.h"

using namespace sentiment;
using sentiment_test::TempDir;
using sentiment_test::tiny_config;

namespace {

Config absurd_lr(int64_t epochs = 2) {
  Config c = tiny_config(epochs);
  c.train.lr = 1e30, c.train.warmup_epochs = 0, c.train.schedule = Schedule::constant;  // at full strength throughout
  return c;
}

struct TinyData {
  TempDir tmp;
  Data data = prepare_data(sentiment_test::write_tiny_tsv(tmp), tiny_config(), /*seed=*/0);
};
const Data& tiny_data() {
  static TinyData d;
  return d.data;
}

std::string train_error(const Config& config, const TrainOptions& options) {
  try {
    train(config, tiny_data(), options);
  } catch (const tg::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a NaN loss stops training, naming the epoch, the step and the value") {
  TempDir out;
  const std::string error = train_error(absurd_lr(), {.out_dir = out.str(), .verbose = false});
  CAPTURE(error);
  CHECK(error == "train: epoch 1, step 2 (batch 2 of 6, lr 1e+30): NonFiniteGuard: step 2: the loss is nan; stopped "
                 "before applying it; lower the learning rate, or roll back with --on-nonfinite rollback");
}

TEST_CASE("with rollback, a NaN step goes back to the end of the last epoch and training goes on at a lower rate") {
  TempDir out;
  // 1e30 · 1e-33 = 1e-3: one rollback is enough, and the rest of the run is an ordinary one.
  TrainResult r = train(absurd_lr(), tiny_data(), {.out_dir = out.str(), .verbose = false,
                                                   .on_nonfinite = OnNonFinite::rollback, .rollback_factor = 1e-33});
  CHECK(r.rollbacks == 1);
  CHECK(r.lr_scale == 1e-33);
  REQUIRE(r.log.size() == 2);
  for (const EpochLog& e : r.log) CHECK(std::isfinite(e.train_loss));
  CHECK(r.log[1].train_loss < r.log[0].train_loss);
  const RunRecord c = read_record(resume_checkpoint(out.str()));
  CHECK(c.rollbacks == 1);  // a resumed run keeps the lowered rate
  CHECK(c.lr_scale == 1e-33);
  CHECK(c.step == 2 * 6 - 2);  // neither the NaN step nor the one before it, whose weights went back with it
}

TEST_CASE("rollbacks are capped: past max_rollbacks training stops with an error") {
  TempDir out;
  const std::string error = train_error(absurd_lr(), {.out_dir = out.str(), .verbose = false,
                                                      .on_nonfinite = OnNonFinite::rollback, .max_rollbacks = 2});
  CAPTURE(error);
  // Each rollback goes back to step 0 and on with the next batch: steps 1 and 2 again on batches 3 and 4, 5 and 6.
  CHECK(error == "train: epoch 1, step 2 (batch 6 of 6, lr 2.5e+29): NonFiniteGuard: step 6: the loss is nan; stopped: "
                 "all 2 rollbacks used (learning rate scaled by 0.25); lower the learning rate");
}

TEST_CASE("detect_anomaly names the op whose output first holds NaN or inf, and where in training") {
  TempDir out;
  std::string error;
  try {
    train(absurd_lr(), tiny_data(), {.out_dir = out.str(), .verbose = false, .detect_anomaly = true});
  } catch (const tg::ValueError& e) {
    error = e.what();
  }
  CAPTURE(error);
  CHECK(error.find("train: epoch 1, step 2 (batch 2 of 6, lr 1e+30): anomaly: forward of linear produced NaN or inf") !=
        std::string::npos);
  CHECK_FALSE(tg::anomaly_mode_enabled());  // the guard ends with train
}
