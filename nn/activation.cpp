// The activation layers whose forward is more than one call.
#include "nn/activation.h"

namespace tg::nn {

Variable GELU::forward(const Variable& x) { return gelu(x, options_.approximate == GELUOptions::Approximate::tanh); }

}  // namespace tg::nn
