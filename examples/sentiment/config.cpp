// Named configurations and their JSON round trip.
#include "config.h"

#include <limits>
#include <map>
#include <set>
#include <type_traits>

#include <tensorgrad/tensorgrad.h>

namespace sentiment {

Config config_by_name(const std::string& name) {
  Config c;
  c.name = name;
  if (name == "reference") return c;  // the struct defaults are the reference configuration
  if (name == "default") {
    // Chosen on the validation split only (examples/sentiment/RESULTS.md): small initial embeddings (most
    // words occur a few times, and only a small start lets those few updates count), no position embeddings
    // (word order adds little on 2400 sentences), word dropout, more dropout, AdamW with warmup + cosine,
    // more weight decay, label smoothing. Then an ensemble of 3 such networks on 3 folds of the training
    // sentences, 8 epochs: network k trains on all but fold k, so the members differ in their data (networks
    // sharing all of it gained nothing on validation); their averaged probabilities beat one network on all
    // the data in 5-fold cross-validation, and the per-epoch validation accuracy is out-of-fold.
    c.model.embedding_std = 0.03;
    c.model.positional = "none";
    c.model.token_dropout = 0.1;
    c.model.dropout = 0.2;
    c.train.optimizer = "adamw";
    c.train.weight_decay = 0.2;
    c.train.lr = 2e-3;
    c.train.warmup_epochs = 1;
    c.train.schedule = "cosine";
    c.train.label_smoothing = 0.1;
    c.train.epochs = 8;
    c.model.ensemble = 3;
    c.train.ensemble_data = "folds";
    return c;
  }
  throw tg::ValueError(fmt::format("unknown config '{}': expected 'reference' or 'default'", name));
}

void to_json(nlohmann::json& j, const Config& c) {
  const ModelConfig& m = c.model;
  const TrainConfig& t = c.train;
  j = {{"name", c.name},
       {"model", {{"vocab_size", m.vocab_size}, {"max_len", m.max_len}, {"d_model", m.d_model},
                  {"num_heads", m.num_heads}, {"num_layers", m.num_layers}, {"dim_feedforward", m.dim_feedforward},
                  {"dropout", m.dropout}, {"activation", m.activation}, {"norm_first", m.norm_first},
                  {"pooling", m.pooling}, {"positional", m.positional}, {"token_dropout", m.token_dropout},
                  {"embedding_std", m.embedding_std}, {"num_classes", m.num_classes}, {"ensemble", m.ensemble}}},
       {"train", {{"epochs", t.epochs}, {"batch_size", t.batch_size}, {"optimizer", t.optimizer}, {"lr", t.lr},
                  {"weight_decay", t.weight_decay}, {"label_smoothing", t.label_smoothing},
                  {"warmup_epochs", t.warmup_epochs}, {"schedule", t.schedule},
                  {"clip_grad_norm", t.clip_grad_norm}, {"val_fraction", t.val_fraction},
                  {"keep_best", t.keep_best}, {"min_freq", t.min_freq},
                  {"ensemble_data", t.ensemble_data}}}};
}

namespace {
// The keys a config.json may hold, per section; anything else is refused, so that a misspelt key is not
// silently ignored.
const std::map<std::string, std::set<std::string>> kKeys = {
    {"model", {"vocab_size", "max_len", "d_model", "num_heads", "num_layers", "dim_feedforward", "dropout",
               "activation", "norm_first", "pooling", "num_classes", "positional", "token_dropout", "embedding_std",
               "ensemble"}},
    {"train", {"epochs", "batch_size", "optimizer", "lr", "weight_decay", "label_smoothing", "warmup_epochs",
               "schedule", "clip_grad_norm", "val_fraction", "keep_best", "min_freq", "ensemble_data"}}};

template <class T>
void read(const nlohmann::json& j, const char* section, const char* key, T& out) {
  try {
    const nlohmann::json& v = j.at(section).at(key);
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)  // get<int64_t> of 1e30 was undefined
      tg::check<tg::ValueError>(v.is_number_integer() && !(v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(
                                    std::numeric_limits<T>::max())),
                                "config: '{}.{}' must be a whole number in the range of int64, got {}", section, key,
                                v.dump());
    out = v.get<T>();
  } catch (const nlohmann::json::exception&) {
    throw tg::ValueError(fmt::format("config: missing or invalid '{}.{}'", section, key));
  }
}

// A key added after the first model directories were written: absent means the struct's default, which is
// what those models were trained with.
template <class T>
void read_optional(const nlohmann::json& j, const char* section, const char* key, T& out) {
  if (j.contains(section) && j.at(section).is_object() && j.at(section).contains(key)) read(j, section, key, out);
}
}  // namespace

void from_json(const nlohmann::json& j, Config& c) {
  tg::check<tg::ValueError>(j.is_object(), "config: expected a JSON object, got {}", j.type_name());
  for (const auto& [section, value] : j.items()) {
    if (section == "name") continue;
    const auto keys = kKeys.find(section);
    tg::check<tg::ValueError>(keys != kKeys.end(), "config: unknown section '{}' (expected name, model, train)", section);
    tg::check<tg::ValueError>(value.is_object(), "config: '{}' must be an object, got {}", section, value.type_name());
    for (const auto& [key, unused] : value.items())
      tg::check<tg::ValueError>(keys->second.count(key) > 0, "config: unknown key '{}.{}'", section, key);
  }
  c.name = j.value("name", "custom");
  ModelConfig& m = c.model;
  TrainConfig& t = c.train;
  read(j, "model", "vocab_size", m.vocab_size), read(j, "model", "max_len", m.max_len);
  read(j, "model", "d_model", m.d_model), read(j, "model", "num_heads", m.num_heads);
  read(j, "model", "num_layers", m.num_layers), read(j, "model", "dim_feedforward", m.dim_feedforward);
  read(j, "model", "dropout", m.dropout), read(j, "model", "activation", m.activation);
  read(j, "model", "norm_first", m.norm_first), read(j, "model", "pooling", m.pooling);
  read(j, "model", "num_classes", m.num_classes);
  read(j, "model", "positional", m.positional), read(j, "model", "token_dropout", m.token_dropout);
  read_optional(j, "model", "embedding_std", m.embedding_std), read_optional(j, "model", "ensemble", m.ensemble);
  read(j, "train", "epochs", t.epochs), read(j, "train", "batch_size", t.batch_size);
  read(j, "train", "optimizer", t.optimizer), read(j, "train", "lr", t.lr);
  read(j, "train", "weight_decay", t.weight_decay), read(j, "train", "label_smoothing", t.label_smoothing);
  read(j, "train", "warmup_epochs", t.warmup_epochs), read(j, "train", "schedule", t.schedule);
  read(j, "train", "clip_grad_norm", t.clip_grad_norm), read(j, "train", "val_fraction", t.val_fraction);
  read(j, "train", "keep_best", t.keep_best), read(j, "train", "min_freq", t.min_freq);
  read_optional(j, "train", "ensemble_data", t.ensemble_data);
}

}  // namespace sentiment
