// save_model / load_model: the safetensors file of Layer::save plus the architecture in its metadata.
// Errors from the layers and the registry are re-thrown with the file's name in front, as the same type.
#include "nn/save_model.h"

#include <algorithm>

#include "core/read_file.h"
#include "core/storage_budget.h"
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

// The tensor memory that building the layers of `file`'s architecture may take, as StorageBudget counts it (64
// bytes more per buffer): 8 times what the file's tensors take, plus 1 MiB. Building a layer takes up to 4
// times its weights (Embedding: the buffer, normal draws in f64, the conversion), twice that for f64 options
// over f32 weights (which load_state_dict then refuses, naming both). A model that fits its weights builds
// within it; one whose options ask for more than its file holds (d_model 10^6, num_layers 10^5 with two layers'
// weights) is refused at its first buffer past it, before the weights are even compared.
StorageBudget build_budget(const Safetensors& file) {
  int64_t bytes = 0, largest = 0;
  for (const auto& [name, t] : file.tensors) {
    bytes += t.numel() * dtype_size(t.dtype()) + 64;
    for (int64_t d : t.shape()) largest = std::max(largest, d);
  }
  return StorageBudget(8 * bytes + (int64_t(1) << 20),
                       fmt::format("8 x the {} bytes of the file's {} tensors, whose largest dimension is {}, + 1 MiB",
                                   bytes, file.tensors.size(), largest));
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
    const nlohmann::json architecture = read_architecture(file.metadata);
    std::unique_ptr<Layer> model;
    {
      const StorageBudget budget = build_budget(file);
      model = build_layer(architecture);
    }
    model->load_state_dict(file.tensors, /*strict=*/true);
    return model;
  });
}

}  // namespace tg::nn
