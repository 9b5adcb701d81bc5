// Resuming training: a run stopped after k epochs and resumed to N ends with the same weights (bit-equal)
// and the same metrics as a run of N epochs never stopped; a checkpoint of another configuration, seed or
// data, or none at all, is refused with a clear error.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "checkpoint.h"
#include "tiny_run.h"

using namespace sentiment;
using sentiment_test::newest_checkpoint;
using sentiment_test::TempDir;
using sentiment_test::tensors_under;
using sentiment_test::tiny_config;
namespace fs = std::filesystem;

namespace {

// Every tensor of `a` equals the one of the same name in `b`, bit for bit.
void check_bit_equal(const tg::TensorMap& a, const tg::TensorMap& b) {
  REQUIRE(a.size() == b.size());
  for (const auto& entry : a) {  // CAPTURE can't take a structured binding (clang 14)
    const std::string& name = entry.first;
    const tg::Tensor& t = entry.second;
    CAPTURE(name);
    REQUIRE(b.count(name));
    CHECK(t.to_vector<float>() == b.at(name).to_vector<float>());
  }
}

// The uninterrupted run of 4 epochs, and one stopped after epoch 2 (its directory is left as a stopped
// run leaves it, for the resume tests below).
struct Runs {
  TempDir tmp;
  Data data;
  std::string whole_dir = (tmp.path / "whole").string(), stopped_dir = (tmp.path / "stopped").string();
  TrainResult whole, stopped;
  Runs() {
    data = prepare_data(sentiment_test::write_tiny_tsv(tmp), tiny_config(), /*seed=*/7);
    whole = train(tiny_config(), data, {.out_dir = whole_dir, .seed = 7, .verbose = false});
    stopped = train(tiny_config(), data, {.out_dir = stopped_dir, .seed = 7, .verbose = false,
                                          .on_epoch_end = [](const EpochLog& e) { return e.epoch < 2; }});
  }
};
Runs& runs() {
  static Runs r;
  return r;
}

// The message of the tg::Error that train(config, data, options) throws ("" when it does not).
std::string train_error(const Config& config, const Data& data, const TrainOptions& options) {
  try {
    train(config, data, options);
  } catch (const tg::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("train stopped after 2 of 4 epochs and resumed ends bit-equal to an uninterrupted run, same metrics") {
  Runs& r = runs();
  REQUIRE(r.data.train.size() == 96);
  REQUIRE(r.stopped.log.size() == 2);
  CHECK(read_record(resume_checkpoint(r.stopped_dir)).epoch == 2);
  TempDir copy;  // resume a copy, so that the stopped directory stays for the tests below
  fs::copy(r.stopped_dir, copy.path, fs::copy_options::recursive);
  TrainResult resumed = train(tiny_config(), r.data, {.out_dir = copy.str(), .seed = 7, .verbose = false, .resume = true});

  REQUIRE(resumed.log.size() == 4);
  for (size_t i = 0; i < 4; ++i) {
    CAPTURE(i);
    CHECK(resumed.log[i].epoch == r.whole.log[i].epoch);
    CHECK(resumed.log[i].train_loss == r.whole.log[i].train_loss);  // exact: the same steps in the same order
    CHECK(resumed.log[i].train_accuracy == r.whole.log[i].train_accuracy);
    CHECK(resumed.log[i].val_accuracy == r.whole.log[i].val_accuracy);
    CHECK(resumed.log[i].lr == r.whole.log[i].lr);
  }
  CHECK(resumed.test.confusion == r.whole.test.confusion);
  // The kept (best) weights, and the last epoch's weights and optimizer state in the final checkpoint.
  check_bit_equal(tg::load_safetensors(copy.str() + "/model.safetensors").tensors,
                  tg::load_safetensors(r.whole_dir + "/model.safetensors").tensors);
  const tg::Safetensors a = newest_checkpoint(copy.str()), b = newest_checkpoint(r.whole_dir);
  check_bit_equal(tensors_under(a, "model."), tensors_under(b, "model."));
  check_bit_equal(tensors_under(a, "optim."), tensors_under(b, "optim."));
  CHECK(sentiment_test::timeless(a) == sentiment_test::timeless(b));  // generators, schedule, optimizer, record
  CHECK(read_record(resume_checkpoint(copy.str())).step == 4 * 6);
  // metrics.jsonl holds each epoch once, resumed or not.
  std::ifstream metrics(copy.path / "metrics.jsonl");
  int lines = 0;
  for (std::string line; std::getline(metrics, line);) CHECK(epoch_from_json(nlohmann::json::parse(line)).epoch == ++lines);
  CHECK(lines == 4);
}

TEST_CASE("the differing runs really differ: a stopped run's weights are not the finished run's") {
  Runs& r = runs();  // guards the bit-equality test above against comparing a model with itself
  const tg::Safetensors stopped = newest_checkpoint(r.stopped_dir), whole = newest_checkpoint(r.whole_dir);
  CHECK(stopped.tensors.at("model.classifier.weight").to_vector<float>() !=
        whole.tensors.at("model.classifier.weight").to_vector<float>());
}

TEST_CASE("resume without a checkpoint is a ValueError naming the directory") {
  TempDir tmp;
  const std::string dir = (tmp.path / "empty").string();
  CHECK_THROWS_WITH_AS(train(tiny_config(), runs().data, {.out_dir = dir, .seed = 7, .verbose = false, .resume = true}),
                       doctest::Contains(("resume: no checkpoint in '" + dir + "'").c_str()), tg::ValueError);
}

TEST_CASE("resume refuses a checkpoint of another configuration, seed or data, naming the difference") {
  Runs& r = runs();
  const TrainOptions resume{.out_dir = r.stopped_dir, .seed = 7, .verbose = false, .resume = true};
  Config wider = tiny_config();
  wider.model.d_model = 16;
  CHECK(train_error(wider, r.data, resume).find("another configuration; /model/d_model is 8 there, 16 here") !=
        std::string::npos);
  TrainOptions other_seed = resume;
  other_seed.seed = 8;
  CHECK(train_error(tiny_config(), r.data, other_seed).find("was trained with seed 7, not 8") != std::string::npos);
  Data fewer = r.data;
  fewer.train.pop_back();
  CHECK(train_error(tiny_config(), fewer, resume).find("was trained on other data") != std::string::npos);
  CHECK(train_error(tiny_config(1), r.data, resume).find("has 2 epochs done, more than the 1 asked for") !=
        std::string::npos);
  CHECK(read_record(resume_checkpoint(r.stopped_dir)).epoch == 2);  // refused resumes change nothing
}

// An ensemble's training state is its K networks and their optimizer state (and with folds, K shuffles per
// epoch from one generator): a run of 4 epochs stopped after epoch 3 and resumed ends bit-equal to the
// uninterrupted one.
TEST_CASE("an ensemble run stopped after epoch 3 of 4 and resumed ends bit-equal to an uninterrupted run") {
  for (EnsembleData ensemble_data : {EnsembleData::shared, EnsembleData::folds}) {
    CAPTURE(ensemble_data);
    Config c = tiny_config();
    c.model.ensemble = 2, c.train.ensemble_data = ensemble_data;
    if (c.train.ensemble_data == EnsembleData::folds) c.train.val_fraction = 0;  // each member is validated on its fold
    TempDir tmp;
    const Data data = prepare_data(sentiment_test::write_tiny_tsv(tmp), c, /*seed=*/7);
    const std::string whole_dir = (tmp.path / "whole").string(), resumed_dir = (tmp.path / "resumed").string();
    TrainResult whole = train(c, data, {.out_dir = whole_dir, .seed = 7, .verbose = false});
    train(c, data, {.out_dir = resumed_dir, .seed = 7, .verbose = false,
                    .on_epoch_end = [](const EpochLog& e) { return e.epoch < 3; }});
    const tg::Safetensors after3 = newest_checkpoint(resumed_dir);
    TrainResult resumed = train(c, data, {.out_dir = resumed_dir, .seed = 7, .verbose = false, .resume = true});

    REQUIRE(resumed.log.size() == 4);
    CHECK(resumed.log[3].train_loss == whole.log[3].train_loss);
    CHECK(resumed.log[3].val_accuracy == whole.log[3].val_accuracy);
    CHECK(resumed.test.confusion == whole.test.confusion);
    const tg::TensorMap weights = tg::load_safetensors(whole_dir + "/model.safetensors").tensors;
    CHECK(weights.count("members.1.classifier.weight") == 1);
    check_bit_equal(tg::load_safetensors(resumed_dir + "/model.safetensors").tensors, weights);
    const tg::Safetensors a = newest_checkpoint(resumed_dir), b = newest_checkpoint(whole_dir);
    check_bit_equal(tensors_under(a, "model."), tensors_under(b, "model."));
    check_bit_equal(tensors_under(a, "optim."), tensors_under(b, "optim."));
    CHECK(sentiment_test::timeless(a) == sentiment_test::timeless(b));
    REQUIRE(a.metadata.count("user.rng.member.1") == 1);  // each member's dropout stream, resumed where it was
    CHECK(after3.metadata.at("user.rng.member.1") != b.metadata.at("user.rng.member.1"));
    CHECK(after3.tensors.at("model.members.1.classifier.weight").to_vector<float>() !=
          b.tensors.at("model.members.1.classifier.weight").to_vector<float>());  // the last epoch changed the weights
  }
}

TEST_CASE("train reports the validation accuracy of the weights it keeps: with keep_best, the best epoch's") {
  Runs& r = runs();
  double best = -1;
  for (const EpochLog& e : r.whole.log) best = std::max(best, e.val_accuracy);
  CHECK(best > 0);
  CHECK(r.whole.val_accuracy == best);
}
