// Sequential: the chained forward (the layers are held by ModuleList).
#include "nn/sequential.h"

#include "nn/registry.h"

namespace tg::nn {

Variable Sequential::forward(const Variable& x) {
  Variable h = x;
  for (int64_t i = 0; i < size(); ++i) h = (*this)[i](h);
  return h;
}

// save_model: its options are its layers' architectures, as a ModuleList's.
static const LayerRegistration<Sequential> registration = list_registration<Sequential>("Sequential");

}  // namespace tg::nn
