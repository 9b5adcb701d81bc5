// The data of a run and the model directory around the training loop (loop.cpp): preparing the corpus,
// recognising a GPT model directory (and refusing another program's), reading a run's record from its
// newest checkpoint, and loading a trained model.
#include "train.h"

#include <filesystem>
#include <numbers>

#include "files.h"

namespace gpt {
namespace fs = std::filesystem;

void write_text(const std::filesystem::path& path, const std::string& text) {
  tg::write_file_atomic(path.string(), {text}, "gpt: cannot write");
}

std::vector<fs::path> checkpoint_files(const std::string& dir) {
  std::vector<std::pair<int64_t, fs::path>> found;
  if (fs::is_directory(dir))
    for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
      const std::string name = e.path().filename().string(), head = std::string(kCheckpointPrefix) + "-";
      if (!name.starts_with(head) || !name.ends_with(".safetensors")) continue;
      try {
        found.emplace_back(std::stoll(name.substr(head.size())), e.path());
      } catch (const std::exception&) {  // not one of ours
      }
    }
  std::sort(found.begin(), found.end());
  std::vector<fs::path> out;
  for (const auto& [step, path] : found) out.push_back(path);
  return out;
}

// FNV-1a over the vocabulary and the three streams: equal for the same corpus and split.
std::string data_fingerprint(const Data& d) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&h](uint64_t v) { h = (h ^ v) * 1099511628211ull; };
  for (uint8_t b : d.vocab.bytes()) mix(b);
  for (const std::vector<int64_t>* s : {&d.train, &d.valid, &d.test}) {
    mix(s->size());
    for (int64_t id : *s) mix(uint64_t(id));
  }
  return fmt::format("{:016x}", h);
}

void create_model_dir(const std::string& dir, const Config& config, const ByteVocab& vocab) {
  try {
    fs::create_directories(dir);
  } catch (const fs::filesystem_error& e) {
    throw tg::Error(fmt::format("train: cannot create the model directory '{}': {}", dir, e.code().message()));
  }
  write_text(fs::path(dir) / "config.json", nlohmann::json(config).dump(2) + "\n");
  vocab.save((fs::path(dir) / "vocab.json").string());
}

Data prepare_data(const std::string& corpus_path, const std::string& splits_path, const ByteVocab& vocab) {
  const Corpus c = read_corpus(corpus_path, splits_path);
  Data d;
  d.vocab = vocab;
  const std::string what = fmt::format("corpus '{}'", corpus_path);
  d.train = vocab.encode(c.train, what), d.valid = vocab.encode(c.valid, what), d.test = vocab.encode(c.test, what);
  d.separator = vocab.encode(kSeparator, what);
  d.corpus_path = fs::absolute(corpus_path).string(), d.splits_path = fs::absolute(splits_path).string();
  return d;
}

Data prepare_data(const std::string& corpus_path, const std::string& splits_path) {
  Data d = prepare_data(corpus_path, splits_path, ByteVocab::of(read_corpus(corpus_path, splits_path).all));
  tg::check<tg::ValueError>(!d.train.empty() && !d.valid.empty(), "corpus '{}': {} training and {} validation bytes; "
                            "need some of each (splits file '{}')", corpus_path, d.train.size(), d.valid.size(),
                            splits_path);
  return d;
}

double bits_per_byte(Gpt& model, const Data& data, const std::vector<int64_t>& stream, int64_t stride) {
  return stream_nats(model, data.separator, stream, stride) / std::numbers::ln2 / double(stream.size());
}

void check_model_dir(const std::string& dir) {
  const fs::path config = fs::path(dir) / "config.json";
  tg::check<tg::ValueError>(fs::is_directory(dir), "model directory '{}' does not exist or is not a directory (train one with `gpt train "
                            "--out {}`)", dir, dir);
  tg::check<tg::ValueError>(fs::is_regular_file(config), "model directory '{}' has no config.json: not a GPT model "
                            "directory (train one with `gpt train --out {}`)", dir, dir);
  const nlohmann::json j = examples::read_json(config.string(), examples::kMaxConfigBytes,
                                              fmt::format("model directory '{}'", dir));
  const bool sentiment = j.is_object() && j.contains("model") && j["model"].is_object() &&
                         j["model"].contains("num_classes");
  tg::check<tg::ValueError>(!sentiment, "model directory '{}' holds a sentiment classifier (its config.json has "
                            "model.num_classes), not a GPT: use the `sentiment` program for it", dir);
  tg::check<tg::ValueError>(j.is_object() && j.value("kind", "") == "gpt", "model directory '{}': config.json is not "
                            "a GPT's (no \"kind\": \"gpt\")", dir);
}

RunRecord read_run_record(const std::string& dir) {
  const std::vector<fs::path> files = checkpoint_files(dir);
  tg::check<tg::ValueError>(!files.empty(), "resume: no checkpoint in '{}' (no {}-<step>.safetensors); `gpt train "
                            "--out {}` writes one at every eval interval", dir, kCheckpointPrefix, dir);
  const tg::Safetensors f = tg::load_safetensors(files.back().string());
  auto user = [&](const std::string& key) -> const std::string& {
    auto it = f.metadata.find("user." + key);
    tg::check<tg::ValueError>(it != f.metadata.end(), "checkpoint {}: no '{}' (not a GPT checkpoint?)",
                              files.back().string(), key);
    return it->second;
  };
  try {
    return {user("corpus"), user("splits"), std::stoull(user("seed")),
            nlohmann::json::parse(user("config")).get<Config>(), user("fingerprint"), files.back().string()};
  } catch (const std::exception& e) {  // nlohmann's, std::stoull's, and Config's ValueError
    throw tg::ValueError(fmt::format("checkpoint {}: {}", files.back().string(), e.what()));
  }
}

LoadedModel load_model(const std::string& dir) {
  check_model_dir(dir);
  const fs::path d(dir);
  for (const char* f : {"vocab.json", "model.safetensors"})
    tg::check<tg::ValueError>(fs::is_regular_file(d / f), "model directory '{}' has no {} (a training run that did "
                              "not finish? `gpt train --resume {}` continues it)", dir, f, dir);
  LoadedModel m;
  try {
    const std::string config = (d / "config.json").string();
    m.config = examples::read_json(config, examples::kMaxConfigBytes, "config.json").get<Config>();
    check_config(m.config);
    m.vocab = ByteVocab::load((d / "vocab.json").string());
    tg::check<tg::ValueError>(m.vocab.size() == m.config.model.vocab_size, "vocab.json has {} bytes but config.json "
                              "says {}", m.vocab.size(), m.config.model.vocab_size);
    m.model = std::make_unique<Gpt>(m.config.model);
    m.model->load((d / "model.safetensors").string());
  } catch (const tg::Error& e) {  // the file's or layer's errors name the tensor, not the directory
    throw tg::ValueError(fmt::format("model directory '{}': {}", dir, e.what()));
  }
  for (const auto& [name, t] : m.model->state_dict())
    tg::check<tg::ValueError>(tg::all_finite(t), "model directory '{}': model.safetensors holds NaN or inf in '{}'",
                              dir, name);
  m.model->eval();
  return m;
}

}  // namespace gpt
