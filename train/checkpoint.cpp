// The checkpoint manager. Each file also records the list of checkpoints kept at its save ("kept":
// step and metric of each), so a resumed run knows the others' metrics without opening them. After a
// save, every file of ours that is not in the new list is deleted, including leftovers of a run that died
// between writing a file and pruning.
#include "train/checkpoint.h"

#include <algorithm>
#include <charconv>
#include <filesystem>

#include <fmt/format.h>

#include "core/error.h"
#include "core/read_file.h"

namespace tg::train {
namespace fs = std::filesystem;
namespace {

constexpr const char* kFormat = "tensorgrad-checkpoint";
constexpr const char* kVersion = "1";

// "step:metric;step:metric" of the kept checkpoints.
std::string encode_kept(const std::vector<CheckpointInfo>& kept) {
  std::string out;
  for (const CheckpointInfo& c : kept) out += fmt::format("{}{}:{}", out.empty() ? "" : ";", c.step, c.metric);
  return out;
}

std::vector<std::pair<int64_t, double>> decode_kept(const std::string& s, const std::string& path) {
  std::vector<std::pair<int64_t, double>> out;
  for (size_t at = 0; at < s.size();) {
    size_t end = std::min(s.find(';', at), s.size()), colon = s.find(':', at);
    const std::string entry = escape_bytes(s.substr(at, end - at));
    check<ValueError>(colon < end, "checkpoint {}: malformed 'checkpoint.kept' entry '{}'", path, entry);
    int64_t step = 0;
    auto [p, ec] = std::from_chars(s.data() + at, s.data() + colon, step);
    char* stop = nullptr;
    const std::string metric = s.substr(colon + 1, end - colon - 1);
    const double m = std::strtod(metric.c_str(), &stop);
    check<ValueError>(ec == std::errc() && p == s.data() + colon && !metric.empty() && *stop == '\0',
                      "checkpoint {}: malformed 'checkpoint.kept' entry '{}'", path, entry);
    check<ValueError>(step >= 0, "checkpoint {}: step {} in 'checkpoint.kept' entry '{}' is negative", path, step, entry);
    out.emplace_back(step, m);
    at = end + 1;
  }
  return out;
}

}  // namespace

CheckpointManager::CheckpointManager(TrainingState state, CheckpointOptions options)
    : state_(std::move(state)), options_(std::move(options)) {
  check<ValueError>(!options_.dir.empty(), "CheckpointManager: no directory given");
  check<ValueError>(!options_.prefix.empty() && options_.prefix.find('/') == std::string::npos,
                    "CheckpointManager: prefix must be a non-empty file name, got '{}'", options_.prefix);
  check<ValueError>(options_.keep_last >= 0 && options_.keep_best >= 0, "CheckpointManager: keep_last and keep_best "
                    "must be >= 0, got {} and {}", options_.keep_last, options_.keep_best);
}

std::string CheckpointManager::path_for(int64_t step) const {
  return (fs::path(options_.dir) / fmt::format("{}-{}.safetensors", options_.prefix, step)).string();
}

int64_t CheckpointManager::step_of(const std::string& name) const {
  const std::string head = options_.prefix + "-", tail = ".safetensors";
  if (!name.starts_with(head) || !name.ends_with(tail) || name.size() <= head.size() + tail.size()) return -1;
  const char* first = name.data() + head.size();
  const char* last = name.data() + name.size() - tail.size();
  int64_t step = -1;
  auto [p, ec] = std::from_chars(first, last, step);
  return ec == std::errc() && p == last ? step : -1;
}

std::vector<CheckpointInfo> CheckpointManager::prune(std::vector<CheckpointInfo> all) const {
  std::sort(all.begin(), all.end(), [](const CheckpointInfo& a, const CheckpointInfo& b) { return a.step < b.step; });
  std::vector<bool> keep(all.size(), options_.keep_last == 0);
  for (size_t i = 0; i < all.size(); ++i) keep[i] = keep[i] || all.size() - i <= size_t(options_.keep_last);
  std::vector<size_t> ranked;  // indices with a metric, best first (stable: the earlier of equals)
  for (size_t i = 0; i < all.size(); ++i)
    if (!std::isnan(all[i].metric)) ranked.push_back(i);
  std::stable_sort(ranked.begin(), ranked.end(),
                   [&](size_t a, size_t b) { return improves(options_.mode, all[a].metric, all[b].metric); });
  for (size_t r = 0; r < std::min(ranked.size(), size_t(options_.keep_best)); ++r) keep[ranked[r]] = true;
  std::vector<CheckpointInfo> out;
  for (size_t i = 0; i < all.size(); ++i)
    if (keep[i]) out.push_back(all[i]);
  return out;
}

std::string CheckpointManager::save(int64_t step, double metric, const std::map<std::string, std::string>& user) {
  check<ValueError>(step >= 0, "CheckpointManager: step must be >= 0, got {}", step);
  const std::string path = path_for(step);
  std::vector<CheckpointInfo> all;
  for (const CheckpointInfo& c : kept_)
    if (c.step != step) all.push_back(c);
  all.push_back({step, metric, path, user});
  std::vector<CheckpointInfo> kept = prune(all);
  Safetensors file = capture(state_, false);
  file.metadata.insert({{"format", kFormat}, {"version", kVersion}});
  file.metadata["checkpoint.step"] = fmt::format("{}", step);
  file.metadata["checkpoint.metric"] = fmt::format("{}", metric);
  file.metadata["checkpoint.kept"] = encode_kept(kept);
  for (const auto& [k, v] : user) file.metadata[fmt::format("user.{}", k)] = v;
  std::error_code ec;
  fs::create_directories(options_.dir, ec);
  check<Error>(!ec, "CheckpointManager: cannot create the directory '{}': {}", options_.dir, ec.message());
  save_safetensors(path, file.tensors, file.metadata);
  kept_ = kept;
  for (const fs::directory_entry& e : fs::directory_iterator(options_.dir)) {
    const int64_t s = step_of(e.path().filename().string());
    if (s >= 0 && std::none_of(kept_.begin(), kept_.end(), [&](const CheckpointInfo& c) { return c.step == s; }))
      fs::remove(e.path(), ec);  // a file that cannot be removed is retried at the next save
  }
  return path;
}

std::optional<std::string> CheckpointManager::newest() const {
  if (!fs::is_directory(options_.dir)) return std::nullopt;
  int64_t newest = -1;
  for (const fs::directory_entry& e : fs::directory_iterator(options_.dir))
    newest = std::max(newest, step_of(e.path().filename().string()));
  if (newest < 0) return std::nullopt;
  return path_for(newest);
}

std::optional<CheckpointInfo> CheckpointManager::resume() {
  const std::optional<std::string> path = newest();
  if (!path) return std::nullopt;
  return load(*path);
}

CheckpointInfo CheckpointManager::load(const std::string& path) {
  const Safetensors file = load_safetensors(path);  // ValueError naming the file
  const auto& meta = file.metadata;
  auto text = [&](const std::string& key) -> const std::string& {
    auto it = meta.find(key);
    check<ValueError>(it != meta.end(), "checkpoint {}: no '{}' (not a tensorgrad checkpoint?)", path, key);
    return it->second;
  };
  check<ValueError>(text("format") == kFormat, "checkpoint {}: format '{}', expected '{}'", path, escape_bytes(text("format")), kFormat);
  check<ValueError>(text("version") == kVersion, "checkpoint {}: version {}, this program reads version {}", path,
                    escape_bytes(text("version")), kVersion);
  CheckpointInfo info;
  info.path = path;
  const auto [step, metric] = decode_kept(text("checkpoint.step") + ":" + text("checkpoint.metric"), path).at(0);
  info.step = step, info.metric = metric;
  std::vector<CheckpointInfo> kept;
  for (const auto& [s, m] : decode_kept(text("checkpoint.kept"), path)) kept.push_back({s, m, path_for(s), {}});
  for (const auto& [k, v] : meta)
    if (k.starts_with("user.")) info.user[k.substr(5)] = v;
  restore(state_, file, "checkpoint " + path);
  kept_ = kept;
  return info;
}

std::optional<CheckpointInfo> CheckpointManager::best() const {
  std::optional<CheckpointInfo> out;
  for (const CheckpointInfo& c : kept_)
    if (!std::isnan(c.metric) && (!out || improves(options_.mode, c.metric, out->metric))) out = c;
  return out;
}

}  // namespace tg::train
