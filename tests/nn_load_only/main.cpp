// A program that names no layer type, as one that only loads models, linked with no special flags: every
// library layer is still registered (the registry takes in builtin_layer_types() on first use, rather than
// relying on static objects that a linker drops with the archive members nobody names). Exits 1 naming
// the types it lacks.
#include <set>

#include "nn/registry.h"

int main() {
  const std::vector<std::string> known = tg::nn::registered_layer_types();
  const std::set<std::string> registered(known.begin(), known.end());
  std::vector<std::string> missing;
  for (const char* type : {"Conv2d", "Dense", "Encoder", "GRU", "MaxPool2d", "ModuleDict", "ReLU", "RMSNorm",
                           "Sequential", "Softmax", "Transformer"})
    if (!registered.count(type)) missing.push_back(type);
  if (!missing.empty()) fmt::print("not registered: {}\n", fmt::join(missing, ", "));
  return missing.empty() ? 0 : 1;
}
