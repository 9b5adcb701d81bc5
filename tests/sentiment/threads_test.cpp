// An ensemble's members train side by side on the threads (Classifier::for_each_member): the same weights,
// metrics and generator states, bit for bit, as one after another on one thread.
#include <doctest/doctest.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "checkpoint.h"
#include "tiny_run.h"

using namespace sentiment;
using sentiment_test::TempDir;

namespace {

struct ThreadsGuard {  // restores the thread count a test changed
  int saved = tg::get_num_threads();
  ~ThreadsGuard() { tg::set_num_threads(saved); }
};

std::string read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Everything a run ends with that does not depend on timing.
struct Outcome {
  std::string weights;
  std::vector<double> numbers;  // per epoch: loss, train and validation accuracy; then test accuracy and F1
  std::vector<std::string> member_rngs, default_rng;
};

Outcome train_on(int threads, const Config& c, const Data& data, const TempDir& tmp) {
  tg::set_num_threads(threads);
  const std::string dir = (tmp.path / ("threads" + std::to_string(threads))).string();
  const TrainResult r = train(c, data, {.out_dir = dir, .seed = 3, .verbose = false});
  Outcome o{read_bytes(std::filesystem::path(dir) / "model.safetensors"), {}, {}, {}};
  for (const EpochLog& e : r.log) o.numbers.insert(o.numbers.end(), {e.train_loss, e.train_accuracy, e.val_accuracy});
  o.numbers.insert(o.numbers.end(), {r.test.accuracy, r.test.f1});
  const RunRecord last = read_record(resume_checkpoint(dir));
  o.member_rngs = last.member_rngs, o.default_rng = {tg::load_safetensors(last.path).metadata.at("rng.default")};
  return o;
}

}  // namespace

TEST_CASE("an ensemble trained on 2 and 3 threads ends bit-equal to one trained on 1 thread") {
  ThreadsGuard guard;
  for (EnsembleData ensemble_data : {EnsembleData::folds, EnsembleData::shared}) {
    CAPTURE(ensemble_data);
    TempDir tmp;
    Config c = sentiment_test::tiny_config(3);
    c.model.ensemble = 3, c.model.subword_buckets = 64, c.train.ensemble_data = ensemble_data;
    if (c.train.ensemble_data == EnsembleData::folds) c.train.val_fraction = 0, c.train.keep_best = false;
    const Data data = prepare_data(sentiment_test::write_tiny_tsv(tmp), c, /*seed=*/3);
    const Outcome one = train_on(1, c, data, tmp);
    REQUIRE(one.member_rngs.size() == 3);
    CHECK(one.member_rngs[0] != one.member_rngs[1]);  // each member its own stream
    for (int threads : {2, 3}) {
      CAPTURE(threads);
      const Outcome many = train_on(threads, c, data, tmp);
      CHECK(many.weights == one.weights);  // model.safetensors, byte for byte
      CHECK(many.numbers == one.numbers);
      CHECK(many.member_rngs == one.member_rngs);
      CHECK(many.default_rng == one.default_rng);
    }
  }
}
