// Tests for the sentiment example's configurations (named ones, JSON round trip, errors naming the key)
// and its classification metrics on hand-made confusion matrices.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "config.h"
#include "model.h"
#include "report.h"
#include "core/error.h"

using namespace sentiment;
using Ids = std::vector<int64_t>;

namespace {

void check_same(const Config& a, const Config& b) {
  CHECK(a.name == b.name);
  const ModelConfig &m = a.model, &n = b.model;
  CHECK(m.vocab_size == n.vocab_size);
  CHECK(m.max_len == n.max_len);
  CHECK(m.architecture == n.architecture);
  CHECK(m.d_model == n.d_model);
  CHECK(m.hidden_size == n.hidden_size);
  CHECK(m.bidirectional == n.bidirectional);
  CHECK(m.num_heads == n.num_heads);
  CHECK(m.num_layers == n.num_layers);
  CHECK(m.dim_feedforward == n.dim_feedforward);
  CHECK(m.dropout == n.dropout);
  CHECK(m.activation == n.activation);
  CHECK(m.norm_first == n.norm_first);
  CHECK(m.pooling == n.pooling);
  CHECK(m.positional == n.positional);
  CHECK(m.token_dropout == n.token_dropout);
  CHECK(m.embedding_std == n.embedding_std);
  CHECK(m.num_classes == n.num_classes);
  CHECK(m.ensemble == n.ensemble);
  CHECK(m.subword_buckets == n.subword_buckets);
  CHECK(m.subword_combine == n.subword_combine);
  CHECK(m.lexicon_weight == n.lexicon_weight);
  CHECK(m.embedding_norm == n.embedding_norm);
  CHECK(m.qk_init_scale == n.qk_init_scale);
  const TrainConfig &t = a.train, &u = b.train;
  CHECK(t.epochs == u.epochs);
  CHECK(t.batch_size == u.batch_size);
  CHECK(t.optimizer == u.optimizer);
  CHECK(t.lr == u.lr);
  CHECK(t.weight_decay == u.weight_decay);
  CHECK(t.label_smoothing == u.label_smoothing);
  CHECK(t.warmup_epochs == u.warmup_epochs);
  CHECK(t.schedule == u.schedule);
  CHECK(t.clip_grad_norm == u.clip_grad_norm);
  CHECK(t.val_fraction == u.val_fraction);
  CHECK(t.keep_best == u.keep_best);
  CHECK(t.min_freq == u.min_freq);
  CHECK(t.ensemble_data == u.ensemble_data);
}

// The confusion matrix [truth][predicted] = [[3, 1], [2, 4]] as label vectors.
const Ids kTruth = {0, 0, 0, 0, 1, 1, 1, 1, 1, 1};
const Ids kPredicted = {0, 0, 0, 1, 0, 0, 1, 1, 1, 1};

}  // namespace

// ---------------------------------------------------------------------------------------------- Config

TEST_CASE("config_by_name: reference is the struct defaults, default is the tuned recipe") {
  Config r = config_by_name("reference"), d = config_by_name("default");
  CHECK(r.name == "reference");
  Config defaults;
  defaults.name = "reference";
  check_same(r, defaults);
  CHECK(d.name == "default");
  CHECK(d.train.optimizer == OptimizerKind::adamw);
  CHECK(d.train.schedule == Schedule::cosine);
  CHECK_FALSE(d.train.keep_best);  // a fixed epoch count, chosen on validation
  CHECK(d.train.val_fraction == 0);  // validated out-of-fold instead
  CHECK(d.train.epochs == 8);
  CHECK(d.model.ensemble == 3);      // three networks, each trained on two of three folds
  CHECK(d.train.ensemble_data == EnsembleData::folds);
  CHECK(r.model.ensemble == 1);
  CHECK(r.train.ensemble_data == EnsembleData::shared);
  CHECK(d.model.embedding_std < r.model.embedding_std);  // small initial embeddings
  CHECK(d.model.subword_buckets == 4096);                 // character n-grams
  CHECK(d.model.pooling == Pooling::mean_max);
  CHECK(r.model.pooling == Pooling::mean);
  CHECK(r.model.subword_buckets == 0);
  CHECK(d.model.lexicon_weight == 3);  // AFINN valences
  CHECK(r.model.lexicon_weight == 0);
  CHECK(d.model.embedding_norm);  // unit-scale inputs for layer 0's attention
  CHECK(d.model.qk_init_scale == 3);
  CHECK_FALSE(r.model.embedding_norm);
  CHECK(r.model.qk_init_scale == 1);
}

TEST_CASE("config_by_name rejects another name, naming it") {
  CHECK_THROWS_WITH_AS(config_by_name("best"), doctest::Contains("unknown config 'best'"), tg::ValueError);
  CHECK_THROWS_AS(config_by_name(""), tg::ValueError);
}

TEST_CASE("Config JSON round trip keeps every field, through text") {
  for (const char* name : {"reference", "default"}) {
    CAPTURE(name);
    Config c = config_by_name(name);
    c.model.vocab_size = 4321;
    check_same(nlohmann::json::parse(nlohmann::json(c).dump()).get<Config>(), c);
  }
  Config custom;  // every field away from its default
  custom.name = "custom-1";
  custom.model = {.vocab_size = 99, .max_len = 17, .architecture = Architecture::gru, .d_model = 24, .num_heads = 3,
                  .num_layers = 5, .dim_feedforward = 40, .dropout = 0.123456789, .hidden_size = 33,
                  .bidirectional = true, .activation = Activation::gelu, .norm_first = true,
                  .pooling = Pooling::max, .positional = Positional::none, .token_dropout = 0.25, .embedding_std = 0.0625, .num_classes = 3,
                  .ensemble = 4, .subword_buckets = 8192, .subword_combine = SubwordCombine::sum, .lexicon_weight = 5,
                  .embedding_norm = true, .qk_init_scale = 2.5};
  custom.train = {.epochs = 7, .batch_size = 9, .optimizer = OptimizerKind::adamw, .lr = 1.5e-4, .weight_decay = 0.3,
                  .label_smoothing = 0.05, .warmup_epochs = 2, .schedule = Schedule::cosine, .clip_grad_norm = 1.25,
                  .val_fraction = 0.2, .keep_best = true, .min_freq = 3, .ensemble_data = EnsembleData::folds};
  check_same(nlohmann::json::parse(nlohmann::json(custom).dump(2)).get<Config>(), custom);
}

TEST_CASE("Config from JSON names a missing or mistyped key") {
  nlohmann::json j = config_by_name("reference");
  j["model"].erase("num_heads");
  CHECK_THROWS_WITH_AS(j.get<Config>(), doctest::Contains("'model.num_heads'"), tg::ValueError);
  j = config_by_name("reference");
  j["train"]["lr"] = "fast";
  CHECK_THROWS_WITH_AS(j.get<Config>(), doctest::Contains("'train.lr'"), tg::ValueError);
  j = config_by_name("reference");
  j.erase("train");
  CHECK_THROWS_WITH_AS(j.get<Config>(), doctest::Contains("'train.epochs'"), tg::ValueError);
}

// vocab_size 1e30 was converted to an int64 (undefined behaviour) and reported as -9223372036854775808.
TEST_CASE("Config from JSON refuses a count that is not a whole number in the range of int64") {
  for (const char* v : {"1e30", "5.5", "18446744073709551615"}) {
    nlohmann::json j = config_by_name("reference");
    j["model"]["vocab_size"] = nlohmann::json::parse(v);
    const std::string message = "config: 'model.vocab_size' must be a whole number in the range of int64, got " +
                                j["model"]["vocab_size"].dump();
    CHECK_THROWS_WITH_AS(j.get<Config>(), doctest::Contains(message.c_str()), tg::ValueError);
  }
}

TEST_CASE("Config from JSON refuses an unknown key or section, so a misspelt one is not ignored") {
  nlohmann::json j = config_by_name("reference");
  j["train"]["learning_rate"] = 0.1;
  CHECK_THROWS_WITH_AS(j.get<Config>(), "config: unknown key 'train.learning_rate'", tg::ValueError);
  j = config_by_name("reference");
  j["optim"] = nlohmann::json::object();
  CHECK_THROWS_WITH_AS(j.get<Config>(), "config: unknown section 'optim' (expected name, model, train, files)", tg::ValueError);
  j = config_by_name("reference");
  j["model"] = 3;
  CHECK_THROWS_WITH_AS(j.get<Config>(), "config: 'model' must be an object, got number", tg::ValueError);
  CHECK_THROWS_WITH_AS(nlohmann::json::array().get<Config>(), "config: expected a JSON object, got array", tg::ValueError);
  j = config_by_name("reference");
  j["name"] = 3;  // was nlohmann's type_error, which the program reported as "not valid JSON"
  CHECK_THROWS_WITH_AS(j.get<Config>(), "config: 'name' must be a string, got 3", tg::ValueError);
}

// max_len 0 was reported by the position Embedding ("Embedding: num_embeddings ..."), d_model 10 with 4 heads by
// MultiHeadAttention, and a negative lr, weight_decay or label_smoothing only once training began, if at all.
TEST_CASE("check_config names the field of a model or train setting out of range, before any layer is built") {
  struct Case {
    const char* want;
    std::function<void(Config&)> set;
  };
  const Case cases[] = {
      {"model: max_len must be in [1, 1048576], got 0", [](Config& c) { c.model.max_len = 0; }},
      {"model: d_model 10 is not divisible by num_heads 4", [](Config& c) { c.model.d_model = 10; }},
      {"model: num_heads must be >= 1, got 0", [](Config& c) { c.model.num_heads = 0; }},
      {"model: num_layers must be in [1, 1024], got 0", [](Config& c) { c.model.num_layers = 0; }},
      {"model: dim_feedforward must be in [1, 1048576], got -1", [](Config& c) { c.model.dim_feedforward = -1; }},
      {"model: dropout must be in [0, 1), got -0.1", [](Config& c) { c.model.dropout = -0.1; }},
      {"model: dropout must be in [0, 1), got nan", [](Config& c) { c.model.dropout = NAN; }},
      {"model: embedding_std must be finite and > 0, got inf", [](Config& c) { c.model.embedding_std = INFINITY; }},
      {"model: qk_init_scale must be finite and > 0, got 0", [](Config& c) { c.model.qk_init_scale = 0; }},
      {"model: qk_init_scale must be finite and > 0, got nan", [](Config& c) { c.model.qk_init_scale = NAN; }},
      {"train: lr must be finite and >= 0, got -0.001", [](Config& c) { c.train.lr = -1e-3; }},
      {"train: weight_decay must be finite and >= 0, got -1", [](Config& c) { c.train.weight_decay = -1; }},
      {"train: label_smoothing must be in [0, 1], got 1.5", [](Config& c) { c.train.label_smoothing = 1.5; }},
      {"train: warmup_epochs must be in [0, 1000000], got 4611686018427387904",
       [](Config& c) { c.train.warmup_epochs = int64_t(1) << 62; }},  // × steps per epoch overflowed
      {"train: min_freq must be >= 1, got 0", [](Config& c) { c.train.min_freq = 0; }},
      {"train: ensemble_data 'folds' needs an ensemble of >= 2 members, got 1", [](Config& c) { c.model.ensemble = 1; }},
  };
  for (const Case& k : cases) {
    CAPTURE(k.want);
    Config c = config_by_name("default");
    c.model.vocab_size = 10;
    k.set(c);
    CHECK_THROWS_WITH_AS(check_config(c), k.want, tg::ValueError);
    if (std::string(k.want).starts_with("model:"))  // the model refuses it with the same message
      CHECK_THROWS_WITH_AS(Classifier{c.model}, k.want, tg::ValueError);
  }
  Config ok = config_by_name("default");
  CHECK_NOTHROW(check_config(ok));
  CHECK_NOTHROW(check_config(config_by_name("reference")));
}

// The choices are enums; config.json names them, and a name that is none of them is refused there.
struct ChoiceCase {
  const char* section;
  const char* key;
  const char* allowed;
};
const ChoiceCase kChoices[] = {
    {"model", "architecture", "transformer, lstm or gru"},
    {"model", "activation", "relu or gelu"},        {"model", "pooling", "mean, max or mean+max"},
    {"model", "positional", "learned or none"},     {"model", "subword_combine", "mean or sum"},
    {"train", "optimizer", "adam or adamw"},        {"train", "schedule", "cosine or constant"},
    {"train", "ensemble_data", "shared or folds"},
};

TEST_CASE("Config from JSON refuses an unknown choice, listing the allowed names; every name reads back") {
  for (const ChoiceCase& k : kChoices) {
    CAPTURE(k.key);
    nlohmann::json j = config_by_name("default");
    for (const char* bad : {"Cosine", "max+mean", ""}) {
      j[k.section][k.key] = bad;
      const std::string want = fmt::format("{}: {} must be {}, got '{}'", k.section, k.key, k.allowed, bad);
      CHECK_THROWS_WITH_AS(j.get<Config>(), want.c_str(), tg::ValueError);
    }
    j[k.section][k.key] = 3;
    CHECK_THROWS_WITH_AS(j.get<Config>(), fmt::format("config: missing or invalid '{}.{}'", k.section, k.key).c_str(),
                         tg::ValueError);
  }
  nlohmann::json j = config_by_name("reference");
  j["model"]["pooling"] = "mean+max", j["model"]["activation"] = "gelu", j["model"]["positional"] = "none";
  j["model"]["subword_combine"] = "sum", j["train"]["optimizer"] = "adamw", j["train"]["schedule"] = "cosine";
  j["train"]["ensemble_data"] = "folds", j["model"]["architecture"] = "lstm";
  const Config c = j.get<Config>();
  CHECK(c.model.architecture == Architecture::lstm);
  CHECK(c.model.pooling == Pooling::mean_max);
  CHECK(c.model.activation == Activation::gelu);
  CHECK(c.model.positional == Positional::none);
  CHECK(c.model.subword_combine == SubwordCombine::sum);
  CHECK(c.train.optimizer == OptimizerKind::adamw);
  CHECK(c.train.schedule == Schedule::cosine);
  CHECK(c.train.ensemble_data == EnsembleData::folds);
  CHECK(nlohmann::json(c)["model"]["pooling"] == "mean+max");
}

TEST_CASE("config values and names with NUL or binary bytes are quoted in full, escaped") {
  const std::string bad("re\0lu\x01\xff", 7), shown = "re\\x00lu\\x01\\xFF";
  for (const ChoiceCase& k : kChoices) {
    CAPTURE(k.key);
    nlohmann::json j = config_by_name("default");
    j[k.section][k.key] = bad;
    const std::string want = fmt::format("{}: {} must be {}, got '{}'", k.section, k.key, k.allowed, shown);
    CHECK_THROWS_WITH_AS(j.get<Config>(), want.c_str(), tg::ValueError);
  }
  CHECK_THROWS_WITH_AS(config_by_name(bad), ("unknown config '" + shown + "': expected 'reference' or 'default'").c_str(),
                       tg::ValueError);
}

// Model directories written before embedding_std existed were trained with N(0, 1) embeddings.
TEST_CASE("Config from JSON without embedding_std (an older model directory) reads it as 1") {
  nlohmann::json j = config_by_name("default");
  j["model"].erase("embedding_std");
  CHECK(j.get<Config>().model.embedding_std == 1.0);
}

TEST_CASE("Config from JSON without subword_buckets (an older model directory) reads it as 0: no sub-words") {
  nlohmann::json j = config_by_name("default");
  j["model"].erase("subword_buckets");
  CHECK(j.get<Config>().model.subword_buckets == 0);
}

TEST_CASE("Config from JSON without subword_combine (an older model directory) reads it as mean, fastText's") {
  nlohmann::json j = config_by_name("default");
  j["model"].erase("subword_combine");
  CHECK(j.get<Config>().model.subword_combine == SubwordCombine::mean);
}

TEST_CASE("Config from JSON without embedding_norm (an older model directory) reads it as false") {
  nlohmann::json j = config_by_name("default");
  j["model"]["embedding_norm"] = true;
  CHECK(j.get<Config>().model.embedding_norm);
  j["model"].erase("embedding_norm");
  CHECK_FALSE(j.get<Config>().model.embedding_norm);
  j["model"]["embedding_norm"] = 1.5;
  CHECK_THROWS_WITH_AS(j.get<Config>(), doctest::Contains("'model.embedding_norm'"), tg::ValueError);
}

TEST_CASE("Config from JSON without architecture, hidden_size, bidirectional (an older model directory): a transformer") {
  nlohmann::json j = config_by_name("default");
  j["model"]["architecture"] = "gru", j["model"]["hidden_size"] = 12, j["model"]["bidirectional"] = true;
  Config c = j.get<Config>();
  CHECK(c.model.architecture == Architecture::gru);
  CHECK(c.model.hidden_size == 12);
  CHECK(c.model.bidirectional);
  for (const char* key : {"architecture", "hidden_size", "bidirectional"}) j["model"].erase(key);
  c = j.get<Config>();
  CHECK(c.model.architecture == Architecture::transformer);
  CHECK(c.model.hidden_size == 64);
  CHECK_FALSE(c.model.bidirectional);
  j["model"]["bidirectional"] = "yes";
  CHECK_THROWS_WITH_AS(j.get<Config>(), "config: missing or invalid 'model.bidirectional'", tg::ValueError);
}

TEST_CASE("an RNN config: hidden_size in range; num_heads need not divide d_model; encoded_width") {
  ModelConfig m;
  m.architecture = Architecture::lstm, m.num_heads = 5, m.hidden_size = 16;
  CHECK_NOTHROW(check_model_config(m));
  CHECK(encoded_width(m) == 16);
  m.bidirectional = true;
  CHECK(encoded_width(m) == 32);
  m.hidden_size = 0;
  CHECK_THROWS_WITH_AS(check_model_config(m), "model: hidden_size must be in [1, 1048576], got 0", tg::ValueError);
  m.architecture = Architecture::transformer, m.hidden_size = 16;
  CHECK(encoded_width(m) == 64);  // d_model
  CHECK_THROWS_WITH_AS(check_model_config(m), "model: d_model 64 is not divisible by num_heads 5", tg::ValueError);
}

TEST_CASE("the committed RNN configs (examples/sentiment/configs) read and pass the checks") {
  for (const char* name : {"lstm", "gru"}) {
    CAPTURE(name);
    const std::string path = std::string(SENTIMENT_DATA_DIR) + "/../configs/" + name + ".json";
    const Config c = nlohmann::json::parse(tg::read_file(path, 1 << 20, "test")).get<Config>();
    CHECK_NOTHROW(check_config(c));
    CHECK(name_of(c.model.architecture) == name);
    CHECK(c.model.bidirectional);
    CHECK(c.model.hidden_size == 64);
    CHECK(c.train.epochs == 4);
  }
}

TEST_CASE("Config from JSON without qk_init_scale (an older model directory) reads it as 1: Xavier's start") {
  nlohmann::json j = config_by_name("default");
  j["model"]["qk_init_scale"] = 3;
  CHECK(j.get<Config>().model.qk_init_scale == 3.0);
  j["model"].erase("qk_init_scale");
  CHECK(j.get<Config>().model.qk_init_scale == 1.0);
  j["model"]["qk_init_scale"] = "big";
  CHECK_THROWS_WITH_AS(j.get<Config>(), doctest::Contains("'model.qk_init_scale'"), tg::ValueError);
}

TEST_CASE("Config from JSON without lexicon_weight (an older model directory) reads it as 0; its range; it needs sub-words") {
  nlohmann::json j = config_by_name("default");
  j["model"]["lexicon_weight"] = 2;
  CHECK(j.get<Config>().model.lexicon_weight == 2);
  j["model"].erase("lexicon_weight");
  CHECK(j.get<Config>().model.lexicon_weight == 0);
  j["model"]["lexicon_weight"] = "yes";
  CHECK_THROWS_WITH_AS(j.get<Config>(), doctest::Contains("'model.lexicon_weight'"), tg::ValueError);
  Config c = config_by_name("default");
  c.model.lexicon_weight = -1;
  CHECK_THROWS_WITH_AS(check_config(c), doctest::Contains("model: lexicon_weight must be in [0, 48] (0 = off), got -1"),
                       tg::ValueError);
  c.model.lexicon_weight = 49;
  CHECK_THROWS_WITH_AS(check_config(c), doctest::Contains("got 49"), tg::ValueError);
  c.model.lexicon_weight = 1, c.model.subword_buckets = 0;
  CHECK_THROWS_WITH_AS(check_config(c), doctest::Contains("model: lexicon_weight needs subword_buckets > 0"),
                       tg::ValueError);
}

// Model directories written before ensembles hold one network.
TEST_CASE("Config from JSON without ensemble (an older model directory) reads it as 1") {
  Config c = config_by_name("default");
  c.model.ensemble = 3;
  nlohmann::json j = c;
  j["model"].erase("ensemble");
  CHECK(j.get<Config>().model.ensemble == 1);
}

// Model directories written before ensembles on folds trained their members on shared data.
TEST_CASE("Config from JSON without ensemble_data (an older model directory) reads it as shared") {
  Config c = config_by_name("default");
  c.train.ensemble_data = EnsembleData::folds;
  nlohmann::json j = c;
  j["train"].erase("ensemble_data");
  CHECK(j.get<Config>().train.ensemble_data == EnsembleData::shared);
}

TEST_CASE("Config from JSON without a name is called custom") {
  nlohmann::json j = config_by_name("reference");
  j.erase("name");
  CHECK(j.get<Config>().name == "custom");
}

// ---------------------------------------------------------------------------------------------- metrics

TEST_CASE("compute_metrics on a hand-made confusion matrix") {
  Metrics m = compute_metrics(kPredicted, kTruth, 2);
  CHECK(m.confusion == std::vector<Ids>{{3, 1}, {2, 4}});
  CHECK(m.accuracy == doctest::Approx(0.7).epsilon(1e-15));
  // class 0: precision 3/5, recall 3/4, F1 2/3; class 1: precision 4/5, recall 4/6, F1 8/11.
  CHECK(m.precision == doctest::Approx((3.0 / 5 + 4.0 / 5) / 2).epsilon(1e-15));  // 0.7
  CHECK(m.recall == doctest::Approx((3.0 / 4 + 4.0 / 6) / 2).epsilon(1e-15));     // 17/24
  CHECK(m.f1 == doctest::Approx((2.0 / 3 + 8.0 / 11) / 2).epsilon(1e-15));        // 23/33
}

TEST_CASE("compute_metrics: a class never predicted has precision 0, not NaN; three classes") {
  // truth 0 0 1 1 2 2, predicted 0 1 1 1 1 0: class 2 is never predicted.
  Metrics m = compute_metrics({0, 1, 1, 1, 1, 0}, {0, 0, 1, 1, 2, 2}, 3);
  CHECK(m.confusion == std::vector<Ids>{{1, 1, 0}, {0, 2, 0}, {1, 1, 0}});
  CHECK(m.accuracy == doctest::Approx(0.5).epsilon(1e-15));
  // precision: 1/2, 2/4, 0; recall: 1/2, 1, 0; F1: 1/2, 2/3, 0.
  CHECK(m.precision == doctest::Approx(1.0 / 3).epsilon(1e-15));
  CHECK(m.recall == doctest::Approx(0.5).epsilon(1e-15));
  CHECK(m.f1 == doctest::Approx((0.5 + 2.0 / 3) / 3).epsilon(1e-15));
}

TEST_CASE("compute_metrics: all correct gives 1 everywhere") {
  Metrics m = compute_metrics({1, 0, 1}, {1, 0, 1}, 2);
  CHECK(m.accuracy == 1.0);
  CHECK(m.precision == 1.0);
  CHECK(m.recall == 1.0);
  CHECK(m.f1 == 1.0);
}

TEST_CASE("compute_metrics rejects mismatched lengths, no labels, and labels outside [0, num_classes)") {
  CHECK_THROWS_WITH_AS(compute_metrics({0, 1}, {0, 1, 1}, 2), doctest::Contains("2 predictions for 3 labels"),
                       tg::ValueError);
  CHECK_THROWS_AS(compute_metrics({}, {}, 2), tg::ValueError);
  CHECK_THROWS_WITH_AS(compute_metrics({0, 2}, {0, 1}, 2), doctest::Contains("outside [0, 2)"), tg::ValueError);
  CHECK_THROWS_AS(compute_metrics({0, 1}, {-1, 1}, 2), tg::ValueError);
}

TEST_CASE("format_metrics shows accuracy, macro scores and the confusion matrix") {
  std::string text = format_metrics(compute_metrics(kPredicted, kTruth, 2), {"negative", "positive"});
  CHECK(text.find("accuracy 0.7000") != std::string::npos);
  CHECK(text.find("F1 0.6970") != std::string::npos);  // 23/33
  CHECK(text.find("  negative         3         1") != std::string::npos);
  CHECK(text.find("  positive         2         4") != std::string::npos);
}
