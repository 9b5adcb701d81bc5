// Edge cases of the sentiment example found while running it under the sanitizers (tests/fuzz and the
// TENSORGRAD_SANITIZE build): inputs at the limits of what the program accepts.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "temp_dir.h"
#include "train.h"

using namespace sentiment;
using sentiment_test::TempDir;

// `sentiment train --data five.tsv`: four training sentences leave no validation set (round(0.1 * 4) = 0),
// so no epoch had a best validation accuracy to save, and restoring "the best epoch" read a file never
// written ("load_safetensors: cannot open .../model.safetensors"). The last epoch is kept instead.
TEST_CASE("keep_best with an empty validation split keeps the last epoch") {
  TempDir dir;
  const std::string data_path =
      dir.write("five.tsv", "text\tlabel\ngood\t1\nbad\t0\nfine film\t1\nawful\t0\nnice\t1\n");  // 4 train, 1 test
  Config c = config_by_name("default");
  c.model.d_model = 8, c.model.num_heads = 2, c.model.num_layers = 1, c.model.dim_feedforward = 8;
  c.train.epochs = 1, c.train.keep_best = true, c.train.val_fraction = 0.1;  // 10% of 4 sentences: none
  c.model.ensemble = 1, c.train.ensemble_data = EnsembleData::shared;  // one network, validated on the carved split
  Data data = prepare_data(data_path, c, /*seed=*/0);
  REQUIRE(data.val.empty());
  REQUIRE(data.train.size() == 4);
  const std::string out = (dir.path / "model").string();
  TrainResult r;
  CHECK_NOTHROW(r = train(c, data, out, /*seed=*/0, /*verbose=*/false));
  CHECK(r.log.size() == 1);
  CHECK(std::filesystem::exists(dir.path / "model" / "model.safetensors"));
  CHECK_NOTHROW(load_model(out));
}

namespace {

Config tiny_default() {
  Config c = config_by_name("default");
  c.model.d_model = 8, c.model.num_heads = 2, c.model.num_layers = 1, c.model.dim_feedforward = 8;
  c.model.ensemble = 1, c.train.ensemble_data = EnsembleData::shared;
  c.train.epochs = 1;
  return c;
}

}  // namespace

// A config.json with "batch_size": 0 divided by zero computing the steps per epoch (SIGFPE, exit 136).
TEST_CASE("train refuses a batch_size, epochs or warmup_epochs out of range before it divides by them") {
  TempDir dir;
  Config c = tiny_default();
  Data data = prepare_data(dir.write("five.tsv", "text\tlabel\ngood\t1\nbad\t0\nfine film\t1\nawful\t0\nnice\t1\n"), c, 0);
  const std::string out = (dir.path / "model").string();
  Config bad = c;
  bad.train.batch_size = 0;
  CHECK_THROWS_WITH_AS(train(bad, data, out, 0, false), "train: batch_size must be >= 1, got 0", tg::ValueError);
  bad = c, bad.train.epochs = 0;
  CHECK_THROWS_WITH_AS(train(bad, data, out, 0, false), "train: epochs must be in [1, 1000000], got 0", tg::ValueError);
  bad = c, bad.train.warmup_epochs = -3;
  CHECK_THROWS_WITH_AS(train(bad, data, out, 0, false), "train: warmup_epochs must be in [0, 1000000], got -3",
                       tg::ValueError);
  bad = c, bad.train.clip_grad_norm = -1;
  CHECK_THROWS_WITH_AS(train(bad, data, out, 0, false), "train: clip_grad_norm must be >= 0 (0: no clipping), got -1",
                       tg::ValueError);
  bad = c, bad.model.num_classes = 1;
  CHECK_THROWS_WITH_AS(train(bad, data, out, 0, false), "model: num_classes must be in [2, 1048576], got 1", tg::ValueError);
  CHECK_FALSE(std::filesystem::exists(dir.path / "model"));  // refused before anything is written
}

// "min_freq": 100000 in a config.json left only <pad> and <unk>: training ran to the end, exit 0, and the
// model predicted one class for every sentence.
TEST_CASE("train refuses a vocabulary of only <pad> and <unk>") {
  TempDir dir;
  Config c = tiny_default();
  c.train.min_freq = 100000;
  Data data = prepare_data(dir.write("five.tsv", "text\tlabel\ngood\t1\nbad\t0\nfine film\t1\nawful\t0\nnice\t1\n"), c, 0);
  REQUIRE(data.vocab.size() == 2);
  CHECK_THROWS_WITH_AS(train(c, data, (dir.path / "model").string(), 0, false),
                       "train: the vocabulary holds only <pad> and <unk>: no training token occurs min_freq = 100000 times",
                       tg::ValueError);
}

// `sentiment train --data four.tsv` (or a header-only file, or val_fraction 1) trained every epoch and
// then stopped with "make_batches: no examples to batch" when computing the test metrics.
TEST_CASE("train refuses data without training or test sentences before the first epoch") {
  TempDir dir;
  Config c = tiny_default();
  const std::string out = (dir.path / "model").string();
  Data four = prepare_data(dir.write("four.tsv", "text\tlabel\ngood\t1\nbad\t0\nfine film\t1\nawful\t0\n"), c, 0);
  REQUIRE(four.test.empty());
  CHECK_THROWS_WITH_AS(train(c, four, out, 0, false),
                       doctest::Contains("train: 4 training and 0 test sentences; need at least one of each"),
                       tg::ValueError);
  Data none = prepare_data(dir.write("header.tsv", "text\tlabel\n"), c, 0);
  CHECK_THROWS_WITH_AS(train(c, none, out, 0, false), doctest::Contains("train: 0 training and 0 test sentences"),
                       tg::ValueError);
  CHECK_FALSE(std::filesystem::exists(dir.path / "model"));
}

TEST_CASE("train refuses ensemble_data folds without an ensemble, with a validation split, or with too few sentences") {
  TempDir dir;
  Config c = tiny_default();
  const std::string path = dir.write("five.tsv", "text\tlabel\ngood\t1\nbad\t0\nfine film\t1\nawful\t0\nnice\t1\n");
  Data data = prepare_data(path, c, 0);  // 4 training sentences, no validation
  const std::string out = (dir.path / "model").string();
  Config bad = c;
  bad.train.ensemble_data = EnsembleData::folds;
  CHECK_THROWS_WITH_AS(train(bad, data, out, 0, false),
                       "train: ensemble_data 'folds' needs an ensemble of >= 2 members, got 1", tg::ValueError);
  bad.model.ensemble = 5;
  CHECK_THROWS_WITH_AS(train(bad, data, out, 0, false), "train: 4 training sentences cannot make 5 folds",
                       tg::ValueError);
  bad.model.ensemble = 2, bad.train.val_fraction = 0.5;
  Data with_val = prepare_data(path, bad, 0);
  REQUIRE(with_val.val.size() == 2);
  CHECK_THROWS_WITH_AS(train(bad, with_val, out, 0, false),
                       doctest::Contains("ensemble_data 'folds' validates each member on its own fold"), tg::ValueError);
  CHECK_FALSE(std::filesystem::exists(dir.path / "model"));
}
