#pragma once
// Sequential: a chain of unary layers that it owns, applied in order.
#include <memory>

#include "nn/containers.h"

namespace tg::nn {

/// Layers applied one after another, y = f_n(... f_1(x)): a ModuleList (so registered as "0", "1", ... as
/// PyTorch's nn.Sequential, parameter names reading "0.weight", "2.bias") with a forward. An empty
/// Sequential is the identity.
///   Sequential net;
///   net.emplace<Dense>(DenseOptions{.in_features = 4, .out_features = 8});
///   net.emplace<ReLU>();
class Sequential : public ModuleList {
 public:
  Sequential() = default;
  /// Appends a layer and takes ownership; ValueError for a null pointer.
  Sequential& add(std::unique_ptr<Layer> layer) {
    append(std::move(layer));
    return *this;
  }
  /// Each layer's operator() in turn (so their forward hooks run).
  Variable forward(const Variable& x) override;
  std::string type_name() const override { return "Sequential"; }
};

}  // namespace tg::nn
