#pragma once
// Whole-model save and load: the architecture (each layer's type and options, from the registry in
// nn/registry.h) as JSON in the safetensors metadata, with the weights and buffers, so that load_model
// rebuilds the model with no user code. PyTorch reads the weights with safetensors.torch.load_file.
#include <memory>
#include <string>

#include "nn/layer.h"

namespace tg::nn {

/// The version of the architecture format that save_model writes and load_model reads.
inline constexpr int kModelFormatVersion = 1;

/// Writes model.state_dict() and its architecture to `path` atomically (a temporary file, then rename),
/// with metadata {"format": "tensorgrad", "format_version": "1", "layer": type_name(), "architecture": JSON}.
/// ValueError naming the file and the layer's type when a layer in it is not registered.
void save_model(const Layer& model, const std::string& path);

/// The model that save_model wrote to `path`, in training mode as a newly built layer (call eval() for
/// inference); a Dropout draws from the default generator. Every error names the file: ValueError for a
/// file without an architecture (Layer::save writes weights only), another format version (naming both),
/// bad JSON, an unknown type (naming the known ones) or bad options, or options whose layers would take more
/// memory than the file's tensors justify (8 x their bytes + 1 MiB: a crafted d_model of 10^6 is refused
/// naming the layer, its options and the file's largest dimension, before it allocates); the layers' own
/// constructor errors for options out of range; load_state_dict's errors (missing or unexpected keys, ShapeError naming the
/// parameter and both shapes) when the weights do not fit the architecture.
std::unique_ptr<Layer> load_model(const std::string& path);

}  // namespace tg::nn
