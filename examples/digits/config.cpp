// Configurations: named recipes, JSON files, their checks, and the model directory's config.json.
#include "config.h"

#include <cmath>
#include <filesystem>

#include <tensorgrad/tensorgrad.h>

#include "files.h"

namespace digits {
namespace fs = std::filesystem;
namespace {

constexpr const char* kFormat = "tensorgrad-digits";
// Bounds far above any useful value, so that a config.json of absurd sizes is refused before anything is
// allocated (1024 × 1024 3×3 filters are 9.4M weights).
constexpr int64_t kMaxChannels = 1024, kMaxBatch = int64_t(1) << 20;

// Reads the fields of object `j` named in `fields` into their targets; ValueError for anything else.
template <class... Fields>
void read_fields(const nlohmann::json& j, const std::string& where, Fields... fields) {
  tg::check<tg::ValueError>(j.is_object(), "{}: expected a JSON object, got {}", where, j.dump());
  for (const auto& item : j.items()) {  // not a structured binding: clang 14's lambdas cannot capture one
    const std::string& key = item.key();
    const nlohmann::json& value = item.value();
    bool known = false;
    auto read = [&](const auto& field) {
      if (key != field.first) return;
      known = true;
      try {
        value.get_to(*field.second);
      } catch (const nlohmann::json::exception&) {
        throw tg::ValueError(fmt::format("{}: field '{}' has the wrong type: {}", where, key, value.dump()));
      }
    };
    (read(fields), ...);
    tg::check<tg::ValueError>(known, "{}: unknown field '{}'", where, tg::escape_bytes(key));
  }
}

template <class T>
std::pair<const char*, T*> field(const char* name, T& target) {
  return {name, &target};
}

}  // namespace

Config config_by_name(const std::string& name) {
  Config c;
  c.name = name;
  if (name == "default") return c;
  if (name == "tiny") {
    c.model = {.channels1 = 4, .channels2 = 8, .dropout = 0.25};
    c.train.epochs = 2, c.train.batch_size = 64;
    return c;
  }
  throw tg::ValueError(fmt::format("unknown config '{}': expected default, tiny or the path of a JSON file",
                                   tg::escape_bytes(name)));
}

Config load_config(const std::string& name_or_path) {
  const std::optional<nlohmann::json> j = examples::config_file(name_or_path);
  return j ? config_from_json(*j, "config file '" + name_or_path + "'") : config_by_name(name_or_path);
}

void check_config(const Config& c) {
  const ModelConfig& m = c.model;
  const TrainConfig& t = c.train;
  tg::check<tg::ValueError>(m.channels1 >= 1 && m.channels2 >= 1 && m.channels1 <= kMaxChannels &&
                            m.channels2 <= kMaxChannels, "model: channels1 and channels2 must be in [1, {}], got {} "
                            "and {}", kMaxChannels, m.channels1, m.channels2);
  tg::check<tg::ValueError>(m.dropout >= 0 && m.dropout < 1, "model: dropout must be in [0, 1), got {}", m.dropout);
  tg::check<tg::ValueError>(t.epochs >= 1 && t.epochs <= 1000000, "train: epochs must be in [1, 1000000], got {}",
                            t.epochs);
  tg::check<tg::ValueError>(t.batch_size >= 1 && t.batch_size <= kMaxBatch, "train: batch_size must be in [1, {}], "
                            "got {}", kMaxBatch, t.batch_size);
  tg::check<tg::ValueError>(std::isfinite(t.lr) && t.lr > 0, "train: lr must be finite and > 0, got {}", t.lr);
  tg::check<tg::ValueError>(std::isfinite(t.weight_decay) && t.weight_decay >= 0, "train: weight_decay must be finite "
                            "and >= 0, got {}", t.weight_decay);
  tg::check<tg::ValueError>(t.schedule == "cosine" || t.schedule == "constant", "train: schedule must be cosine or "
                            "constant, got '{}'", tg::escape_bytes(t.schedule));
}

nlohmann::json to_json(const Config& c) {
  return {{"name", c.name},
          {"model", {{"channels1", c.model.channels1}, {"channels2", c.model.channels2}, {"dropout", c.model.dropout}}},
          {"train", {{"epochs", c.train.epochs}, {"batch_size", c.train.batch_size}, {"lr", c.train.lr},
                     {"weight_decay", c.train.weight_decay}, {"schedule", c.train.schedule}}}};
}

Config config_from_json(const nlohmann::json& j, const std::string& where) {
  Config c;
  nlohmann::json model = nlohmann::json::object(), train = nlohmann::json::object();
  read_fields(j, where, field("name", c.name), field("model", model), field("train", train));
  ModelConfig& m = c.model;
  TrainConfig& t = c.train;
  read_fields(model, where + ": model", field("channels1", m.channels1), field("channels2", m.channels2),
              field("dropout", m.dropout));
  read_fields(train, where + ": train", field("epochs", t.epochs), field("batch_size", t.batch_size),
              field("lr", t.lr), field("weight_decay", t.weight_decay), field("schedule", t.schedule));
  return c;
}

void save_run_info(const std::string& dir, const RunInfo& info) {
  const nlohmann::json j = {{"format", kFormat}, {"config", to_json(info.config)}, {"seed", info.seed},
                            {"data", info.data}};
  const std::string text = j.dump(2) + "\n";
  tg::write_file_atomic((fs::path(dir) / "config.json").string(), {text}, "digits: cannot write");
}

RunInfo load_run_info(const std::string& dir) {
  const fs::path path = fs::path(dir) / "config.json";
  tg::check<tg::ValueError>(fs::is_directory(dir), "model directory '{}' {} (train one with `digits train --out {}`)",
                            dir, fs::exists(dir) ? "is not a directory" : "does not exist", dir);
  tg::check<tg::ValueError>(fs::is_regular_file(path), "model directory '{}' has no config.json (train one with "
                            "`digits train --out {}`)", dir, dir);
  const nlohmann::json j = examples::read_json(path.string(), examples::kMaxConfigBytes,
                                              fmt::format("model directory '{}'", dir));
  tg::check<tg::ValueError>(j.is_object() && j.value("format", "") == kFormat, "model directory '{}' is not a digits "
                            "model: its config.json has no \"format\": \"{}\"", dir, kFormat);
  RunInfo info;
  nlohmann::json config = nlohmann::json::object();
  std::string format;
  read_fields(j, "model directory '" + dir + "': config.json", field("format", format), field("config", config),
              field("seed", info.seed), field("data", info.data));
  info.config = config_from_json(config, "model directory '" + dir + "': config.json: config");
  check_config(info.config);
  return info;
}

}  // namespace digits
