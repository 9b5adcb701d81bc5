// The sentiment example's files (issue 28): every write checked (a full disk, /dev/full, names the file), every
// read bounded (/dev/zero names the file and the limit), every loaded value range-checked before use (config
// sizes against the weights before allocation, checkpoint counters, the lexicon saved with a model), binary
// bytes quoted escaped and in full, and --skip-malformed kept with the model.
#include <doctest/doctest.h>

#include <filesystem>

#include "checkpoint.h"
#include "tiny_run.h"
#include "train.h"

using namespace sentiment;
using sentiment_test::TempDir;
namespace fs = std::filesystem;
using namespace std::string_literals;

namespace {

// The message of the tg::Error that f throws ("" when it throws none).
template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const tg::Error& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

int64_t numel_of(const Classifier& model) {
  int64_t n = 0;
  for (const auto& [name, t] : model.state_dict()) n += t.numel();
  return n;
}

// A trained tiny model in `dir` (one epoch), on `data`.
TrainResult train_tiny(const TempDir& dir, const std::string& out, Config c = sentiment_test::tiny_config(1)) {
  Data d = prepare_data(sentiment_test::write_tiny_tsv(dir), c, 0, {.skip_malformed = c.train.skip_malformed});
  return train(c, d, (dir.path / out).string(), 0, false);
}

}  // namespace

TEST_CASE("parameter_count is the number of weights of the model built from the config") {
  ModelConfig base = sentiment_test::tiny_config().model;
  base.vocab_size = 30;
  for (int variant = 0; variant < 8; ++variant) {
    ModelConfig c = base;
    if (variant == 1) c.norm_first = true, c.pooling = Pooling::mean_max;
    if (variant == 2) c.positional = Positional::learned, c.num_layers = 3;
    if (variant == 3) c.subword_buckets = 0, c.lexicon_weight = 0, c.ensemble = 2;
    if (variant == 4) c.num_classes = 5, c.dim_feedforward = 7, c.embedding_norm = true;
    if (variant == 5) c.architecture = Architecture::lstm, c.hidden_size = 5, c.num_layers = 3;
    if (variant == 6) c.architecture = Architecture::gru, c.bidirectional = true, c.pooling = Pooling::mean_max;
    if (variant == 7) c.architecture = Architecture::lstm, c.bidirectional = true, c.ensemble = 2;
    CAPTURE(variant);
    CHECK(parameter_count(c) == double(numel_of(Classifier(c))));
  }
}

TEST_CASE("check_model_config bounds the sizes, so a config cannot ask for gigabytes") {
  ModelConfig c = sentiment_test::tiny_config().model;
  c.num_layers = 100000;
  CHECK_THROWS_WITH_AS(check_model_config(c), "model: num_layers must be in [1, 1024], got 100000", tg::ValueError);
  c.num_layers = 1024, c.d_model = 8192, c.num_heads = 1;
  CHECK_THROWS_WITH_AS(check_model_config(c), doctest::Contains("parameters, more than the 1073741824 allowed"),
                       tg::ValueError);
  c = sentiment_test::tiny_config().model;
  c.vocab_size = -1;
  CHECK_THROWS_AS(check_model_config(c), tg::ValueError);
}

TEST_CASE("load_model checks config.json's sizes against the weights before building the model") {
  TempDir dir;
  train_tiny(dir, "run");
  const fs::path run = dir.path / "run";
  nlohmann::json j = nlohmann::json::parse(tg::read_file((run / "config.json").string(), 1 << 20));
  j["model"]["num_layers"] = 1000;  // allowed, but ~0.8M parameters, and the file holds one layer's
  tg::write_file_atomic((run / "config.json").string(), {j.dump()});
  const std::string error = error_of([&] { load_model(run.string()); });
  CAPTURE(error);
  CHECK(contains(error, "model.safetensors holds "));
  CHECK(contains(error, fmt::format(" parameters, but the model of config.json has {} (d_model 8, num_layers 1000,",
                                    int64_t(parameter_count(j.get<Config>().model)))));
}

TEST_CASE("a checkpoint with counters out of range is refused, naming the counter") {
  TempDir dir;
  train_tiny(dir, "run");
  const std::string path = sentiment::resume_checkpoint((dir.path / "run").string());
  const tg::Safetensors good = tg::load_safetensors(path);
  struct Case {
    const char* key;
    const char* value;
    const char* expected;
  } cases[] = {
      {"user.epoch", "-1", "epoch must be in [0, 1000000], got -1"},
      {"user.step", "-5", "step must be >= 0, got -5"},
      {"user.lr_scale", "0", "lr_scale must be in (0, 1], got 0"},
      {"user.lr_scale", "nan", "lr_scale must be in (0, 1], got nan"},
      {"user.rollbacks", "-2", "rollbacks must be >= 0, got -2"},
      {"user.epoch", "0", "1 epochs in 'log', more than the 0 done"},
      {"user.step", "1x", "'step' is not an integer: '1x'"},
  };
  for (const Case& k : cases) {
    CAPTURE(k.expected);
    tg::Safetensors spoilt = good;
    spoilt.metadata.at(k.key) = k.value;
    tg::save_safetensors(path, spoilt.tensors, spoilt.metadata);
    CHECK_THROWS_WITH_AS(read_record(path), ("checkpoint " + path + ": " + k.expected).c_str(), tg::ValueError);
  }
}

TEST_CASE("load_model refuses a lexicon.tsv that is not the one saved with the model") {
  TempDir dir;
  Config c = sentiment_test::tiny_config(1);
  c.model.subword_buckets = 64, c.model.lexicon_weight = 1;
  train_tiny(dir, "run", c);
  const fs::path lexicon = dir.path / "run" / "lexicon.tsv";
  const std::string text = tg::read_file(lexicon.string(), 1 << 20);
  CHECK_NOTHROW(load_model((dir.path / "run").string()));
  tg::write_file_atomic(lexicon.string(), {text.substr(0, text.find('\n', text.size() / 2) + 1)});  // cut at a line end
  const std::string error = error_of([&] { load_model((dir.path / "run").string()); });
  CAPTURE(error);
  CHECK(contains(error, "lexicon.tsv is not the one saved with the model (truncated or replaced?)"));
}

TEST_CASE("--skip-malformed is kept in config.json and the checkpoint") {
  TempDir dir;
  Config c = sentiment_test::tiny_config(1);
  c.train.skip_malformed = true;
  train_tiny(dir, "run", c);
  CHECK(load_model((dir.path / "run").string()).config.train.skip_malformed);
  CHECK(read_record(resume_checkpoint((dir.path / "run").string())).config["train"]["skip_malformed"] == true);
}

TEST_CASE("config.json records the data file's stamp") {
  TempDir dir;
  train_tiny(dir, "run");
  const FileStamp want = stamp_of(tg::read_file((dir.path / "tiny.tsv").string(), 1 << 20));
  CHECK(load_model((dir.path / "run").string()).config.files.data == want);
  CHECK(want.bytes > 0);
}

// config.json is not among them: train removes it before it writes the model files (so a symlink to /dev/full
// cannot stand in for a full disk there); its write is write_file_atomic's, checked as the others.
TEST_CASE("a full disk while the final files are written is an error naming the file") {
  for (const char* name : {"metrics.jsonl", "learning_curve.svg", "vocab.txt", "model.safetensors"}) {
    CAPTURE(name);
    TempDir dir;
    fs::create_directories(dir.path / "run");
    fs::create_symlink("/dev/full", dir.path / "run" / name);
    const std::string error = error_of([&] { train_tiny(dir, "run"); });
    CAPTURE(error);
    CHECK(contains(error, (fs::path("run") / name).string() + ": write failed: No space left on device"));
  }
}

TEST_CASE("a retrain that fails while the model files are replaced leaves no config.json: refused, not mixed") {
  TempDir dir;
  train_tiny(dir, "run");
  const std::string run = (dir.path / "run").string();
  CHECK_NOTHROW(load_model(run));
  fs::remove(dir.path / "run" / "vocab.txt");  // written after model.safetensors: the new weights are in by then
  fs::create_symlink("/dev/full", dir.path / "run" / "vocab.txt");
  CHECK(contains(error_of([&] { train_tiny(dir, "run"); }), "vocab.txt: write failed: No space left on device"));
  CHECK(!fs::exists(dir.path / "run" / "config.json"));
  CHECK(contains(error_of([&] { load_model(run); }), "has no config.json"));
}

TEST_CASE("Vocab, Lexicon: a write to a full disk names the file") {
  CHECK_THROWS_WITH_AS(Vocab().save("/dev/full"), "Vocab::save /dev/full: write failed: No space left on device",
                       tg::Error);
  CHECK_THROWS_WITH_AS(Lexicon::load(default_lexicon_path()).save("/dev/full"),
                       "Lexicon::save /dev/full: write failed: No space left on device", tg::Error);
}

TEST_CASE("reads are bounded: a data file, lexicon or vocabulary that never ends names the file and the limit") {
  CHECK_THROWS_WITH_AS(read_examples("/dev/zero"), "read_examples: '/dev/zero' is larger than the limit of 268435456 "
                       "bytes (a device or stream that does not end?)", tg::ValueError);
  CHECK_THROWS_WITH_AS(Lexicon::load("/dev/urandom"), doctest::Contains("'/dev/urandom' is larger than the limit of "
                       "67108864 bytes"), tg::ValueError);
  CHECK_THROWS_WITH_AS(Vocab::load("/dev/zero"), doctest::Contains("'/dev/zero' is larger than the limit"), tg::ValueError);
}

TEST_CASE("a lexicon path that is a directory says so") {
  TempDir dir;
  CHECK_THROWS_WITH_AS(Lexicon::load(dir.str()), ("Lexicon::load: '" + dir.str() + "' is a directory, expected a "
                       "file").c_str(), tg::ValueError);
}

TEST_CASE("binary bytes in a data, lexicon or vocabulary file are quoted escaped and in full") {
  TempDir dir;
  const std::string data = dir.write("bin.tsv", "text\tlabel\nok\t1\0x\xff\n"s);
  CHECK_THROWS_WITH_AS(read_examples(data), ("read_examples: " + data + ":2: label '1\\x00x\\xFF' is not an "
                       "integer").c_str(), tg::ValueError);
  const std::string lex = dir.write("lex.tsv", "good\t2\0\x01\n"s);
  CHECK_THROWS_WITH_AS(Lexicon::load(lex), doctest::Contains("got '2\\x00\\x01'"), tg::ValueError);
  const std::string vocab = dir.write("vocab.txt", "<pad>\n<unk>\na\0b\na\0b\n"s);
  CHECK_THROWS_WITH_AS(Vocab::load(vocab), doctest::Contains("duplicate token 'a\\x00b'"), tg::ValueError);
}
