// The layer registry: types by name (for loading) and by C++ type (for saving), the library's list
// (builtin_layer_types) from its first use on, and users' LayerRegistrations; and the architecture JSON walk
// both ways.
// Reading back checks every layer's options by writing them again: a field of the wrong type (2.5 for
// an integer) or unknown to the layer reads back differently, and is reported instead of ignored.
#include "nn/registry.h"

#include <map>
#include <mutex>
#include <unordered_map>

#include "core/read_file.h"
#include "core/storage_budget.h"

namespace tg::nn {
namespace {

struct Registry {
  // The library's layers, taken in once: the registry is a function-local static, built on first use (by
  // a lookup, or by a user's registration in a static initialiser), once even when threads race to it.
  Registry() {
    for (LayerType& type : builtin_layer_types()) add(std::move(type));
  }
  // The caller holds the lock (or is the constructor).
  void add(LayerType type) {
    check<ValueError>(!by_name.count(type.name), "register_layer_type: the name '{}' is registered already",
                      type.name);
    auto same = name_of.find(type.type);
    if (same != name_of.end())
      throw ValueError(
          fmt::format("register_layer_type: '{}' is registered already as '{}'", type.name, same->second));
    name_of.emplace(type.type, type.name);
    by_name.emplace(type.name, std::move(type));
  }

  std::mutex mutex;  // registrations may also come after main starts (a plugin, a test)
  std::map<std::string, LayerType> by_name;
  std::unordered_map<std::type_index, std::string> name_of;
};

Registry& registry() {
  static Registry r;
  return r;
}

// "A, B, C": the registered names, for errors; the caller holds the lock.
std::string known_locked(const Registry& r) {
  std::vector<std::string> names;
  for (const auto& [name, type] : r.by_name) names.push_back(name);
  return fmt::format("{}", fmt::join(names, ", "));
}

// The entry stays valid after the lock is released: std::map nodes do not move, and none is erased.
const LayerType& type_named(const std::string& name) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  auto it = r.by_name.find(name);
  if (it == r.by_name.end())  // not check(): known_locked would run on every lookup
    throw ValueError(fmt::format("unknown layer type '{}' (known: {}); register it with tg::nn::LayerRegistration",
                                 escape_bytes(name), known_locked(r)));
  return it->second;
}

}  // namespace

void register_layer_type(LayerType type) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  r.add(std::move(type));
}

std::vector<std::string> registered_layer_types() {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  std::vector<std::string> names;
  for (const auto& [name, type] : r.by_name) names.push_back(name);
  return names;
}

nlohmann::json layer_architecture(const Layer& layer) {
  std::string name;
  {
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    auto it = r.name_of.find(typeid(layer));
    if (it == r.name_of.end())
      throw ValueError(
          fmt::format("the layer type '{}' is not registered (known: {}); register it with "
                      "tg::nn::LayerRegistration",
                      layer.type_name(), known_locked(r)));
    name = it->second;
  }
  return {{"type", name}, {"options", type_named(name).config(layer)}};
}

std::unique_ptr<Layer> build_layer(const nlohmann::json& architecture) {
  check<ValueError>(architecture.is_object() && architecture.contains("type") && architecture.contains("options"),
                    "a layer's architecture needs \"type\" and \"options\", got {}", architecture.dump());
  const std::string name = architecture.at("type").get<std::string>();
  const nlohmann::json& options = architecture.at("options");
  const LayerType& type = type_named(name);
  std::unique_ptr<Layer> layer;
  try {
    layer = type.make(options);
  } catch (const nlohmann::json::exception& e) {
    throw ValueError(fmt::format("{}: bad options {}: {}", name, options.dump(), e.what()));
  } catch (const StorageBudgetError& e) {  // the innermost layer names itself; the ones around it pass it on
    throw ValueError(fmt::format("{} with options {} asks for more memory than its file's weights justify: {}", name,
                                 options.dump(), e.what()));
  }
  const nlohmann::json back = type.config(*layer);
  check<ValueError>(back == options, "{}: options {} read back as {}: a field has the wrong type or is unknown", name,
                    options.dump(), back.dump());
  return layer;
}

nlohmann::json child_architectures(const Layer& container) {
  nlohmann::json children = nlohmann::json::array();
  for (const auto& [name, child] : container.named_children()) children.push_back({name, layer_architecture(*child)});
  return children;
}

std::vector<std::pair<std::string, std::unique_ptr<Layer>>> build_children(const nlohmann::json& children) {
  check<ValueError>(children.is_array(), "a container's layers must be a list, got {}", children.dump());
  std::vector<std::pair<std::string, std::unique_ptr<Layer>>> out;
  for (const nlohmann::json& child : children) {
    check<ValueError>(child.is_array() && child.size() == 2 && child[0].is_string(),
                      "a container's layer must be [name, architecture], got {}", child.dump());
    out.emplace_back(child[0].get<std::string>(), build_layer(child[1]));
  }
  return out;
}

}  // namespace tg::nn
