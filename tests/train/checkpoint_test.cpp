// Checkpoints: every part round-trips, a run resumed from a mid-epoch checkpoint ends bit-identical to an
// uninterrupted one, keep-last-N and keep-best-K leave the right files, and broken or foreign files give
// errors naming the file while leaving the run unchanged.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "core/error.h"
#include "train/checkpoint.h"
#include "train/run.h"

using namespace tg;
using namespace tg::train;
namespace fs = std::filesystem;

namespace {

// A fresh, empty directory under the system's temporary one.
std::string temp_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("tg_train_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

std::set<std::string> files(const std::string& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.insert(e.path().filename().string());
  return out;
}

}  // namespace

TEST_CASE("a checkpoint round-trips every part of the training state") {
  const std::string dir = temp_dir("roundtrip");
  test::Run a;
  a.train(5);
  CheckpointManager(a.state(), {.dir = dir}).save(5, 0.25, {{"note", "hello"}});
  const Safetensors before = capture(a.state(), true);

  test::Run b;
  manual_seed(1234);
  CheckpointManager mb(b.state(), {.dir = dir});
  const std::optional<CheckpointInfo> info = mb.resume();
  REQUIRE(info);
  CHECK(info->step == 5);
  CHECK(info->metric == 0.25);
  CHECK(info->user.at("note") == "hello");
  const Safetensors after = capture(b.state(), true);
  CHECK(after.metadata == before.metadata);  // optimizer values, scheduler, loader, early stopping, generators
  REQUIRE(after.tensors.size() == before.tensors.size());
  for (const auto& [name, t] : before.tensors) {
    const std::string& tensor_name = name;  // CAPTURE cannot see a structured binding (clang 14)
    CAPTURE(tensor_name);
    CHECK(after.tensors.at(name).to_vector<double>() == t.to_vector<double>());
  }
  CHECK(b.loader.state().epoch == 1);
  CHECK(b.loader.state().batch == 2);
}

TEST_CASE("a run resumed from a mid-epoch checkpoint ends with the same weights as an uninterrupted one") {
  const std::string dir = temp_dir("resume");
  test::Run straight;
  straight.train(10);

  {
    test::Run first;
    first.train(5);  // epoch 1, batch 2 of 3
    CheckpointManager(first.state(), {.dir = dir}).save(5);
    first.train(3);  // work after the checkpoint, lost as in a kill -9
  }
  test::Run resumed;
  manual_seed(99);  // the checkpoint must bring the dropout generator back
  CheckpointManager(resumed.state(), {.dir = dir}).resume();
  resumed.train(5);
  CHECK(resumed.weights() == straight.weights());
  CHECK(resumed.opt.lr() == straight.opt.lr());
  CHECK(resumed.loader.state().epoch == straight.loader.state().epoch);
}

TEST_CASE("keep_last and keep_best leave the newest and the best checkpoints") {
  const std::string dir = temp_dir("keep");
  test::Run r;
  {
    CheckpointManager m(r.state(), {.dir = dir, .keep_last = 2, .keep_best = 1, .mode = Mode::min});
    const double metric[] = {5, 3, 4, 1, 6, 2};
    for (int64_t step = 1; step <= 6; ++step) m.save(step, metric[step - 1]);
    CHECK(files(dir) == std::set<std::string>{"checkpoint-4.safetensors", "checkpoint-5.safetensors",
                                              "checkpoint-6.safetensors"});
    REQUIRE(m.best());
    CHECK(m.best()->step == 4);
  }
  CheckpointManager m(r.state(), {.dir = dir, .keep_last = 2, .keep_best = 1, .mode = Mode::min});
  CHECK(m.newest() == dir + "/checkpoint-6.safetensors");  // the largest step
  CHECK_FALSE(CheckpointManager(r.state(), {.dir = dir + "/none"}).newest().has_value());
  REQUIRE(m.resume()->step == 6);  // the newest; it knows the others' metrics
  CHECK(m.kept().size() == 3);
  m.save(7, 0.5);
  CHECK(files(dir) == std::set<std::string>{"checkpoint-6.safetensors", "checkpoint-7.safetensors"});
  CHECK(m.best()->step == 7);

  const std::string dir2 = temp_dir("keep_max");
  CheckpointManager mx(r.state(), {.dir = dir2, .prefix = "run", .keep_last = 1, .keep_best = 2, .mode = Mode::max});
  const double acc[] = {0.5, 0.9, NAN, 0.7, 0.6};
  for (int64_t step = 0; step < 5; ++step) mx.save(step, acc[step]);
  CHECK(files(dir2) == std::set<std::string>{"run-1.safetensors", "run-3.safetensors", "run-4.safetensors"});
}

TEST_CASE("a truncated, foreign or mismatched checkpoint is refused naming the file, and nothing changes") {
  const std::string dir = temp_dir("corrupt");
  test::Run r;
  CheckpointManager m(r.state(), {.dir = dir});
  const std::string path = m.save(1);
  const std::vector<float> weights = r.weights();

  fs::resize_file(path, fs::file_size(path) - 10);
  CHECK_THROWS_WITH_AS(m.resume(), doctest::Contains(path.c_str()), ValueError);
  CHECK(r.weights() == weights);

  save_safetensors(path, {{"w", zeros({2})}});  // a safetensors file, but not a checkpoint
  CHECK_THROWS_WITH_AS(m.load(path), doctest::Contains(("checkpoint " + path + ": no 'format'").c_str()), ValueError);

  m.save(1);
  test::Run other;  // without a loader: another set of parts
  TrainingState no_loader = other.state();
  no_loader.loader = nullptr;
  CHECK_THROWS_WITH_AS(CheckpointManager(no_loader, {.dir = dir}).resume(),
                       doctest::Contains("holds the parts [model,optimizer,scheduler,loader,early_stopping,rng.extra], "
                                         "but this run has [model,optimizer,scheduler,early_stopping,rng.extra]"),
                       ValueError);

  // The optimizer refuses the state after the model accepted its own: the model is put back.
  optim::Adam wrong_opt(std::vector<Variable>{other.model->parameters()[0]}, {.lr = 0.1});
  CheckpointManager(TrainingState{.model = r.model.get(), .optimizer = &r.opt}, {.dir = dir, .prefix = "pair"}).save(1);
  other.train(1);
  const std::vector<float> other_weights = other.weights();
  CHECK_THROWS_AS(CheckpointManager(TrainingState{.model = other.model.get(), .optimizer = &wrong_opt},
                                    {.dir = dir, .prefix = "pair"}).resume(), ValueError);
  CHECK(other.weights() == other_weights);
}

TEST_CASE("CheckpointManager refuses bad options") {
  test::Run r;
  CHECK_THROWS_WITH_AS(CheckpointManager(r.state(), {}), "CheckpointManager: no directory given", ValueError);
  CHECK_THROWS_AS(CheckpointManager(r.state(), {.dir = "x", .prefix = "a/b"}), ValueError);
  CHECK_THROWS_AS(CheckpointManager(r.state(), {.dir = "x", .keep_last = -1}), ValueError);
}

TEST_CASE("a checkpoint whose metadata holds a negative step or a binary value is refused, quoting it escaped") {
  const std::string dir = temp_dir("metadata");
  test::Run r;
  CheckpointManager m(r.state(), {.dir = dir});
  const std::string path = m.save(1);
  Safetensors file = load_safetensors(path);
  const Safetensors good = file;
  file.metadata["checkpoint.step"] = "-5";
  save_safetensors(path, file.tensors, file.metadata);
  CHECK_THROWS_WITH_AS(m.load(path), doctest::Contains("step -5 in 'checkpoint.kept' entry '-5:nan' is negative"),
                       ValueError);
  file = good;
  file.metadata["checkpoint.kept"] = std::string("1:nan;x\0y", 9);
  save_safetensors(path, file.tensors, file.metadata);
  CHECK_THROWS_WITH_AS(m.load(path), doctest::Contains("malformed 'checkpoint.kept' entry 'x\\x00y'"), ValueError);
}
