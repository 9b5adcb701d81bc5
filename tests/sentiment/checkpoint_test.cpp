// Checkpoints: a save/load round trip is bit-exact, a foreign file is refused, and a save that fails
// half-way (a real write error: the file size limit, EFBIG) leaves the previous checkpoint intact.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "checkpoint.h"
#include "file_size_limit.h"
#include "temp_dir.h"

using namespace sentiment;
using sentiment_test::TempDir;
using tg_test::with_file_size_limit;
namespace fs = std::filesystem;

namespace {

Checkpoint sample_checkpoint(int64_t epoch, float weight) {
  tg::Generator gen(3);
  gen.next();
  Checkpoint c;
  c.config = {{"name", "sample"}};
  c.seed = ~uint64_t(0);  // the largest seed survives
  c.data_fingerprint = "0123456789abcdef";
  c.data_path = "/data/sentences.tsv";
  c.epoch = epoch, c.step = 6 * epoch, c.lr_scale = 0.1 * 0.1 * 0.1, c.rollbacks = 3;  // not a short decimal
  c.default_rng = gen.get_state(), c.shuffle_rng = tg::Generator(4).get_state();
  for (uint64_t k = 0; k < 12; ++k) c.member_rngs.push_back(tg::Generator(10 + k).get_state());  // past 2 digits
  c.model = {{"w", tg::full({64, 64}, weight)}};
  c.optimizer = {{{"0.exp_avg", tg::full({64, 64}, weight / 3)}}, {{"optimizer", "Adam"}, {"0.step", "6"}}};
  c.best_val = 2.0 / 3, c.best_epoch = epoch;
  c.best_model = {{"w", tg::full({64, 64}, weight * 2)}};
  c.log = {{1, 0.6931471805599453, 0.5, NAN, 1e-3 / 3, 0.25, 384}};
  return c;
}

}  // namespace

TEST_CASE("a checkpoint reads back bit-exact: tensors, counters, generator states, metrics") {
  TempDir tmp;
  const std::string path = (tmp.path / "checkpoint.safetensors").string();
  Checkpoint c = sample_checkpoint(2, 0.1f);
  save_checkpoint(path, c);
  Checkpoint r = load_checkpoint(path);
  CHECK(r.config == c.config);
  CHECK(r.seed == c.seed);
  CHECK(r.data_fingerprint == c.data_fingerprint);
  CHECK(r.data_path == "/data/sentences.tsv");
  CHECK(r.epoch == 2);
  CHECK(r.step == 12);
  CHECK(r.lr_scale == c.lr_scale);
  CHECK(r.rollbacks == 3);
  CHECK(r.default_rng == c.default_rng);
  CHECK(r.shuffle_rng == c.shuffle_rng);
  CHECK(r.member_rngs == c.member_rngs);
  CHECK(r.best_val == c.best_val);
  CHECK(r.model.at("w").to_vector<float>() == c.model.at("w").to_vector<float>());
  CHECK(r.best_model.at("w").to_vector<float>() == c.best_model.at("w").to_vector<float>());
  CHECK(r.optimizer.tensors.at("0.exp_avg").to_vector<float>() == c.optimizer.tensors.at("0.exp_avg").to_vector<float>());
  CHECK(r.optimizer.values == c.optimizer.values);
  REQUIRE(r.log.size() == 1);
  CHECK(r.log[0].train_loss == c.log[0].train_loss);
  CHECK(r.log[0].lr == c.log[0].lr);
  CHECK(std::isnan(r.log[0].val_accuracy));
}

TEST_CASE("a checkpoint written before data_path was kept loads with an empty data_path") {
  TempDir tmp;
  const std::string path = (tmp.path / "checkpoint.safetensors").string();
  save_checkpoint(path, sample_checkpoint(1, 0.5f));
  tg::Safetensors old = tg::load_safetensors(path);
  REQUIRE(old.metadata.erase("data_path") == 1);
  tg::save_safetensors(path, old.tensors, old.metadata);
  Checkpoint r = load_checkpoint(path);
  CHECK(r.data_path.empty());
  CHECK(r.epoch == 1);
}

TEST_CASE("load_checkpoint refuses a model file and a missing file, naming the path") {
  TempDir tmp;
  const std::string model = (tmp.path / "model.safetensors").string();
  tg::save_safetensors(model, {{"w", tg::zeros({2})}}, {{"format", "tensorgrad"}});
  CHECK_THROWS_WITH_AS(load_checkpoint(model),
                       doctest::Contains(("checkpoint " + model + ": format 'tensorgrad', expected").c_str()), tg::ValueError);
  tg::save_safetensors(model, {{"w", tg::zeros({2})}});
  CHECK_THROWS_WITH_AS(load_checkpoint(model), doctest::Contains("no 'format'"), tg::ValueError);
  CHECK_THROWS_AS(load_checkpoint((tmp.path / "none").string()), tg::ValueError);
}

TEST_CASE("a checkpoint save that fails half-way (EFBIG) leaves the previous checkpoint intact and loadable") {
  TempDir tmp;
  const std::string path = (tmp.path / "checkpoint.safetensors").string();
  save_checkpoint(path, sample_checkpoint(1, 0.5f));
  const auto size = fs::file_size(path);  // about 48 KB: three 64x64 f32 tensors
  std::string error;
  with_file_size_limit(size / 2, [&] {
    try {
      save_checkpoint(path, sample_checkpoint(2, 0.25f));
    } catch (const tg::Error& e) {
      error = e.what();
    }
  });
  CAPTURE(error);
  CHECK(error.find("write failed: File too large") != std::string::npos);
  CHECK_FALSE(fs::exists(path + ".tmp"));  // the partial file is removed
  CHECK(fs::file_size(path) == size);
  Checkpoint kept = load_checkpoint(path);
  CHECK(kept.epoch == 1);
  CHECK(kept.model.at("w").to_vector<float>() == std::vector<float>(64 * 64, 0.5f));
  save_checkpoint(path, sample_checkpoint(2, 0.25f));  // and without the limit the same save succeeds
  CHECK(load_checkpoint(path).epoch == 2);
}
