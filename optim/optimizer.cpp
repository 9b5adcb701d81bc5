// The Optimizer base: parameter groups and their validation, zero_grad, and state_dict/load_state_dict/
// save/load over the state each subclass registers. Numbers travel as shortest round-trip decimal strings
// (fmt's "{}"), which strtod reads back to the same bits, so a resumed run is bit-exact; in a file they
// are the safetensors metadata, next to the state tensors.
#include "optim/optimizer.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <utility>

#include "autograd/node.h"
#include "core/error.h"
#include "core/format.h"

namespace tg::optim {
namespace {

const std::string& get(const std::map<std::string, std::string>& values, const std::string& op,
                       const std::string& key) {
  auto it = values.find(key);
  check<ValueError>(it != values.end(), "{}: the state has no '{}'", op, key);
  return it->second;
}

double parse_double(const std::map<std::string, std::string>& values, const std::string& op,
                    const std::string& key) {
  const std::string& s = get(values, op, key);
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(s.c_str(), &end);
  check<ValueError>(!s.empty() && end == s.c_str() + s.size() && errno != ERANGE,
                    "{}: '{}' is not a number: '{}'", op, key, s);
  return v;
}

int64_t parse_int(const std::map<std::string, std::string>& values, const std::string& op, const std::string& key) {
  const std::string& s = get(values, op, key);
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  check<ValueError>(ec == std::errc() && end == s.data() + s.size(), "{}: '{}' is not an integer: '{}'", op, key, s);
  return v;
}

}  // namespace

Optimizer::Optimizer(std::string name, std::vector<ParamGroup> groups, double lr, double weight_decay)
    : name_(std::move(name)), groups_(std::move(groups)) {
  check_option("lr", lr);
  check_option("weight_decay", weight_decay);
  std::map<std::pair<const Storage*, int64_t>, size_t> seen;  // (storage, offset) -> parameter index
  for (size_t g = 0; g < groups_.size(); ++g) {
    ParamGroup& group = groups_[g];
    group.lr = group.lr.value_or(lr);
    group.weight_decay = group.weight_decay.value_or(weight_decay);
    check_option(fmt::format("param group {}: lr", g).c_str(), *group.lr);
    check_option(fmt::format("param group {}: weight_decay", g).c_str(), *group.weight_decay);
    for (const Variable& p : group.params) {
      const size_t i = params_.size();
      check<ValueError>(p.defined(), "{}: parameter {} is undefined", name_, i);
      check<DTypeError>(is_floating(p.dtype()), "{}: parameter {} has dtype {}; only f32/f64 can be optimized",
                        name_, i, p.dtype());
      check<ValueError>(p.is_leaf(), "{}: parameter {} is not a leaf (it is the output of {})", name_, i,
                        p.is_leaf() ? "" : p.grad_fn()->name);
      auto [it, fresh] = seen.emplace(std::pair{p.value().storage().get(), p.value().offset()}, i);
      check<ValueError>(fresh, "{}: parameter {} appears twice (also parameter {})", name_, i, it->second);
      params_.push_back(p);
      group_of_.push_back(g);
    }
  }
  check<ValueError>(!params_.empty(), "{}: got an empty parameter list", name_);
}

void Optimizer::check_option(const char* what, double value, bool below_one) const {
  check<ValueError>(std::isfinite(value) && value >= 0 && (!below_one || value < 1),
                    "{}: invalid {}: {} (expected a finite value in {})", name_, what, value,
                    below_one ? "[0, 1)" : "[0, inf)");
}

void Optimizer::zero_grad() {
  for (Variable& p : params_) p.zero_grad();
}

double Optimizer::lr(size_t group) const {
  check<IndexError>(group < groups_.size(), "{}: no param group {} (there are {})", name_, group, groups_.size());
  return *groups_[group].lr;
}

void Optimizer::set_lr(size_t group, double lr) {
  check<IndexError>(group < groups_.size(), "{}: no param group {} (there are {})", name_, group, groups_.size());
  check_option("lr", lr);
  groups_[group].lr = lr;
}

std::optional<double> Optimizer::option(const std::string& name) const {
  for (const Option& o : options_)
    if (o.name == name) return *o.value;
  return std::nullopt;
}

void Optimizer::set_option(const std::string& name, double value) {
  auto it = std::find_if(options_.begin(), options_.end(), [&](const Option& o) { return o.name == name; });
  check<ValueError>(it != options_.end(), "{}: no option '{}'", name_, name);
  check_option(name.c_str(), value, it->below_one);
  *it->value = value;
}

void Optimizer::register_state(const std::string& name, std::vector<Tensor>& tensors) {
  tensors.resize(params_.size());
  tensor_state_.emplace_back(name, &tensors);
}
void Optimizer::register_state(const std::string& name, std::vector<int64_t>& counts) {
  counts.resize(params_.size());
  count_state_.emplace_back(name, &counts);
}
void Optimizer::register_option(const std::string& name, double& value, bool below_one) {
  options_.push_back({name, &value, below_one});
}
void Optimizer::register_flag(const std::string& name, const bool& value) { flags_.emplace_back(name, &value); }

OptimizerState Optimizer::state_dict() const {
  OptimizerState s;
  auto& v = s.values;
  v["optimizer"] = name_;
  v["param_count"] = fmt::format("{}", params_.size());
  v["group_count"] = fmt::format("{}", groups_.size());
  for (size_t g = 0; g < groups_.size(); ++g) {
    v[fmt::format("group.{}.size", g)] = fmt::format("{}", groups_[g].params.size());
    v[fmt::format("group.{}.lr", g)] = fmt::format("{}", *groups_[g].lr);
    v[fmt::format("group.{}.weight_decay", g)] = fmt::format("{}", *groups_[g].weight_decay);
    if (groups_[g].initial_lr) v[fmt::format("group.{}.initial_lr", g)] = fmt::format("{}", *groups_[g].initial_lr);
  }
  for (size_t i = 0; i < params_.size(); ++i) {
    v[fmt::format("{}.shape", i)] = fmt::format("{}", params_[i].shape());
    for (const auto& [name, counts] : count_state_) v[fmt::format("{}.{}", i, name)] = fmt::format("{}", (*counts)[i]);
    for (const auto& [name, tensors] : tensor_state_)
      if ((*tensors)[i].defined()) s.tensors[fmt::format("{}.{}", i, name)] = (*tensors)[i];
  }
  for (const auto& o : options_) v[o.name] = fmt::format("{}", *o.value);
  for (const auto& [name, flag] : flags_) v[name] = *flag ? "true" : "false";
  return s;
}

void Optimizer::load_state_dict(const OptimizerState& state) {
  const std::string op = name_ + ".load_state_dict";
  const auto& v = state.values;
  // 1. the same kind of optimizer over the same parameters
  const std::string& type = get(v, op, "optimizer");
  check<ValueError>(type == name_, "{}: the state is of another optimizer: {} vs {}", op, type, name_);
  const int64_t n = parse_int(v, op, "param_count"), ng = parse_int(v, op, "group_count");
  check<ValueError>(n == int64_t(params_.size()), "{}: parameter count differs: {} in the state vs {} here", op, n,
                    params_.size());
  check<ValueError>(ng == int64_t(groups_.size()), "{}: param group count differs: {} in the state vs {} here", op,
                    ng, groups_.size());
  for (size_t g = 0; g < groups_.size(); ++g) {
    const int64_t size = parse_int(v, op, fmt::format("group.{}.size", g));
    check<ValueError>(size == int64_t(groups_[g].params.size()),
                      "{}: param group {} size differs: {} in the state vs {} here", op, g, size,
                      groups_[g].params.size());
  }
  for (size_t i = 0; i < params_.size(); ++i) {
    const std::string& shape = get(v, op, fmt::format("{}.shape", i));
    check<ShapeError>(shape == fmt::format("{}", params_[i].shape()),
                      "{}: parameter {} shape differs: {} in the state vs {} here", op, i, shape, params_[i].shape());
  }
  for (const auto& [name, flag] : flags_) {
    const std::string& saved = get(v, op, name);
    check<ValueError>(saved == (*flag ? "true" : "false"), "{}: {} differs: {} in the state vs {} here", op, name,
                      saved, *flag);
  }
  // 2. read everything into new containers
  std::vector<ParamGroup> groups = groups_;
  for (size_t g = 0; g < groups.size(); ++g) {
    groups[g].lr = parse_double(v, op, fmt::format("group.{}.lr", g));
    groups[g].weight_decay = parse_double(v, op, fmt::format("group.{}.weight_decay", g));
    check_option("lr", *groups[g].lr);
    check_option("weight_decay", *groups[g].weight_decay);
    const std::string key = fmt::format("group.{}.initial_lr", g);
    groups[g].initial_lr.reset();
    if (v.count(key)) groups[g].initial_lr = parse_double(v, op, key);
  }
  std::vector<std::vector<int64_t>> counts;
  for (const auto& [name, _] : count_state_) {
    counts.emplace_back(params_.size());
    for (size_t i = 0; i < params_.size(); ++i) {
      const std::string key = fmt::format("{}.{}", i, name);
      counts.back()[i] = parse_int(v, op, key);
      // A negative step count would make Adam's next t = 0 and its bias correction 1 - β⁰ = 0: lr / 0.
      check<ValueError>(counts.back()[i] >= 0, "{}: '{}' must be >= 0, got {}", op, key, counts.back()[i]);
    }
  }
  std::vector<double> options;
  for (const auto& o : options_) {
    options.push_back(parse_double(v, op, o.name));
    check_option(o.name.c_str(), options.back(), o.below_one);
  }
  std::vector<std::vector<Tensor>> tensors(tensor_state_.size(), std::vector<Tensor>(params_.size()));
  for (const auto& [key, t] : state.tensors) {
    const size_t dot = key.find('.');
    size_t i = 0, k = 0;
    auto [end, ec] = std::from_chars(key.data(), key.data() + (dot == std::string::npos ? 0 : dot), i);
    while (k < tensor_state_.size() && key.compare(dot + 1, std::string::npos, tensor_state_[k].first) != 0) ++k;
    check<ValueError>(dot != std::string::npos && ec == std::errc() && end == key.data() + dot &&
                          i < params_.size() && k < tensor_state_.size(),
                      "{}: unexpected tensor '{}'", op, key);
    const Tensor& p = params_[i].value();
    check<ShapeError>(t.shape() == p.shape(), "{}: '{}' has shape {} but parameter {} has shape {}", op, key,
                      t.shape(), i, p.shape());
    check<DTypeError>(t.dtype() == p.dtype(), "{}: '{}' has dtype {} but parameter {} has dtype {}", op, key,
                      t.dtype(), i, p.dtype());
    tensors[k][i] = t.clone();
  }
  // 3. commit
  groups_ = std::move(groups);
  for (size_t k = 0; k < count_state_.size(); ++k) *count_state_[k].second = std::move(counts[k]);
  for (size_t k = 0; k < options_.size(); ++k) *options_[k].value = options[k];
  for (size_t k = 0; k < tensor_state_.size(); ++k) *tensor_state_[k].second = std::move(tensors[k]);
}

void Optimizer::save(const std::string& path) const {
  OptimizerState s = state_dict();
  save_safetensors(path, s.tensors, s.values);
}

void Optimizer::load(const std::string& path) {
  Safetensors file = load_safetensors(path);
  load_state_dict({std::move(file.tensors), std::move(file.metadata)});
}

}  // namespace tg::optim
