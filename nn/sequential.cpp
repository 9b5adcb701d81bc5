// Sequential: ownership of its layers and the chained forward.
#include "nn/sequential.h"

namespace tg::nn {

Sequential& Sequential::add(std::unique_ptr<Layer> layer) {
  check<ValueError>(layer != nullptr, "Sequential::add: null layer at position {}", layers_.size());
  register_layer(std::to_string(layers_.size()), *layer);
  layers_.push_back(std::move(layer));
  return *this;
}

Variable Sequential::forward(const Variable& x) {
  Variable h = x;
  for (const auto& layer : layers_) h = (*layer)(h);
  return h;
}

Layer& Sequential::operator[](int64_t i) {
  check<IndexError>(i >= 0 && i < size(), "Sequential: index {} is out of range for {} layers", i, size());
  return *layers_[size_t(i)];
}

}  // namespace tg::nn
