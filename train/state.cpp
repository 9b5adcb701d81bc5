// Capture and restore of a run's state. Every part goes under its own prefix, so one flat safetensors file
// (tensors plus string metadata) holds them all and one atomic rename replaces the previous checkpoint.
// restore() keeps a copy of the current state and puts it back when any part refuses its entry: the
// optimizer may reject a state after the model accepted its own.
#include "train/state.h"

#include <charconv>
#include <cstdlib>

#include <fmt/format.h>

#include "core/error.h"
#include "core/read_file.h"

namespace tg::train {
namespace {

using Meta = std::map<std::string, std::string>;
using Numbers = std::map<std::string, double>;

// The entries of `from` under `prefix`, the prefix removed.
template <class Map>
Map under(const Map& from, const std::string& prefix) {
  Map out;
  for (auto it = from.lower_bound(prefix); it != from.end() && it->first.starts_with(prefix); ++it)
    out.emplace(it->first.substr(prefix.size()), it->second);
  return out;
}

void put_numbers(Meta& meta, const std::string& prefix, const Numbers& values) {
  for (const auto& [k, v] : values) meta[prefix + k] = fmt::format("{}", v);
}

const std::string& entry(const Meta& meta, const std::string& key) {
  auto it = meta.find(key);
  check<ValueError>(it != meta.end(), "no '{}' in the training state", key);
  return it->second;
}

double parse_double(const std::string& key, const std::string& s) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  check<ValueError>(!s.empty() && end == s.c_str() + s.size(), "'{}' is not a number: '{}'", key, escape_bytes(s));
  return v;
}

int64_t parse_int(const Meta& meta, const std::string& key) {
  const std::string& s = entry(meta, key);
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  check<ValueError>(ec == std::errc() && end == s.data() + s.size(), "'{}' is not an integer: '{}'", key, escape_bytes(s));
  return v;
}

Numbers numbers(const Meta& meta, const std::string& prefix) {
  Numbers out;
  for (const auto& [k, v] : under(meta, prefix)) out[k] = parse_double(prefix + k, v);
  return out;
}

// Which parts are present, as stored under "parts".
std::string parts(const TrainingState& s) {
  std::string out;
  auto add = [&out](bool present, const std::string& name) {
    if (present) out += (out.empty() ? "" : ",") + name;
  };
  add(s.model, "model"), add(s.optimizer, "optimizer"), add(s.scheduler, "scheduler"), add(s.plateau, "plateau");
  add(s.loader, "loader"), add(s.early_stopping, "early_stopping");
  for (const auto& [name, gen] : s.generators) add(true, "rng." + name);
  return out;
}

void apply(const TrainingState& s, const Safetensors& c) {
  const Meta& meta = c.metadata;
  if (s.model) s.model->load_state_dict(under(c.tensors, std::string("model.")));
  if (s.optimizer) s.optimizer->load_state_dict({under(c.tensors, std::string("optim.")), under(meta, std::string("optim."))});
  if (s.scheduler) s.scheduler->load_state_dict(numbers(meta, "scheduler."));
  if (s.plateau) s.plateau->load_state_dict(numbers(meta, "plateau."));
  if (s.early_stopping) s.early_stopping->load_state_dict(numbers(meta, "early_stopping."));
  if (s.loader)
    s.loader->load_state({parse_int(meta, "loader.epoch"), parse_int(meta, "loader.batch"),
                          parse_int(meta, "loader.num_batches"), entry(meta, "loader.sampler")});
  default_generator().set_state(entry(meta, "rng.default"));
  for (const auto& [name, gen] : s.generators) gen->set_state(entry(meta, "rng." + name));
}

}  // namespace

Safetensors capture(const TrainingState& s, bool copy) {
  Safetensors out;
  auto put = [&](const std::string& prefix, const TensorMap& tensors) {
    for (const auto& [k, t] : tensors) out.tensors[prefix + k] = copy ? t.clone() : t;
  };
  Meta& meta = out.metadata;
  meta["parts"] = parts(s);
  if (s.model) put("model.", s.model->state_dict());
  if (s.optimizer) {
    const optim::OptimizerState o = s.optimizer->state_dict();
    put("optim.", o.tensors);
    for (const auto& [k, v] : o.values) meta["optim." + k] = v;
  }
  if (s.scheduler) put_numbers(meta, "scheduler.", s.scheduler->state_dict());
  if (s.plateau) put_numbers(meta, "plateau.", s.plateau->state_dict());
  if (s.early_stopping) put_numbers(meta, "early_stopping.", s.early_stopping->state_dict());
  if (s.loader) {
    const data::LoaderState l = s.loader->state();
    meta["loader.epoch"] = fmt::format("{}", l.epoch), meta["loader.batch"] = fmt::format("{}", l.batch);
    meta["loader.num_batches"] = fmt::format("{}", l.num_batches), meta["loader.sampler"] = l.sampler;
  }
  meta["rng.default"] = default_generator().get_state();
  for (const auto& [name, gen] : s.generators) meta["rng." + name] = gen->get_state();
  return out;
}

void restore(const TrainingState& s, const Safetensors& c, const std::string& source) {
  const std::string want = parts(s);
  auto it = c.metadata.find("parts");
  check<ValueError>(it != c.metadata.end(), "{}: not a training state (no 'parts' entry)", source);
  check<ValueError>(it->second == want, "{}: holds the parts [{}], but this run has [{}]", source, escape_bytes(it->second), want);
  const Safetensors backup = capture(s, true);
  try {
    apply(s, c);
  } catch (const Error& e) {
    apply(s, backup);
    throw ValueError(fmt::format("{}: {}", source, e.what()));
  }
}

}  // namespace tg::train
