// Named configurations and their JSON round trip.
#include "config.h"

#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <type_traits>

#include <tensorgrad/tensorgrad.h>

#include "subword.h"

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
    // the data in 5-fold cross-validation, and the per-epoch validation accuracy is out-of-fold. Each token's
    // input is the mean of its word vector and those of its character n-grams hashed into 4096 buckets
    // (fastText sub-words): 1.6 points over the same ensemble without them in that cross-validation, where
    // 16384 buckets gained 0.6 and 1024 lost (fewer buckets share more between rare words, too few mix them).
    // The classifier reads the mean and the max over the tokens side by side: the max keeps one strong word
    // ("awful") from being averaged away in a long sentence; chosen in the seventh round's paired
    // cross-validation (4 seeds per fold, 20 pairs).
    // Each word the AFINN-165 lexicon rates also carries its valence, counted 3 times in its input's mean:
    // the polarity of words rare or unseen in 2400 sentences (eighth round, same protocol).
    // A LayerNorm over each token's input and query/key weights starting at 3 times Xavier's (tenth round):
    // layer 0 read inputs of rms 0.02, so its attention logits were ~0 and its heads even over the words,
    // and layer 1's logits (std ~0.5-1.4) left some heads near even too; now every head of both layers
    // attends (normalised entropy < 0.95), +0.5 points in cross-validation.
    c.model.embedding_std = 0.03;
    c.model.positional = Positional::none;
    c.model.token_dropout = 0.1;
    c.model.dropout = 0.2;
    c.train.optimizer = OptimizerKind::adamw;
    c.train.weight_decay = 0.2;
    c.train.lr = 2e-3;
    c.train.warmup_epochs = 1;
    c.train.schedule = Schedule::cosine;
    c.train.label_smoothing = 0.1;
    c.train.epochs = 8;
    c.model.ensemble = 3;
    c.train.ensemble_data = EnsembleData::folds;
    c.model.subword_buckets = 4096;
    c.model.pooling = Pooling::mean_max;
    c.model.lexicon_weight = 3;
    c.model.embedding_norm = true;
    c.model.qk_init_scale = 3;
    return c;
  }
  throw tg::ValueError(fmt::format("unknown config '{}': expected 'reference' or 'default'", tg::escape_bytes(name)));
}

int64_t encoded_width(const ModelConfig& m) {
  return m.architecture == Architecture::transformer ? m.d_model : (m.bidirectional ? 2 : 1) * m.hidden_size;
}

double parameter_count(const ModelConfig& m) {
  const double D = double(m.d_model), F = double(m.dim_feedforward), H = double(m.hidden_size);
  double stack = 0;  // the encoder or the RNN
  if (m.architecture == Architecture::transformer) {
    const double layer = 4 * D * D + 4 * D       // attention: in_proj (3D, D) + (3D), out_proj (D, D) + (D)
                         + 2 * F * D + F + D      // linear1 (F, D) + (F), linear2 (D, F) + (D)
                         + 4 * D;                 // norm1, norm2: weight and bias
    stack = double(m.num_layers) * layer + (m.norm_first ? 2 * D : 0);
  } else {
    // Per layer and direction: weight_ih (G·H, in), weight_hh (G·H, H), bias_ih and bias_hh (G·H).
    const double G = m.architecture == Architecture::lstm ? 4 : 3, dirs = m.bidirectional ? 2 : 1;
    for (int64_t k = 0; k < m.num_layers; ++k) stack += dirs * G * H * ((k == 0 ? D : dirs * H) + H + 2);
  }
  const double width = double(encoded_width(m));
  const double pooled = m.pooling == Pooling::mean_max ? 2 * width : width;
  const double network = double(m.vocab_size) * D + (m.subword_buckets > 0 ? double(m.subword_buckets + 1) * D : 0) +
                         (m.positional == Positional::learned ? double(m.max_len) * D : 0) + stack +
                         (m.embedding_norm ? 2 * D : 0) + pooled * double(m.num_classes) + double(m.num_classes);
  return double(m.ensemble) * network;
}

// NaN fails every comparison, so each range check below also refuses it. The upper bounds keep every size
// product far from int64 overflow; the parameter count bounds what they allocate together.
void check_model_config(const ModelConfig& m) {
  using tg::ValueError;
  constexpr int64_t kMaxSize = int64_t(1) << 20, kMaxLayers = 1024;
  tg::check<ValueError>(m.vocab_size >= 0 && m.vocab_size <= (int64_t(1) << 31), "model: vocab_size must be in [0, 2^31], "
                        "got {}", m.vocab_size);
  tg::check<ValueError>(m.max_len >= 1 && m.max_len <= kMaxSize, "model: max_len must be in [1, {}], got {}", kMaxSize,
                        m.max_len);
  tg::check<ValueError>(m.d_model >= 1 && m.d_model <= kMaxSize, "model: d_model must be in [1, {}], got {}", kMaxSize,
                        m.d_model);
  tg::check<ValueError>(m.num_heads >= 1, "model: num_heads must be >= 1, got {}", m.num_heads);
  tg::check<ValueError>(m.hidden_size >= 1 && m.hidden_size <= kMaxSize, "model: hidden_size must be in [1, {}], got {}",
                        kMaxSize, m.hidden_size);
  tg::check<ValueError>(m.architecture != Architecture::transformer || m.d_model % m.num_heads == 0, "model: d_model {} is not divisible by num_heads {}", m.d_model,
                        m.num_heads);
  tg::check<ValueError>(m.num_layers >= 1 && m.num_layers <= kMaxLayers, "model: num_layers must be in [1, {}], got {}",
                        kMaxLayers, m.num_layers);
  tg::check<ValueError>(m.dim_feedforward >= 1 && m.dim_feedforward <= kMaxSize,
                        "model: dim_feedforward must be in [1, {}], got {}", kMaxSize, m.dim_feedforward);
  tg::check<ValueError>(m.dropout >= 0 && m.dropout < 1, "model: dropout must be in [0, 1), got {}", m.dropout);
  tg::check<ValueError>(m.token_dropout >= 0 && m.token_dropout < 1, "model: token_dropout must be in [0, 1), got {}",
                        m.token_dropout);
  tg::check<ValueError>(std::isfinite(m.embedding_std) && m.embedding_std > 0,
                        "model: embedding_std must be finite and > 0, got {}", m.embedding_std);
  tg::check<ValueError>(std::isfinite(m.qk_init_scale) && m.qk_init_scale > 0,
                        "model: qk_init_scale must be finite and > 0, got {}", m.qk_init_scale);
  tg::check<ValueError>(m.num_classes >= 2 && m.num_classes <= kMaxSize, "model: num_classes must be in [2, {}], got {}",
                        kMaxSize, m.num_classes);
  tg::check<ValueError>(m.ensemble >= 1 && m.ensemble <= kMaxLayers, "model: ensemble must be in [1, {}], got {}",
                        kMaxLayers, m.ensemble);
  tg::check<ValueError>(m.subword_buckets >= 0 && m.subword_buckets <= (int64_t(1) << 24),
                        "model: subword_buckets must be in [0, 2^24] (0 = off), got {}", m.subword_buckets);
  tg::check<ValueError>(m.lexicon_weight >= 0 && m.lexicon_weight <= kMaxSubwords,
                        "model: lexicon_weight must be in [0, {}] (0 = off), got {}", kMaxSubwords, m.lexicon_weight);
  tg::check<ValueError>(m.lexicon_weight == 0 || m.subword_buckets > 0, "model: lexicon_weight needs subword_buckets > 0 "
                        "(the valences go into the sub-word bags), got subword_buckets {}", m.subword_buckets);
  tg::check<ValueError>(parameter_count(m) <= double(kMaxParameters), "model: {:.4g} parameters, more than the {} "
                        "allowed (d_model {}, num_layers {}, dim_feedforward {}, hidden_size {}, ensemble {}, vocab_size {})",
                        parameter_count(m), kMaxParameters, m.d_model, m.num_layers, m.dim_feedforward, m.hidden_size,
                        m.ensemble, m.vocab_size);
}

void check_train_config(const TrainConfig& t) {
  using tg::ValueError;
  tg::check<ValueError>(t.epochs >= 1 && t.epochs <= kMaxEpochs, "train: epochs must be in [1, {}], got {}", kMaxEpochs,
                        t.epochs);
  tg::check<ValueError>(t.batch_size >= 1, "train: batch_size must be >= 1, got {}", t.batch_size);
  tg::check<ValueError>(std::isfinite(t.lr) && t.lr >= 0, "train: lr must be finite and >= 0, got {}", t.lr);
  tg::check<ValueError>(std::isfinite(t.weight_decay) && t.weight_decay >= 0,
                        "train: weight_decay must be finite and >= 0, got {}", t.weight_decay);
  tg::check<ValueError>(t.label_smoothing >= 0 && t.label_smoothing <= 1,
                        "train: label_smoothing must be in [0, 1], got {}", t.label_smoothing);
  tg::check<ValueError>(t.warmup_epochs >= 0 && t.warmup_epochs <= kMaxEpochs,  // as epochs: no overflow of steps
                        "train: warmup_epochs must be in [0, {}], got {}", kMaxEpochs, t.warmup_epochs);
  tg::check<ValueError>(t.clip_grad_norm >= 0, "train: clip_grad_norm must be >= 0 (0: no clipping), got {}",
                        t.clip_grad_norm);
  tg::check<ValueError>(t.val_fraction >= 0 && t.val_fraction < 1, "train: val_fraction must be in [0, 1), got {}",
                        t.val_fraction);
  tg::check<ValueError>(t.min_freq >= 1, "train: min_freq must be >= 1, got {}", t.min_freq);
}

void check_config(const Config& c) {
  check_model_config(c.model);
  check_train_config(c.train);
  tg::check<tg::ValueError>(c.train.ensemble_data != EnsembleData::folds || c.model.ensemble >= 2,
                            "train: ensemble_data 'folds' needs an ensemble of >= 2 members, got {}", c.model.ensemble);
}

void to_json(nlohmann::json& j, const Config& c) {
  const ModelConfig& m = c.model;
  const TrainConfig& t = c.train;
  j = {{"name", c.name},
       {"model", {{"vocab_size", m.vocab_size}, {"max_len", m.max_len}, {"architecture", name_of(m.architecture)},
                  {"d_model", m.d_model}, {"hidden_size", m.hidden_size}, {"bidirectional", m.bidirectional},
                  {"num_heads", m.num_heads}, {"num_layers", m.num_layers}, {"dim_feedforward", m.dim_feedforward},
                  {"dropout", m.dropout}, {"activation", name_of(m.activation)}, {"norm_first", m.norm_first},
                  {"pooling", name_of(m.pooling)}, {"positional", name_of(m.positional)}, {"token_dropout", m.token_dropout},
                  {"embedding_std", m.embedding_std}, {"num_classes", m.num_classes}, {"ensemble", m.ensemble},
                  {"subword_buckets", m.subword_buckets}, {"subword_combine", name_of(m.subword_combine)},
                  {"lexicon_weight", m.lexicon_weight}, {"embedding_norm", m.embedding_norm},
                  {"qk_init_scale", m.qk_init_scale}}},
       {"train", {{"epochs", t.epochs}, {"batch_size", t.batch_size}, {"optimizer", name_of(t.optimizer)}, {"lr", t.lr},
                  {"weight_decay", t.weight_decay}, {"label_smoothing", t.label_smoothing},
                  {"warmup_epochs", t.warmup_epochs}, {"schedule", name_of(t.schedule)},
                  {"clip_grad_norm", t.clip_grad_norm}, {"val_fraction", t.val_fraction},
                  {"keep_best", t.keep_best}, {"min_freq", t.min_freq},
                  {"ensemble_data", name_of(t.ensemble_data)}, {"skip_malformed", t.skip_malformed}}}};
  for (const auto& [key, stamp] : {std::pair{"data", &c.files.data}, std::pair{"lexicon", &c.files.lexicon}})
    if (stamp->bytes > 0 || !stamp->fnv1a64.empty()) j["files"][key] = {{"bytes", stamp->bytes}, {"fnv1a64", stamp->fnv1a64}};
}

namespace {
// The keys a config.json may hold, per section; anything else is refused, so that a misspelt key is not
// silently ignored.
const std::map<std::string, std::set<std::string>> kKeys = {
    {"model", {"vocab_size", "max_len", "architecture", "hidden_size", "bidirectional", "d_model", "num_heads", "num_layers", "dim_feedforward", "dropout",
               "activation", "norm_first", "pooling", "num_classes", "positional", "token_dropout", "embedding_std",
               "ensemble", "subword_buckets", "subword_combine", "lexicon_weight", "embedding_norm", "qk_init_scale"}},
    {"train", {"epochs", "batch_size", "optimizer", "lr", "weight_decay", "label_smoothing", "warmup_epochs",
               "schedule", "clip_grad_norm", "val_fraction", "keep_best", "min_freq", "ensemble_data", "skip_malformed"}},
    {"files", {"data", "lexicon"}}};

template <class T>
  requires(!std::is_enum_v<T>)
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

// A choice, stored by name: ValueError listing the allowed names for another one.
template <class E>
  requires std::is_enum_v<E>
void read(const nlohmann::json& j, const char* section, const char* key, E& out) {
  std::string name;
  read(j, section, key, name);
  out = parse_enum<E>(name, fmt::format("{}: {}", section, key));
}

// "files.<key>": {"bytes": N >= 0, "fnv1a64": 16 hex digits}, or absent (unknown).
void read_stamp(const nlohmann::json& j, const char* key, FileStamp& out) {
  if (!j.contains("files") || !j["files"].contains(key)) return;
  const nlohmann::json& s = j["files"][key];
  const bool ok = s.is_object() && s.size() == 2 && s.contains("bytes") && s["bytes"].is_number_unsigned() &&
                  s["bytes"].get<uint64_t>() <= uint64_t(INT64_MAX) && s.contains("fnv1a64") && s["fnv1a64"].is_string() &&
                  s["fnv1a64"].get<std::string>().size() == 16 &&
                  s["fnv1a64"].get<std::string>().find_first_not_of("0123456789abcdef") == std::string::npos;
  tg::check<tg::ValueError>(ok, "config: 'files.{}' must be {{\"bytes\": N, \"fnv1a64\": 16 hex digits}}, got {}", key,
                            tg::escape_bytes(s.dump()));
  out = {s["bytes"].get<int64_t>(), s["fnv1a64"].get<std::string>()};
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
    tg::check<tg::ValueError>(keys != kKeys.end(), "config: unknown section '{}' (expected name, model, train, files)",
                              tg::escape_bytes(section));
    tg::check<tg::ValueError>(value.is_object(), "config: '{}' must be an object, got {}", section, value.type_name());
    for (const auto& [key, unused] : value.items())
      tg::check<tg::ValueError>(keys->second.count(key) > 0, "config: unknown key '{}.{}'", section, tg::escape_bytes(key));
  }
  // j.value threw nlohmann's type_error for a name that is not a string, reported as "not valid JSON".
  tg::check<tg::ValueError>(!j.contains("name") || j["name"].is_string(), "config: 'name' must be a string, got {}",
                            j.contains("name") ? j["name"].dump() : "");
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
  read_optional(j, "model", "subword_buckets", m.subword_buckets);
  read_optional(j, "model", "subword_combine", m.subword_combine);
  read_optional(j, "model", "lexicon_weight", m.lexicon_weight);
  read_optional(j, "model", "embedding_norm", m.embedding_norm);
  read_optional(j, "model", "qk_init_scale", m.qk_init_scale);
  read_optional(j, "model", "architecture", m.architecture);
  read_optional(j, "model", "hidden_size", m.hidden_size);
  read_optional(j, "model", "bidirectional", m.bidirectional);
  read(j, "train", "epochs", t.epochs), read(j, "train", "batch_size", t.batch_size);
  read(j, "train", "optimizer", t.optimizer), read(j, "train", "lr", t.lr);
  read(j, "train", "weight_decay", t.weight_decay), read(j, "train", "label_smoothing", t.label_smoothing);
  read(j, "train", "warmup_epochs", t.warmup_epochs), read(j, "train", "schedule", t.schedule);
  read(j, "train", "clip_grad_norm", t.clip_grad_norm), read(j, "train", "val_fraction", t.val_fraction);
  read(j, "train", "keep_best", t.keep_best), read(j, "train", "min_freq", t.min_freq);
  read_optional(j, "train", "ensemble_data", t.ensemble_data);
  read_optional(j, "train", "skip_malformed", t.skip_malformed);
  read_stamp(j, "data", c.files.data), read_stamp(j, "lexicon", c.files.lexicon);
}

}  // namespace sentiment
