#pragma once
// Containers of layers they own, as PyTorch's nn.ModuleList and nn.ModuleDict: children named by position
// ("layers.0.weight") or by key ("blocks.encoder.weight"), so that state_dicts of either side load.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "nn/layer.h"

namespace tg::nn {

namespace detail {
// `layer` as a T; ValueError naming `where` and the layer's type when it is not one.
template <class T>
T& layer_as(Layer& layer, const std::string& where) {
  T* typed = dynamic_cast<T*>(&layer);
  check<ValueError>(typed != nullptr, "{}: the layer is a {}, not the type asked for", where, layer.type_name());
  return *typed;
}
}  // namespace detail

/// Layers held in a list, registered as "0", "1", ... (PyTorch's nn.ModuleList); it has no forward of its own.
///   ModuleList layers;
///   for (int i = 0; i < 3; ++i) layers.emplace<Dense>(DenseOptions{.in_features = 8, .out_features = 8});
///   for (int64_t i = 0; i < layers.size(); ++i) h = layers[i](h);
class ModuleList : public Layer {
 public:
  ModuleList() = default;
  /// Appends a layer and takes ownership; ValueError for a null pointer.
  ModuleList& append(std::unique_ptr<Layer> layer);
  /// Appends each layer in order (nothing is appended when one is null: ValueError).
  ModuleList& extend(std::vector<std::unique_ptr<Layer>> layers);
  /// Inserts a layer before position i in [0, size()] and renumbers the ones after it; IndexError outside,
  /// ValueError for a null pointer.
  ModuleList& insert(int64_t i, std::unique_ptr<Layer> layer);
  /// Constructs a T from `args` in place, appends it and returns it.
  template <class T, class... Args>
  T& emplace(Args&&... args) {
    auto layer = std::make_unique<T>(std::forward<Args>(args)...);
    T& ref = *layer;
    append(std::move(layer));
    return ref;
  }
  int64_t size() const { return int64_t(layers_.size()); }  ///< the number of layers
  bool empty() const { return layers_.empty(); }            ///< whether there is none
  /// The i-th layer, i in [-size(), size()) (negative counts from the end, as in Python); IndexError outside.
  Layer& operator[](int64_t i);
  /// The i-th layer as a T (to call its own forward overloads); ValueError when it is not a T.
  template <class T>
  T& get(int64_t i) {
    return detail::layer_as<T>((*this)[i], fmt::format("{}::get({})", type_name(), i));
  }
  std::string type_name() const override { return "ModuleList"; }

 private:
  std::vector<std::unique_ptr<Layer>> layers_;
};

/// Layers held by name in insertion order (PyTorch's nn.ModuleDict), each registered under its key, which
/// must be non-empty and hold no '.'; it has no forward of its own.
///   ModuleDict blocks;
///   blocks.emplace<Dense>("encoder", DenseOptions{.in_features = 8, .out_features = 4});
///   Variable h = blocks["encoder"](x);
class ModuleDict : public Layer {
 public:
  ModuleDict() = default;
  /// Adds a layer under `key` and takes ownership; a key already present is replaced in its place (as
  /// PyTorch's module_dict[key] = m). ValueError for a bad key or a null pointer.
  ModuleDict& insert(const std::string& key, std::unique_ptr<Layer> layer);
  /// Constructs a T from `args` in place, inserts it under `key` and returns it.
  template <class T, class... Args>
  T& emplace(const std::string& key, Args&&... args) {
    auto layer = std::make_unique<T>(std::forward<Args>(args)...);
    T& ref = *layer;
    insert(key, std::move(layer));
    return ref;
  }
  /// Whether a layer is stored under `key`.
  bool contains(const std::string& key) const;
  /// The layer under `key`; IndexError naming the key and the keys present when it is missing.
  Layer& at(const std::string& key);
  Layer& operator[](const std::string& key) { return at(key); }  ///< at(key)
  /// The layer under `key` as a T; ValueError when it is not a T.
  template <class T>
  T& get(const std::string& key) {
    return detail::layer_as<T>(at(key), fmt::format("{}::get('{}')", type_name(), key));
  }
  /// Removes the layer under `key` and hands it back; IndexError as at().
  std::unique_ptr<Layer> pop(const std::string& key);
  /// The keys in insertion order.
  std::vector<std::string> keys() const;
  int64_t size() const { return int64_t(entries_.size()); }  ///< the number of layers
  bool empty() const { return entries_.empty(); }            ///< whether there is none
  std::string type_name() const override { return "ModuleDict"; }

 private:
  using Entries = std::vector<std::pair<std::string, std::unique_ptr<Layer>>>;
  Entries::iterator find(const std::string& key);
  // Registers the layers again in order, after a replacement or a removal.
  void reregister();
  Entries entries_;
};

}  // namespace tg::nn
