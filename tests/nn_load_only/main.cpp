// A program that names no layer type, as one that only loads models: every library layer must still be
// registered (the archive is linked whole, CMakeLists.txt). Exits 1 naming the types it lacks.
#include <set>

#include "nn/registry.h"

int main() {
  const std::vector<std::string> known = tg::nn::registered_layer_types();
  std::vector<std::string> missing;
  for (const char* type : {"Dense", "Encoder", "ModuleDict", "ReLU", "RMSNorm", "Sequential", "Softmax"})
    if (!std::set<std::string>(known.begin(), known.end()).count(type)) missing.push_back(type);
  if (!missing.empty()) fmt::print("not registered: {}\n", fmt::join(missing, ", "));
  return missing.empty() ? 0 : 1;
}
