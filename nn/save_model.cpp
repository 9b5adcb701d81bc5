// save_model / load_model: the safetensors file of Layer::save plus the architecture in its metadata.
// Errors from the layers and the registry are re-thrown with the file's name in front, as the same type.
#include "nn/save_model.h"

#include "core/read_file.h"
#include "nn/registry.h"

namespace tg::nn {
namespace {

// f(), with "<op>('<path>'): " in front of the message of any error it throws, keeping the error's type.
template <class F>
auto naming_file(const char* op, const std::string& path, F&& f) {
  const std::string where = fmt::format("{}('{}'): ", op, path);
  try {
    return f();
  } catch (const ShapeError& e) {
    throw ShapeError(where + e.what());
  } catch (const DTypeError& e) {
    throw DTypeError(where + e.what());
  } catch (const IndexError& e) {
    throw IndexError(where + e.what());
  } catch (const ValueError& e) {
    throw ValueError(where + e.what());
  } catch (const Error& e) {
    throw Error(where + e.what());
  } catch (const nlohmann::json::exception& e) {
    throw ValueError(where + "bad architecture: " + e.what());
  }
}

// The architecture in `metadata`, checked for our format and version.
nlohmann::json read_architecture(const std::map<std::string, std::string>& metadata) {
  auto get = [&](const char* key) { return metadata.count(key) ? metadata.at(key) : std::string(); };
  check<ValueError>(get("format") == "tensorgrad" && metadata.count("architecture"),
                    "the file holds weights without an architecture (Layer::save writes those): build the model "
                    "and call its load(path)");
  const std::string version = get("format_version");
  check<ValueError>(version == std::to_string(kModelFormatVersion),
                    "architecture format version '{}' vs this library's '{}'", escape_bytes(version), kModelFormatVersion);
  try {
    return nlohmann::json::parse(metadata.at("architecture"));
  } catch (const nlohmann::json::parse_error& e) {
    throw ValueError(fmt::format("the architecture is not valid JSON: {}", escape_bytes(e.what())));
  }
}

}  // namespace

void save_model(const Layer& model, const std::string& path) {
  const nlohmann::json architecture = naming_file("save_model", path, [&] { return layer_architecture(model); });
  save_safetensors(path, model.state_dict(),
                   {{"format", "tensorgrad"},
                    {"format_version", std::to_string(kModelFormatVersion)},
                    {"layer", model.type_name()},
                    {"architecture", architecture.dump()}});
}

std::unique_ptr<Layer> load_model(const std::string& path) {
  const Safetensors file = load_safetensors(path);  // its errors name the file already
  return naming_file("load_model", path, [&] {
    std::unique_ptr<Layer> model = build_layer(read_architecture(file.metadata));
    model->load_state_dict(file.tensors, /*strict=*/true);
    return model;
  });
}

}  // namespace tg::nn
