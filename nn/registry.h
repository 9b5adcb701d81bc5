#pragma once
// The layer registry behind save_model/load_model: for each layer type, its name, its options as JSON and
// how to build it back from them. The library's own layers are one list, builtin_layer_types()
// (nn/builtin_layers.cpp), which the registry takes in when it is first used: no static object per layer,
// which a linker would drop from a static archive together with the layer's .o when the program names no
// symbol of it (a program that only loads models), so no special link flags. A user-defined layer registers
// itself once in its own code:
//   static const tg::nn::LayerRegistration<MyLayer> registration("MyLayer");
// A registration object rather than a TG_REGISTER_LAYER macro (STYLE: no macro-generated API): it is plain
// C++ the reader can step into, and its constructor can take the two functions of a layer whose options
// are not one struct (Softmax). The JSON of the library's options structs is in nn/options_json.h, included
// only where models are (de)serialised.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <typeindex>
#include <vector>

#include <nlohmann/json.hpp>

#include "nn/layer.h"

namespace tg {
// Element types by their names ("f32"); an unknown name reads as f32, which load_model's read-back
// check then reports.
NLOHMANN_JSON_SERIALIZE_ENUM(DType, {{f32, "f32"}, {f64, "f64"}, {i64, "i64"}, {boolean, "bool"}})
inline void to_json(nlohmann::json& j, const Shape& s) { j = std::vector<int64_t>(s.begin(), s.end()); }
inline void from_json(const nlohmann::json& j, Shape& s) { s = Shape(j.get<std::vector<int64_t>>()); }
}  // namespace tg

namespace nlohmann {
// std::optional as null or its value (nlohmann 3.11.2 has no support of its own).
template <class T>
struct adl_serializer<std::optional<T>> {
  static void to_json(json& j, const std::optional<T>& v) { j = v ? json(*v) : json(nullptr); }
  static void from_json(const json& j, std::optional<T>& v) {
    v = j.is_null() ? std::nullopt : std::optional<T>(j.get<T>());
  }
};
}  // namespace nlohmann

namespace tg::nn {

/// How one layer type is saved and rebuilt: `config` gives a layer's options as JSON, `make` builds a
/// layer of this type from them.
struct LayerType {
  std::string name;  ///< the type's name in the saved architecture ("Dense")
  std::type_index type;  ///< the C++ type, to find the entry of a layer being saved
  std::function<nlohmann::json(const Layer&)> config;  ///< a layer's options as JSON
  std::function<std::unique_ptr<Layer>(const nlohmann::json&)> make;  ///< a layer of this type built from its options
};

/// Adds a type (LayerRegistration calls it). ValueError when its name or its C++ type is registered already.
void register_layer_type(LayerType type);
/// The names of the registered types, sorted.
std::vector<std::string> registered_layer_types();

/// The architecture of `layer`: {"type": name, "options": its config} (a container's config holds its
/// children's architectures). ValueError naming the layer's type_name() when its C++ type is not registered.
nlohmann::json layer_architecture(const Layer& layer);
/// A layer built from an architecture. ValueError for an unknown type (naming it and the known ones),
/// a missing field, or options that do not read back as written (a wrong type or an unknown field);
/// options out of range throw the layer's own constructor error. Under a StorageBudget (core/storage_budget.h,
/// as load_model builds), a layer whose buffers would pass it is a ValueError naming its type and options.
std::unique_ptr<Layer> build_layer(const nlohmann::json& architecture);

/// A container's options: its children's architectures, [[name, architecture], ...] in order.
nlohmann::json child_architectures(const Layer& container);
/// The children that child_architectures' JSON describes, built in order, with their names.
std::vector<std::pair<std::string, std::unique_ptr<Layer>>> build_children(const nlohmann::json& children);

/// The type L under `name` (STYLE: the name its type_name() returns), for L built from the struct its
/// options() returns (which needs to_json/from_json), or, for L without options() and without members of
/// its own (ReLU), default-constructed with options {}. A layer with members but no options() does not
/// compile here: it would come back with its defaults.
template <class L>
LayerType layer_type(std::string name) {
  if constexpr (requires(const L& l) { l.options(); }) {
    using Options = std::decay_t<decltype(std::declval<const L&>().options())>;
    return {std::move(name), typeid(L),
            [](const Layer& l) { return nlohmann::json(static_cast<const L&>(l).options()); },
            [](const nlohmann::json& j) -> std::unique_ptr<Layer> { return std::make_unique<L>(j.get<Options>()); }};
  } else {
    static_assert(std::is_default_constructible_v<L> && sizeof(L) == sizeof(Layer),
                  "L has state but no options(): give it one, or pass config and make functions");
    return {std::move(name), typeid(L), [](const Layer&) { return nlohmann::json::object(); },
            [](const nlohmann::json&) -> std::unique_ptr<Layer> { return std::make_unique<L>(); }};
  }
}

/// The type L under `name`, for any L: `config` writes a layer's options, `make` builds one from them.
template <class L>
LayerType layer_type(std::string name, std::function<nlohmann::json(const L&)> config,
                     std::function<std::unique_ptr<L>(const nlohmann::json&)> make) {
  return {std::move(name), typeid(L),
          [config = std::move(config)](const Layer& l) { return config(static_cast<const L&>(l)); },
          [make = std::move(make)](const nlohmann::json& j) -> std::unique_ptr<Layer> { return make(j); }};
}

/// A list container L (ModuleList, Sequential, or a user's): options {"layers": its children's
/// architectures}, rebuilt by append() in order on an L built empty.
template <class L>
LayerType list_layer_type(std::string name) {
  return layer_type<L>(
      std::move(name), [](const L& l) { return nlohmann::json{{"layers", child_architectures(l)}}; },
      [](const nlohmann::json& j) {
        auto list = std::make_unique<L>();
        for (auto& [key, layer] : build_children(j.at("layers"))) list->append(std::move(layer));
        return list;
      });
}

/// Every layer type of the library (nn/builtin_layers.cpp), which the registry holds from its first use.
std::vector<LayerType> builtin_layer_types();

/// Registers a user-defined L once, from its own code: as layer_type<L>, with the same arguments.
///   static const LayerRegistration<MyLayer> registration("MyLayer");
/// A static one in a static library of the user's is dropped with its .o when the program names nothing in
/// it (as the library's own would be): there, register_layer_type(layer_type<MyLayer>("MyLayer")) in main.
template <class L>
class LayerRegistration {
 public:
  /// Registers L under `name`, built from its options() struct (needs to_json/from_json; see layer_type).
  explicit LayerRegistration(std::string name) { register_layer_type(layer_type<L>(std::move(name))); }
  /// Registers L under `name` with its own `config` and `make` (a layer whose options are not one struct).
  LayerRegistration(std::string name, std::function<nlohmann::json(const L&)> config,
                    std::function<std::unique_ptr<L>(const nlohmann::json&)> make) {
    register_layer_type(layer_type<L>(std::move(name), std::move(config), std::move(make)));
  }
};

}  // namespace tg::nn
