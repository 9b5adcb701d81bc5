// Sequential: the chained forward (the layers are held by ModuleList).
#include "nn/sequential.h"

namespace tg::nn {

Variable Sequential::forward(const Variable& x) {
  Variable h = x;
  for (int64_t i = 0; i < size(); ++i) h = (*this)[i](h);
  return h;
}

}  // namespace tg::nn
