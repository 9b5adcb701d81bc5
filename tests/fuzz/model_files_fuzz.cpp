// libFuzzer target: four readers of model files in one target (CI runs each target for a fixed time), chosen by
// the first byte of the input, the rest being the bytes they read:
//   0: a gpt config.json, parsed and checked as `gpt train --config` does;
//   1: a digits config.json, likewise;
//   2: the metadata of a tg::train::CheckpointManager checkpoint, a JSON object of strings merged over a real
//      checkpoint's metadata, the file then loaded by CheckpointManager::load;
//   3: the architecture JSON of tg::nn::load_model, in a file of save_model's format.
// The configs either pass check_config and survive a JSON round trip unchanged, or throw tg::Error or a JSON
// error; the files either load or throw tg::Error naming the file.
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "core/safetensors.h"
#include "examples/digits/config.h"
#include "examples/gpt/config.h"
#include "nn/dense.h"
#include "nn/save_model.h"
#include "optim/sgd.h"
#include "train/checkpoint.h"

namespace {

namespace fs = std::filesystem;

void gpt_config(const std::string& text) {
  const gpt::Config c = nlohmann::json::parse(text).get<gpt::Config>();
  gpt::check_config(c);
  if (nlohmann::json(nlohmann::json(c).get<gpt::Config>()) != nlohmann::json(c)) std::abort();
}

void digits_config(const std::string& text) {
  const digits::Config c = digits::config_from_json(nlohmann::json::parse(text), "fuzz config.json");
  digits::check_config(c);
  if (digits::to_json(digits::config_from_json(digits::to_json(c), "round trip")) != digits::to_json(c)) std::abort();
}

// A directory of this process's own under the temporary one, for the files the loaders read.
const fs::path& work_dir() {
  static const fs::path dir = [] {
    const fs::path d = fs::temp_directory_path() / ("tg_fuzz_model_files_" + std::to_string(::getpid()));
    fs::create_directories(d);
    return d;
  }();
  return dir;
}

// f() either returns or throws tg::Error whose message names `path`.
template <class F>
void names_file(const std::string& path, F f) {
  try {
    f();
  } catch (const tg::Error& e) {
    if (std::string(e.what()).find(path) == std::string::npos) std::abort();
  }
}

// The run whose checkpoint is fuzzed: a Dense layer and SGD, saved once as the base file.
struct Run {
  tg::nn::Dense model{{.in_features = 2, .out_features = 2}};
  tg::optim::SGD opt{model.parameters(), {.lr = 0.1}};
  tg::train::TrainingState state() { return {.model = &model, .optimizer = &opt}; }
  tg::Safetensors base;
  Run() {
    tg::train::CheckpointManager m(state(), {.dir = (work_dir() / "base").string()});
    base = tg::load_safetensors(m.save(3, 0.5, {{"note", "seed"}}));
  }
};

void checkpoint_metadata(const std::string& text) {
  static Run run;
  const nlohmann::json meta = nlohmann::json::parse(text);
  if (!meta.is_object()) return;
  tg::Safetensors file = run.base;
  for (const auto& [k, v] : meta.items())
    if (v.is_string()) file.metadata[k] = v.get<std::string>();
  const std::string dir = (work_dir() / "ckpt").string(), path = dir + "/checkpoint-3.safetensors";
  fs::create_directories(dir);
  tg::save_safetensors(path, file.tensors, file.metadata);
  names_file(path, [&] { tg::train::CheckpointManager(run.state(), {.dir = dir}).load(path); });
}

// Any sizes: load_model builds the layers under a budget of the file's (here empty) tensors, so a Dense of
// 10^6 x 10^6 is an error naming the file, not an allocation failure.
void model_architecture(const std::string& text) {
  const std::string path = (work_dir() / "model.safetensors").string();
  tg::save_safetensors(path, {}, {{"format", "tensorgrad"}, {"format_version", "1"}, {"architecture", text}});
  names_file(path, [&] { tg::nn::load_model(path); });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    switch (data[0] % 4) {
      case 0: gpt_config(text); break;
      case 1: digits_config(text); break;
      case 2: checkpoint_metadata(text); break;
      default: model_architecture(text); break;
    }
  } catch (const tg::Error&) {       // the configs' refusals (the files' are checked above)
  } catch (const nlohmann::json::exception&) {  // not JSON, or JSON of the wrong types
  }
  return 0;
}
