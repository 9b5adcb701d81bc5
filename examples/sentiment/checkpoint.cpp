// Checkpoints as one safetensors file, so that one atomic rename switches from the previous checkpoint to
// the next: tensors under "model.", "best." and "optim." prefixes; counters, generator states, the config
// and the metrics log as metadata strings. Numbers are written as shortest round-trip decimals (fmt "{}"),
// which read back to the same bits.
#include "checkpoint.h"

#include <charconv>
#include <cmath>
#include <cstdlib>

#include "config.h"

namespace sentiment {
namespace {

constexpr const char* kFormat = "tensorgrad-sentiment-checkpoint";
constexpr const char* kVersion = "1";

// Adds `from` to `to` with every key prefixed.
template <class Map>
void put_prefixed(Map& to, const std::string& prefix, const Map& from) {
  for (const auto& [k, v] : from) to[prefix + k] = v;
}

// The entries of `from` whose key starts with `prefix`, with the prefix removed.
template <class Map>
Map take_prefixed(const Map& from, const std::string& prefix) {
  Map out;
  for (auto it = from.lower_bound(prefix); it != from.end() && it->first.starts_with(prefix); ++it)
    out[it->first.substr(prefix.size())] = it->second;
  return out;
}

// Reads metadata values, naming the file and the key in every error.
struct Reader {
  const std::map<std::string, std::string>& meta;
  const std::string& path;

  const std::string& text(const std::string& key) const {
    auto it = meta.find(key);
    tg::check<tg::ValueError>(it != meta.end(), "checkpoint {}: no '{}' (not a checkpoint of this version?)", path, key);
    return it->second;
  }
  template <class Int = int64_t>
  Int integer(const std::string& key) const {
    const std::string& s = text(key);
    Int v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    tg::check<tg::ValueError>(ec == std::errc() && end == s.data() + s.size(), "checkpoint {}: '{}' is not an integer: '{}'",
                              path, key, tg::escape_bytes(s));
    return v;
  }
  double real(const std::string& key) const {
    const std::string& s = text(key);
    char* end = nullptr;
    double v = std::strtod(s.c_str(), &end);
    tg::check<tg::ValueError>(!s.empty() && end == s.c_str() + s.size(), "checkpoint {}: '{}' is not a number: '{}'", path,
                              key, tg::escape_bytes(s));
    return v;
  }
  nlohmann::json json(const std::string& key) const {
    try {
      return nlohmann::json::parse(text(key));
    } catch (const nlohmann::json::exception& e) {
      throw tg::ValueError(fmt::format("checkpoint {}: '{}' is not valid JSON: {}", path, key, tg::escape_bytes(e.what())));
    }
  }
};

// The counters of a run that could have written them: a checkpoint edited or damaged into epoch -1, step -5
// or lr_scale 0 is refused here rather than resumed into a schedule that makes no sense.
void check_ranges(const Checkpoint& c, const std::string& path) {
  using tg::ValueError;
  tg::check<ValueError>(c.epoch >= 0 && c.epoch <= kMaxEpochs, "checkpoint {}: epoch must be in [0, {}], got {}", path,
                        kMaxEpochs, c.epoch);
  tg::check<ValueError>(c.step >= 0, "checkpoint {}: step must be >= 0, got {}", path, c.step);
  tg::check<ValueError>(c.rollbacks >= 0, "checkpoint {}: rollbacks must be >= 0, got {}", path, c.rollbacks);
  tg::check<ValueError>(c.lr_scale > 0 && c.lr_scale <= 1, "checkpoint {}: lr_scale must be in (0, 1], got {}", path,
                        c.lr_scale);
  tg::check<ValueError>(c.best_epoch >= 0 && c.best_epoch <= c.epoch, "checkpoint {}: best_epoch must be in [0, epoch "
                        "{}], got {}", path, c.epoch, c.best_epoch);
  tg::check<ValueError>(c.best_val == -1 || (c.best_val >= 0 && c.best_val <= 1), "checkpoint {}: best_val must be -1 "
                        "(none) or an accuracy in [0, 1], got {}", path, c.best_val);
  tg::check<ValueError>(c.log.size() <= size_t(c.epoch), "checkpoint {}: {} epochs in 'log', more than the {} done",
                        path, c.log.size(), c.epoch);
}

}  // namespace

nlohmann::json epoch_json(const EpochLog& e) {
  auto or_null = [](double v) { return std::isnan(v) ? nlohmann::json() : nlohmann::json(v); };
  return {{"epoch", e.epoch}, {"train_loss", e.train_loss}, {"train_accuracy", e.train_accuracy},
          {"val_accuracy", or_null(e.val_accuracy)}, {"lr", e.lr}, {"seconds", e.seconds},
          {"sentences_per_second", e.sentences_per_second}};
}

EpochLog epoch_from_json(const nlohmann::json& j) {
  try {
    auto number = [&](const char* key) { return j.at(key).is_null() ? NAN : j.at(key).get<double>(); };
    return {j.at("epoch").get<int64_t>(), number("train_loss"), number("train_accuracy"), number("val_accuracy"),
            number("lr"), number("seconds"), number("sentences_per_second")};
  } catch (const nlohmann::json::exception& e) {
    throw tg::ValueError(fmt::format("epoch log entry {}: {}", tg::escape_bytes(j.dump()), e.what()));
  }
}

void save_checkpoint(const std::string& path, const Checkpoint& c) {
  tg::TensorMap tensors;
  put_prefixed(tensors, "model.", c.model);
  put_prefixed(tensors, "best.", c.best_model);
  put_prefixed(tensors, "optim.", c.optimizer.tensors);
  nlohmann::json log = nlohmann::json::array();
  for (const EpochLog& e : c.log) log.push_back(epoch_json(e));
  std::map<std::string, std::string> meta = {
      {"format", kFormat}, {"version", kVersion}, {"config", c.config.dump()}, {"seed", fmt::format("{}", c.seed)},
      {"data", c.data_fingerprint}, {"data_path", c.data_path}, {"epoch", fmt::format("{}", c.epoch)}, {"step", fmt::format("{}", c.step)},
      {"lr_scale", fmt::format("{}", c.lr_scale)}, {"rollbacks", fmt::format("{}", c.rollbacks)},
      {"rng.default", c.default_rng}, {"rng.shuffle", c.shuffle_rng}, {"best_val", fmt::format("{}", c.best_val)},
      {"best_epoch", fmt::format("{}", c.best_epoch)}, {"log", log.dump()}};
  put_prefixed(meta, "optim.", c.optimizer.values);
  for (size_t k = 0; k < c.member_rngs.size(); ++k) meta[fmt::format("rng.member.{}", k)] = c.member_rngs[k];
  tg::save_safetensors(path, tensors, meta);
}

Checkpoint load_checkpoint(const std::string& path) { return parse_checkpoint(tg::load_safetensors(path), path); }

Checkpoint parse_checkpoint(const tg::Safetensors& file, const std::string& path) {
  const Reader r{file.metadata, path};
  tg::check<tg::ValueError>(r.text("format") == kFormat, "checkpoint {}: format '{}', expected '{}'", path,
                            tg::escape_bytes(r.text("format")), kFormat);
  tg::check<tg::ValueError>(r.text("version") == kVersion, "checkpoint {}: version {}, this program reads version {}",
                            path, tg::escape_bytes(r.text("version")), kVersion);
  Checkpoint c;
  c.config = r.json("config");
  c.seed = r.integer<uint64_t>("seed");
  c.data_fingerprint = r.text("data");
  if (auto it = file.metadata.find("data_path"); it != file.metadata.end()) c.data_path = it->second;  // absent before
  c.epoch = r.integer("epoch"), c.step = r.integer("step"), c.rollbacks = r.integer("rollbacks");
  c.lr_scale = r.real("lr_scale");
  c.default_rng = r.text("rng.default"), c.shuffle_rng = r.text("rng.shuffle");
  for (size_t k = 0; file.metadata.contains(fmt::format("rng.member.{}", k)); ++k)
    c.member_rngs.push_back(file.metadata.at(fmt::format("rng.member.{}", k)));
  c.best_val = r.real("best_val"), c.best_epoch = r.integer("best_epoch");
  const nlohmann::json log = r.json("log");
  tg::check<tg::ValueError>(log.is_array(), "checkpoint {}: 'log' must be a JSON array", path);
  try {
    for (const nlohmann::json& e : log) c.log.push_back(epoch_from_json(e));
  } catch (const tg::ValueError& e) {
    throw tg::ValueError(fmt::format("checkpoint {}: 'log': {}", path, e.what()));
  }
  check_ranges(c, path);
  c.model = take_prefixed(file.tensors, "model.");
  c.best_model = take_prefixed(file.tensors, "best.");
  c.optimizer = {take_prefixed(file.tensors, "optim."), take_prefixed(file.metadata, "optim.")};
  return c;
}

}  // namespace sentiment
