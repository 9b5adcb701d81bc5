// ModuleList and ModuleDict: ownership of their layers and the names those are registered under (positions
// or keys), kept in step with the list after every insertion, replacement or removal.
#include "nn/containers.h"

#include <algorithm>

namespace tg::nn {

// ---- ModuleList ----

ModuleList& ModuleList::append(std::unique_ptr<Layer> layer) {
  check<ValueError>(layer != nullptr, "{}::append: null layer at position {}", type_name(), size());
  return insert(size(), std::move(layer));
}

ModuleList& ModuleList::extend(std::vector<std::unique_ptr<Layer>> layers) {
  for (size_t i = 0; i < layers.size(); ++i)
    check<ValueError>(layers[i] != nullptr, "{}::extend: null layer at position {} of {}", type_name(), i, layers.size());
  for (auto& layer : layers) append(std::move(layer));
  return *this;
}

// Children are registered by position, so an insertion before the end registers them all again.
ModuleList& ModuleList::insert(int64_t i, std::unique_ptr<Layer> layer) {
  check<IndexError>(i >= 0 && i <= size(), "{}::insert: position {} is out of range for {} layers", type_name(), i,
                    size());
  check<ValueError>(layer != nullptr, "{}::insert: null layer at position {}", type_name(), i);
  if (i == size()) {
    register_layer(std::to_string(i), *layer);
    layers_.push_back(std::move(layer));
    return *this;
  }
  layers_.insert(layers_.begin() + i, std::move(layer));
  clear_layers();
  for (size_t j = 0; j < layers_.size(); ++j) register_layer(std::to_string(j), *layers_[j]);
  return *this;
}

Layer& ModuleList::operator[](int64_t i) {
  check<IndexError>(i >= -size() && i < size(), "{}: index {} is out of range for {} layers", type_name(), i, size());
  return *layers_[size_t(i < 0 ? i + size() : i)];
}

// ---- ModuleDict ----

ModuleDict::Entries::iterator ModuleDict::find(const std::string& key) {
  return std::find_if(entries_.begin(), entries_.end(), [&](const auto& e) { return e.first == key; });
}

void ModuleDict::reregister() {
  clear_layers();
  for (const auto& [key, layer] : entries_) register_layer(key, *layer);
}

ModuleDict& ModuleDict::insert(const std::string& key, std::unique_ptr<Layer> layer) {
  check<ValueError>(!key.empty() && key.find('.') == std::string::npos,
                    "{}::insert: key '{}' must be non-empty and contain no '.'", type_name(), key);
  check<ValueError>(layer != nullptr, "{}::insert: null layer for key '{}'", type_name(), key);
  auto it = find(key);
  if (it == entries_.end()) {
    register_layer(key, *layer);
    entries_.emplace_back(key, std::move(layer));
    return *this;
  }
  it->second = std::move(layer);
  reregister();
  return *this;
}

bool ModuleDict::contains(const std::string& key) const {
  return std::any_of(entries_.begin(), entries_.end(), [&](const auto& e) { return e.first == key; });
}

Layer& ModuleDict::at(const std::string& key) {
  auto it = find(key);
  check<IndexError>(it != entries_.end(), "{}: no key '{}' (keys: [{}])", type_name(), key, fmt::join(keys(), ", "));
  return *it->second;
}

std::unique_ptr<Layer> ModuleDict::pop(const std::string& key) {
  at(key);  // the error for a missing key
  auto it = find(key);
  std::unique_ptr<Layer> layer = std::move(it->second);
  entries_.erase(it);
  reregister();
  return layer;
}

std::vector<std::string> ModuleDict::keys() const {
  std::vector<std::string> out;
  for (const auto& [key, layer] : entries_) out.push_back(key);
  return out;
}

}  // namespace tg::nn
