// The run's record in the checkpoint's user metadata, which the library stores as "user.<key>" strings
// beside the training state. Numbers are written as shortest round-trip decimals (fmt "{}"), which read
// back to the same bits.
#include "checkpoint.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "config.h"

namespace sentiment {
namespace fs = std::filesystem;
namespace {

// Reads the record's metadata values, naming the file and the key in every error.
struct Reader {
  const std::map<std::string, std::string>& meta;
  const std::string& path;

  const std::string& text(const std::string& key) const {
    auto it = meta.find("user." + key);
    tg::check<tg::ValueError>(it != meta.end(), "checkpoint {}: no 'user.{}' (not a sentiment checkpoint?)", path, key);
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
void check_ranges(const RunRecord& r) {
  using tg::ValueError;
  const std::string& path = r.path;
  tg::check<ValueError>(r.epoch >= 0 && r.epoch <= kMaxEpochs, "checkpoint {}: epoch must be in [0, {}], got {}", path,
                        kMaxEpochs, r.epoch);
  tg::check<ValueError>(r.step >= 0, "checkpoint {}: step must be >= 0, got {}", path, r.step);
  tg::check<ValueError>(r.rollbacks >= 0, "checkpoint {}: rollbacks must be >= 0, got {}", path, r.rollbacks);
  tg::check<ValueError>(r.lr_scale > 0 && r.lr_scale <= 1, "checkpoint {}: lr_scale must be in (0, 1], got {}", path,
                        r.lr_scale);
  tg::check<ValueError>(r.log.size() <= size_t(r.epoch), "checkpoint {}: {} epochs in 'log', more than the {} done",
                        path, r.log.size(), r.epoch);
}

// The checkpoint file of earlier versions, one per model directory.
fs::path old_format(const std::string& dir) { return fs::path(dir) / "checkpoint.safetensors"; }

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

std::map<std::string, std::string> record_metadata(const RunRecord& r) {
  nlohmann::json log = nlohmann::json::array();
  for (const EpochLog& e : r.log) log.push_back(epoch_json(e));
  std::map<std::string, std::string> meta = {
      {"config", r.config.dump()}, {"seed", fmt::format("{}", r.seed)}, {"data", r.data_fingerprint},
      {"data_path", r.data_path}, {"epoch", fmt::format("{}", r.epoch)}, {"step", fmt::format("{}", r.step)},
      {"lr_scale", fmt::format("{}", r.lr_scale)}, {"rollbacks", fmt::format("{}", r.rollbacks)}, {"log", log.dump()}};
  for (size_t k = 0; k < r.member_rngs.size(); ++k) meta[fmt::format("rng.member.{}", k)] = r.member_rngs[k];
  return meta;
}

RunRecord read_record(const std::string& path) {
  return parse_record(tg::load_safetensors(path).metadata, path);  // ValueError naming the file
}

RunRecord parse_record(const std::map<std::string, std::string>& metadata, const std::string& path) {
  const Reader in{metadata, path};
  RunRecord r;
  r.path = path;
  r.config = in.json("config");
  r.seed = in.integer<uint64_t>("seed");
  r.data_fingerprint = in.text("data"), r.data_path = in.text("data_path");
  r.epoch = in.integer("epoch"), r.step = in.integer("step"), r.rollbacks = in.integer("rollbacks");
  r.lr_scale = in.real("lr_scale");
  for (size_t k = 0; metadata.contains(fmt::format("user.rng.member.{}", k)); ++k)
    r.member_rngs.push_back(in.text(fmt::format("rng.member.{}", k)));
  const nlohmann::json log = in.json("log");
  tg::check<tg::ValueError>(log.is_array(), "checkpoint {}: 'log' must be a JSON array", path);
  try {
    for (const nlohmann::json& e : log) r.log.push_back(epoch_from_json(e));
  } catch (const tg::ValueError& e) {
    throw tg::ValueError(fmt::format("checkpoint {}: 'log': {}", path, e.what()));
  }
  check_ranges(r);
  return r;
}

std::string resume_checkpoint(const std::string& out_dir) {
  const std::optional<std::string> newest = tg::train::CheckpointManager({}, {.dir = out_dir}).newest();
  if (newest) return *newest;
  tg::check<tg::ValueError>(!fs::is_regular_file(old_format(out_dir)), "resume: '{}' holds {}, a checkpoint of the "
                            "format before checkpoint-<epoch>.safetensors, which this version cannot resume; its model "
                            "still works with eval and predict, or train it again with `sentiment train --out {}`",
                            out_dir, old_format(out_dir).string(), out_dir);
  throw tg::ValueError(fmt::format("resume: no checkpoint in '{}' (no checkpoint-<epoch>.safetensors); `sentiment "
                                   "train --out {}` writes one after every epoch", out_dir, out_dir));
}

std::string recorded_data_path(const std::string& dir) {
  if (std::optional<std::string> newest = tg::train::CheckpointManager({}, {.dir = dir}).newest())
    return read_record(*newest).data_path;
  if (!fs::is_regular_file(old_format(dir))) return "";
  const tg::Safetensors old = tg::load_safetensors(old_format(dir).string());  // its "data_path", when it kept one
  auto it = old.metadata.find("data_path");
  return it == old.metadata.end() ? "" : it->second;
}

}  // namespace sentiment
