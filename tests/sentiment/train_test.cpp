// Tests for the sentiment example's training loop and model directory: a short run on a subset lowers
// the loss, load_model reads back the same model (bit-exact logits), and every broken directory is
// reported with the directory and the file at fault.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "temp_dir.h"
#include "train.h"

#ifndef SENTIMENT_DATA_DIR
#error "define SENTIMENT_DATA_DIR as the path of examples/sentiment/data"
#endif

using namespace sentiment;
using sentiment_test::TempDir;
namespace fs = std::filesystem;

namespace {

const std::string kBundled = std::string(SENTIMENT_DATA_DIR) + "/sentences.tsv";

// A tiny model and a short recipe: 200 training sentences, 3 epochs, well under a second.
Config tiny_config() {
  Config c = config_by_name("reference");
  c.name = "tiny";
  c.model.d_model = 16, c.model.num_heads = 2, c.model.num_layers = 1, c.model.dim_feedforward = 32;
  c.train.epochs = 3, c.train.batch_size = 16, c.train.lr = 3e-3;
  return c;
}

// One training run shared by the tests that inspect its result (training is the slow part).
struct TrainedRun {
  TempDir dir;
  Data data;
  TrainResult result;
  TrainedRun() {
    Config c = tiny_config();
    data = prepare_data(kBundled, c, /*seed=*/0);
    data.train.resize(200), data.test.resize(100);
    result = train(c, data, dir.str(), /*seed=*/0, /*verbose=*/false);
  }
};
const TrainedRun& trained() {
  static const TrainedRun run;
  return run;
}

// Writes a complete model directory for `model` as `train` does: weights, vocabulary, configuration.
void write_model_dir(const fs::path& dir, const Config& config, const Vocab& vocab, const Classifier& model) {
  fs::create_directories(dir);
  model.save((dir / "model.safetensors").string());
  vocab.save((dir / "vocab.txt").string());
  std::ofstream(dir / "config.json") << nlohmann::json(config).dump(2);
}

// A small valid model directory (random weights) with its config, vocabulary and model.
struct SmallModel {
  Config config = tiny_config();
  Vocab vocab = Vocab::build({{"a", "good", "movie"}, {"a", "bad", "film"}});
  std::unique_ptr<Classifier> model;
  explicit SmallModel(const fs::path& dir, int64_t d_model = 16) {
    config.model.vocab_size = vocab.size(), config.model.d_model = d_model;
    tg::manual_seed(5);
    model = std::make_unique<Classifier>(config.model);
    write_model_dir(dir, config, vocab, *model);
  }
};

// The message of the tg::Error that load_model(dir) throws ("" when it does not throw).
std::string load_error(const std::string& dir) {
  try {
    load_model(dir);
  } catch (const tg::Error& e) {
    return e.what();
  }
  return "";
}

// CHECK that `text` contains `part`, showing both when it does not.
#define CHECK_THAT(text, part)                                   \
  do {                                                           \
    const std::string text_ = (text), part_ = (part);            \
    CAPTURE(text_);                                              \
    CHECK_MESSAGE(text_.find(part_) != std::string::npos, part_); \
  } while (false)

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_CASE("a short training run on 200 sentences lowers the training loss") {
  const TrainResult& r = trained().result;
  REQUIRE(r.log.size() == 3);
  CAPTURE(r.log[0].train_loss);
  CAPTURE(r.log[2].train_loss);
  CHECK(r.log[2].train_loss < r.log[0].train_loss);
  CHECK(r.log[2].train_loss < r.log[1].train_loss);
  CHECK(r.test.confusion.size() == 2);
}

TEST_CASE("train writes the model directory: weights, vocabulary, config, metrics log, learning curve") {
  const fs::path dir = trained().dir.path;
  for (const char* f : {"model.safetensors", "vocab.txt", "config.json", "metrics.jsonl", "learning_curve.svg"})
    CHECK_MESSAGE(fs::exists(dir / f), f);
  nlohmann::json config = nlohmann::json::parse(read_text(dir / "config.json"));
  CHECK(config["model"]["vocab_size"] == trained().data.vocab.size());
  CHECK(config["name"] == "tiny");
}

TEST_CASE("load_model reads a trained model back: the same test predictions as at the end of training") {
  const TrainedRun& run = trained();
  LoadedModel m = load_model(run.dir.str());
  CHECK(m.vocab.size() == run.data.vocab.size());
  CHECK(m.config.model.d_model == 16);
  CHECK_FALSE(m.model->is_training());
  std::vector<int64_t> truth;
  for (const Encoded& e : run.data.test) truth.push_back(e.label);
  Metrics again = compute_metrics(predict_labels(*m.model, run.data.test), truth, 2);
  CHECK(again.confusion == run.result.test.confusion);
}

TEST_CASE("load_model gives bit-exact logits of the model that was saved") {
  TempDir tmp;
  SmallModel s(tmp.path);
  LoadedModel m = load_model(tmp.str());
  s.model->eval();
  tg::NoGradGuard no_grad;
  std::vector<Encoded> data =
      encode_all({{"a good movie", 1, ""}, {"bad", 0, ""}, {"zzz film a a", 0, ""}}, s.vocab, /*max_len=*/48);
  Batch b = make_batch(data, {0, 1, 2});
  std::vector<float> want = s.model->forward(b.tokens, b.pad_mask).value().to_vector<float>();
  std::vector<float> got = m.model->forward(b.tokens, b.pad_mask).value().to_vector<float>();
  CHECK(got == want);
}

TEST_CASE("with sub-words, train -> load_model gives the same test predictions and bit-exact logits") {
  TempDir dir;
  Config c = tiny_config();
  c.model.subword_buckets = 512, c.train.epochs = 2;
  Data data = prepare_data(kBundled, c, /*seed=*/0);
  data.train.resize(200), data.test.resize(100);
  REQUIRE(data.test[0].subwords.size() == data.test[0].ids.size());  // encoded with their n-grams
  TrainResult r = train(c, data, dir.str(), /*seed=*/0, /*verbose=*/false);
  LoadedModel m = load_model(dir.str());
  CHECK(m.config.model.subword_buckets == 512);
  std::vector<int64_t> truth;
  for (const Encoded& e : data.test) truth.push_back(e.label);
  CHECK(compute_metrics(predict_labels(*m.model, data.test), truth, 2).confusion == r.test.confusion);
}

TEST_CASE("with the lexicon, train writes lexicon.tsv and load_model reads it: the same test predictions") {
  TempDir dir;
  Config c = tiny_config();
  c.model.subword_buckets = 512, c.model.lexicon_weight = 2, c.train.epochs = 2;
  Data data = prepare_data(kBundled, c, /*seed=*/0);
  CHECK(data.lexicon.size() == 3325);  // the bundled AFINN-165
  data.train.resize(200), data.test.resize(100);
  TrainResult r = train(c, data, dir.str(), /*seed=*/0, /*verbose=*/false);
  LoadedModel m = load_model(dir.str());
  CHECK(m.lexicon.size() == 3325);
  CHECK(m.lexicon.valence("superb") == 5);
  std::vector<int64_t> truth;
  for (const Encoded& e : data.test) truth.push_back(e.label);
  CHECK(compute_metrics(predict_labels(*m.model, data.test), truth, 2).confusion == r.test.confusion);
  std::filesystem::remove(dir.path / "lexicon.tsv");
  CHECK_THROWS_WITH_AS(load_model(dir.str()), doctest::Contains("has no lexicon.tsv, which its config.json asks for"),
                       tg::ValueError);
  CHECK_THROWS_WITH_AS(prepare_data(kBundled, c, 0, {}, dir.str() + "/none.tsv"),
                       doctest::Contains("Lexicon::load: cannot open"), tg::ValueError);
}

TEST_CASE("load_model of a model with sub-words gives bit-exact logits of the model saved, unknown words too") {
  TempDir tmp;
  Config c = tiny_config();
  Vocab vocab = Vocab::build({{"a", "good", "movie"}, {"a", "bad", "film"}});
  c.model.vocab_size = vocab.size(), c.model.subword_buckets = 512;
  tg::manual_seed(5);
  Classifier model(c.model);
  write_model_dir(tmp.path, c, vocab, model);
  LoadedModel m = load_model(tmp.str());
  model.eval();
  tg::NoGradGuard no_grad;
  Batch b = make_batch(encode_all({{"a good movie", 1, ""}, {"an unforgettable, unwatchable film", 0, ""}}, vocab,
                                  48, 512), {0, 1});
  std::vector<float> want = model.forward(b.tokens, b.pad_mask, b.subwords).value().to_vector<float>();
  CHECK(m.model->forward(b.tokens, b.pad_mask, b.subwords).value().to_vector<float>() == want);
}

TEST_CASE("load_model names the directory and the missing file") {
  TempDir tmp;
  const std::string missing = (tmp.path / "nowhere").string();
  CHECK_THAT(load_error(missing), "'" + missing + "' does not exist or is not a directory");
  SmallModel s(tmp.path / "m");
  fs::remove(tmp.path / "m" / "model.safetensors");
  const std::string dir = (tmp.path / "m").string();
  CHECK_THAT(load_error(dir), "'" + dir + "' has no model.safetensors");
  const std::string binary = (tmp.path / "a\x01" "b\xff").string();  // quoted escaped, in full
  CHECK_THAT(load_error(binary),
             "model directory '" + tmp.str() + "/a\\x01b\\xFF' does not exist or is not a directory");
  fs::create_directory(tmp.path / "empty");
  CHECK_THAT(load_error((tmp.path / "empty").string()), "has no config.json");
}

TEST_CASE("load_model names the directory when config.json is not JSON or lacks a field") {
  TempDir tmp;
  SmallModel s(tmp.path);
  tmp.write("config.json", "{\"model\": {");
  CHECK_THAT(load_error(tmp.str()), "'" + tmp.str() + "': config.json is not valid JSON");
  nlohmann::json j = s.config;
  j["model"].erase("d_model");
  tmp.write("config.json", j.dump());
  CHECK_THAT(load_error(tmp.str()), "'" + tmp.str() + "': config.json: config: missing or invalid 'model.d_model'");
}

TEST_CASE("load_model names the directory when config.json describes a model the layers refuse") {
  TempDir tmp;
  SmallModel s(tmp.path);
  nlohmann::json j = s.config;
  j["model"]["num_heads"] = 3;  // d_model 16 is not divisible by 3
  tmp.write("config.json", j.dump());
  CHECK_THAT(load_error(tmp.str()), "'" + tmp.str() + "': config.json: ");
}

TEST_CASE("load_model names the directory when vocab.txt does not match config.json") {
  TempDir tmp;
  SmallModel s(tmp.path);
  nlohmann::json j = s.config;
  j["model"]["vocab_size"] = s.vocab.size() + 1;
  tmp.write("config.json", j.dump());
  CHECK_THAT(load_error(tmp.str()), fmt::format("'{}': vocab.txt has {} tokens but config.json says {}", tmp.str(),
                                                s.vocab.size(), s.vocab.size() + 1));
}

TEST_CASE("load_model names the weights file when it belongs to another configuration or is corrupt") {
  TempDir tmp;
  SmallModel s(tmp.path, /*d_model=*/16);
  SmallModel other(tmp.path / "other", /*d_model=*/8);
  fs::copy_file(tmp.path / "other" / "model.safetensors", tmp.path / "model.safetensors",
                fs::copy_options::overwrite_existing);
  std::string what = load_error(tmp.str());  // found from the sizes alone, before the model is built
  CHECK_THAT(what, "'" + tmp.str() + "': model.safetensors holds ");
  CHECK_THAT(what, "parameters, but the model of config.json has");

  tmp.write("model.safetensors", std::string("\x10\0\0\0\0\0\0\0{\"a\":", 13));  // header longer than the file
  CHECK_THAT(load_error(tmp.str()), (tmp.path / "model.safetensors").string());
}

// A NaN weight used to load, and predict printed "negative 0.000" for every sentence.
TEST_CASE("load_model refuses weights holding NaN or inf, naming the tensor") {
  TempDir tmp;
  SmallModel s(tmp.path);
  for (double bad : {double(NAN), double(INFINITY)}) {
    tg::Tensor w = s.model->state_dict().at("classifier.weight");  // shares the parameter's storage
    w.narrow(1, 3, 1).fill_(bad);
    write_model_dir(tmp.path, s.config, s.vocab, *s.model);
    CHECK_THAT(load_error(tmp.str()), "'" + tmp.str() + "': model.safetensors holds NaN or inf in 'classifier.weight' "
                                      "(2, 16)");
  }
}
