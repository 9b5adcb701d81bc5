// The run's record in a checkpoint: written through the library's CheckpointManager, it reads back
// bit-exact; a file that is not a sentiment checkpoint is refused naming it; resume finds the newest
// checkpoint-<epoch>.safetensors and refuses the old format's checkpoint.safetensors with a clear error.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "checkpoint.h"
#include "temp_dir.h"

using namespace sentiment;
using sentiment_test::TempDir;
namespace fs = std::filesystem;

namespace {

RunRecord sample_record(int64_t epoch) {
  RunRecord r;
  r.config = {{"name", "sample"}};
  r.seed = ~uint64_t(0);  // the largest seed survives
  r.data_fingerprint = "0123456789abcdef";
  r.data_path = "/data/sentences.tsv";
  r.epoch = epoch, r.step = 6 * epoch, r.lr_scale = 0.1 * 0.1 * 0.1, r.rollbacks = 3;  // not a short decimal
  for (uint64_t k = 0; k < 12; ++k) r.member_rngs.push_back(tg::Generator(10 + k).get_state());  // past 2 digits
  r.log = {{1, 0.6931471805599453, 0.5, NAN, 1e-3 / 3, 0.25, 384}};
  return r;
}

// Saves `r` as the library does in `dir` (a state of no parts: the record is all that is read here).
std::string save(const std::string& dir, const RunRecord& r) {
  return tg::train::CheckpointManager({}, {.dir = dir}).save(r.epoch, NAN, record_metadata(r));
}

}  // namespace

TEST_CASE("a run's record reads back bit-exact from its checkpoint-<epoch>.safetensors") {
  TempDir tmp;
  const RunRecord c = sample_record(2);
  const std::string path = save(tmp.str(), c);
  CHECK(path == (tmp.path / "checkpoint-2.safetensors").string());
  const RunRecord r = read_record(path);
  CHECK(r.path == path);
  CHECK(r.config == c.config);
  CHECK(r.seed == c.seed);
  CHECK(r.data_fingerprint == c.data_fingerprint);
  CHECK(r.data_path == "/data/sentences.tsv");
  CHECK(r.epoch == 2);
  CHECK(r.step == 12);
  CHECK(r.lr_scale == c.lr_scale);
  CHECK(r.rollbacks == 3);
  CHECK(r.member_rngs == c.member_rngs);
  REQUIRE(r.log.size() == 1);
  CHECK(r.log[0].train_loss == c.log[0].train_loss);
  CHECK(r.log[0].lr == c.log[0].lr);
  CHECK(std::isnan(r.log[0].val_accuracy));
  CHECK(resume_checkpoint(tmp.str()) == path);
  CHECK(recorded_data_path(tmp.str()) == "/data/sentences.tsv");
}

TEST_CASE("read_record refuses a model file and a missing file, naming the path") {
  TempDir tmp;
  const std::string model = (tmp.path / "model.safetensors").string();
  tg::save_safetensors(model, {{"w", tg::zeros({2})}}, {{"format", "tensorgrad"}});
  CHECK_THROWS_WITH_AS(read_record(model), ("checkpoint " + model + ": no 'user.config' (not a sentiment checkpoint?)").c_str(),
                       tg::ValueError);
  CHECK_THROWS_AS(read_record((tmp.path / "none").string()), tg::ValueError);
}

TEST_CASE("resume takes the newest checkpoint, and names the old format's checkpoint.safetensors") {
  TempDir tmp;
  CHECK_THROWS_WITH_AS(resume_checkpoint(tmp.str()), doctest::Contains(("resume: no checkpoint in '" + tmp.str() + "'").c_str()),
                       tg::ValueError);
  CHECK(recorded_data_path(tmp.str()).empty());
  // What earlier versions wrote: one checkpoint.safetensors, its own format, the data file in "data_path".
  const std::string old = (tmp.path / "checkpoint.safetensors").string();
  tg::save_safetensors(old, {{"model.w", tg::zeros({2})}}, {{"format", "tensorgrad-sentiment-checkpoint"},
                                                            {"data_path", "/data/old.tsv"}});
  CHECK_THROWS_WITH_AS(resume_checkpoint(tmp.str()),
                       ("resume: '" + tmp.str() + "' holds " + old + ", a checkpoint of the format before "
                        "checkpoint-<epoch>.safetensors, which this version cannot resume; its model still works with "
                        "eval and predict, or train it again with `sentiment train --out " + tmp.str() + "`").c_str(),
                       tg::ValueError);
  CHECK(recorded_data_path(tmp.str()) == "/data/old.tsv");  // eval still finds the data an old model was trained on
  tg::train::CheckpointManager m({}, {.dir = tmp.str(), .keep_last = 0});
  for (int64_t epoch : {9, 10}) m.save(epoch, NAN, record_metadata(sample_record(epoch)));
  CHECK(resume_checkpoint(tmp.str()) == (tmp.path / "checkpoint-10.safetensors").string());  // by number, not name
}
