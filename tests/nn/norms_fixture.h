#pragma once
// The PyTorch fixture of the normalisation layers (tests/fixtures/nn/norms.*, made by gen_norms.py): the
// tensorgrad layer for each module of its nn.ModuleDict, and the weights of one module.
#include <memory>
#include <string>

#include "nn/batch_norm.h"
#include "nn/fixture.h"
#include "nn/group_norm.h"
#include "nn/rms_norm.h"

namespace tg::test {

/// The layer built as the fixture's module at `path` ("bn1d", "gn.0", "rms.2", ...) in `dtype`.
inline std::unique_ptr<nn::Layer> make_norm_layer(const std::string& path, DType dt) {
  if (path == "bn1d") return std::make_unique<nn::BatchNorm1d>(nn::BatchNormOptions{.num_features = 3, .dtype = dt});
  if (path == "bn2d") return std::make_unique<nn::BatchNorm2d>(nn::BatchNormOptions{.num_features = 3, .dtype = dt});
  if (path == "bn2d_cma")
    return std::make_unique<nn::BatchNorm2d>(
        nn::BatchNormOptions{.num_features = 3, .momentum = std::nullopt, .dtype = dt});
  if (path == "bn2d_noaffine")
    return std::make_unique<nn::BatchNorm2d>(
        nn::BatchNormOptions{.num_features = 3, .eps = 1e-3, .momentum = 0.3, .affine = false, .dtype = dt});
  if (path == "bn1d_notrack")
    return std::make_unique<nn::BatchNorm1d>(
        nn::BatchNormOptions{.num_features = 3, .track_running_stats = false, .dtype = dt});
  if (path == "gn.0") return std::make_unique<nn::GroupNorm>(nn::GroupNormOptions{2, 6, 1e-5, true, dt});
  if (path == "gn.1") return std::make_unique<nn::GroupNorm>(nn::GroupNormOptions{6, 6, 1e-3, false, dt});
  if (path == "rms.0") return std::make_unique<nn::RMSNorm>(nn::RMSNormOptions{.normalized_shape = {4}, .dtype = dt});
  if (path == "rms.1")
    return std::make_unique<nn::RMSNorm>(nn::RMSNormOptions{.normalized_shape = {3, 4}, .eps = 1e-6, .dtype = dt});
  if (path == "rms.2")
    return std::make_unique<nn::RMSNorm>(
        nn::RMSNormOptions{.normalized_shape = {4}, .elementwise_affine = false, .dtype = dt});
  throw std::runtime_error("make_norm_layer: no module " + path);
}

/// The entries of `state` under "<prefix>.", with the prefix cut off.
inline TensorMap state_under(const TensorMap& state, const std::string& prefix) {
  TensorMap out;
  for (const auto& [key, t] : state)
    if (key.rfind(prefix + ".", 0) == 0) out.emplace(key.substr(prefix.size() + 1), t);
  return out;
}

}  // namespace tg::test
