// The named configuration, the range checks, and the JSON round trip. The JSON keys are the struct fields,
// listed once in fields() so that writing, reading and the unknown-key check cannot disagree.
#include "config.h"

#include <cmath>
#include <limits>
#include <map>
#include <variant>

#include <tensorgrad/tensorgrad.h>

namespace gpt {

Config config_by_name(const std::string& name) {
  if (name == "default") return {.name = "default"};  // the struct defaults; chosen in RESULTS.md
  throw tg::ValueError(fmt::format("unknown config '{}': expected 'default' or the path of a config.json", name));
}

namespace {

// The weights of a model of `m` with a vocabulary of 256 bytes (the most), as a double so that absurd sizes do
// not overflow: the embeddings, then per block two LayerNorms, attention (in_proj (3D, D), out_proj (D, D),
// their biases) and the feed-forward layers (F, D) and (D, F) with biases; the final LayerNorm.
double weights_at_most(const ModelConfig& m) {
  const double D = double(m.d_model), F = double(m.dim_feedforward);
  const double block = 4 * D + 4 * D * D + 4 * D + 2 * D * F + F + D;
  return (256 + double(m.block_size)) * D + double(m.num_layers) * block + 2 * D;
}

}  // namespace

void check_config(const Config& c) {
  using tg::ValueError;
  const ModelConfig& m = c.model;
  const TrainConfig& t = c.train;
  tg::check<ValueError>(m.block_size >= 1 && m.block_size <= kMaxSize, "model: block_size must be in [1, {}], got {}",
                        kMaxSize, m.block_size);
  tg::check<ValueError>(m.d_model >= 1 && m.d_model <= kMaxSize, "model: d_model must be in [1, {}], got {}",
                        kMaxSize, m.d_model);
  tg::check<ValueError>(m.num_heads >= 1, "model: num_heads must be >= 1, got {}", m.num_heads);
  tg::check<ValueError>(m.d_model % m.num_heads == 0, "model: d_model {} is not divisible by num_heads {}", m.d_model,
                        m.num_heads);
  tg::check<ValueError>(m.num_layers >= 1 && m.num_layers <= kMaxLayers, "model: num_layers must be in [1, {}], got {}",
                        kMaxLayers, m.num_layers);
  tg::check<ValueError>(m.dim_feedforward >= 1 && m.dim_feedforward <= kMaxSize,
                        "model: dim_feedforward must be in [1, {}], got {}", kMaxSize, m.dim_feedforward);
  tg::check<ValueError>(weights_at_most(m) <= double(kMaxWeights), "model: up to {:.4g} weights, more than the {} "
                        "allowed (d_model {}, num_layers {}, dim_feedforward {}, block_size {})", weights_at_most(m),
                        kMaxWeights, m.d_model, m.num_layers, m.dim_feedforward, m.block_size);
  tg::check<ValueError>(m.dropout >= 0 && m.dropout < 1, "model: dropout must be in [0, 1), got {}", m.dropout);
  tg::check<ValueError>(t.max_steps >= 1 && t.max_steps <= kMaxSteps, "train: max_steps must be in [1, {}], got {}",
                        kMaxSteps, t.max_steps);
  tg::check<ValueError>(t.batch_size >= 1 && t.batch_size <= kMaxSize, "train: batch_size must be in [1, {}], got {}",
                        kMaxSize, t.batch_size);
  tg::check<ValueError>(std::isfinite(t.lr) && t.lr > 0, "train: lr must be finite and > 0, got {}", t.lr);
  tg::check<ValueError>(t.min_lr >= 0 && t.min_lr <= t.lr, "train: min_lr must be in [0, lr = {}], got {}", t.lr,
                        t.min_lr);
  tg::check<ValueError>(t.warmup_steps >= 0 && t.warmup_steps <= t.decay_steps && t.decay_steps <= kMaxSteps,
                        "train: need 0 <= warmup_steps <= decay_steps <= {}, got {} and {}", kMaxSteps, t.warmup_steps,
                        t.decay_steps);
  tg::check<ValueError>(std::isfinite(t.weight_decay) && t.weight_decay >= 0,
                        "train: weight_decay must be finite and >= 0, got {}", t.weight_decay);
  tg::check<ValueError>(std::isfinite(t.muon_lr) && t.muon_lr >= 0,
                        "train: muon_lr must be finite and >= 0 (0: AdamW alone), got {}", t.muon_lr);
  tg::check<ValueError>(t.clip_grad_norm >= 0, "train: clip_grad_norm must be >= 0 (0: no clipping), got {}",
                        t.clip_grad_norm);
  tg::check<ValueError>(t.eval_interval >= 1, "train: eval_interval must be >= 1, got {}", t.eval_interval);
  tg::check<ValueError>(t.eval_stride >= 1 && t.eval_stride <= m.block_size,
                        "train: eval_stride must be in [1, block_size = {}], got {}", m.block_size, t.eval_stride);
}

namespace {

using Field = std::variant<int64_t*, double*>;

// Every JSON key of a config, per section, and the field it names.
std::map<std::string, std::map<std::string, Field>> fields(Config& c) {
  ModelConfig& m = c.model;
  TrainConfig& t = c.train;
  return {{"model", {{"vocab_size", &m.vocab_size}, {"block_size", &m.block_size}, {"d_model", &m.d_model},
                     {"num_heads", &m.num_heads}, {"num_layers", &m.num_layers},
                     {"dim_feedforward", &m.dim_feedforward}, {"dropout", &m.dropout}}},
          {"train", {{"max_steps", &t.max_steps}, {"batch_size", &t.batch_size}, {"lr", &t.lr}, {"min_lr", &t.min_lr},
                     {"warmup_steps", &t.warmup_steps}, {"decay_steps", &t.decay_steps},
                     {"weight_decay", &t.weight_decay}, {"muon_lr", &t.muon_lr}, {"clip_grad_norm", &t.clip_grad_norm},
                     {"eval_interval", &t.eval_interval}, {"eval_stride", &t.eval_stride}}}};
}

void read(const nlohmann::json& v, const std::string& key, Field field) {
  if (int64_t** i = std::get_if<int64_t*>(&field)) {
    // get<int64_t> of 1e30 or 2^64 - 1 would be undefined or wrap
    tg::check<tg::ValueError>(v.is_number_integer() && !(v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(
                                  std::numeric_limits<int64_t>::max())),
                              "config: '{}' must be a whole number in the range of int64, got {}", key, v.dump());
    **i = v.get<int64_t>();
  } else {
    tg::check<tg::ValueError>(v.is_number(), "config: '{}' must be a number, got {}", key, v.dump());
    *std::get<double*>(field) = v.get<double>();
  }
}

}  // namespace

void to_json(nlohmann::json& j, const Config& c) {
  Config copy = c;
  j = {{"kind", "gpt"}, {"name", c.name}};
  for (const auto& [section, keys] : fields(copy))
    for (const auto& [key, field] : keys) {
      nlohmann::json& slot = j[section][key];  // a lambda may not name a structured binding (clang 14)
      std::visit([&slot](auto* p) { slot = *p; }, field);
    }
}

void from_json(const nlohmann::json& j, Config& c) {
  tg::check<tg::ValueError>(j.is_object(), "config: expected a JSON object, got {}", j.type_name());
  tg::check<tg::ValueError>(!j.contains("kind") || j["kind"] == "gpt", "config: kind must be \"gpt\", got {}",
                            j.contains("kind") ? j["kind"].dump() : "");
  tg::check<tg::ValueError>(!j.contains("name") || j["name"].is_string(), "config: 'name' must be a string, got {}",
                            j.contains("name") ? j["name"].dump() : "");
  c = Config{.name = j.value("name", "custom")};
  auto table = fields(c);
  for (const auto& [section, value] : j.items()) {
    if (section == "kind" || section == "name") continue;
    auto keys = table.find(section);
    tg::check<tg::ValueError>(keys != table.end(), "config: unknown section '{}' (expected kind, name, model, train)",
                              tg::escape_bytes(section));
    tg::check<tg::ValueError>(value.is_object(), "config: '{}' must be an object, got {}", section, value.type_name());
    for (const auto& [key, v] : value.items()) {
      auto field = keys->second.find(key);
      tg::check<tg::ValueError>(field != keys->second.end(), "config: unknown key '{}.{}'", section,
                                tg::escape_bytes(key));
      read(v, section + "." + key, field->second);  // a key left out keeps its default
    }
  }
}

}  // namespace gpt
