#pragma once
// Sequential: a chain of unary layers that it owns, applied in order.
#include <memory>
#include <utility>
#include <vector>

#include "nn/layer.h"

namespace tg::nn {

/// Layers applied one after another, y = f_n(... f_1(x)), registered as "0", "1", ... as PyTorch's
/// nn.Sequential (so parameter names read "0.weight", "2.bias"). An empty Sequential is the identity.
///   Sequential net;
///   net.emplace<Dense>(DenseOptions{.in_features = 4, .out_features = 8});
///   net.emplace<ReLU>();
class Sequential : public Layer {
 public:
  Sequential() = default;
  /// Appends a layer and takes ownership; ValueError for a null pointer.
  Sequential& add(std::unique_ptr<Layer> layer);
  /// Constructs a T from `args` in place, appends it and returns it.
  template <class T, class... Args>
  T& emplace(Args&&... args) {
    auto layer = std::make_unique<T>(std::forward<Args>(args)...);
    T& ref = *layer;
    add(std::move(layer));
    return ref;
  }
  /// Each layer's operator() in turn (so their forward hooks run).
  Variable forward(const Variable& x) override;
  std::string type_name() const override { return "Sequential"; }
  int64_t size() const { return int64_t(layers_.size()); }
  /// The i-th layer; IndexError when out of range.
  Layer& operator[](int64_t i);

 private:
  std::vector<std::unique_ptr<Layer>> layers_;
};

}  // namespace tg::nn
