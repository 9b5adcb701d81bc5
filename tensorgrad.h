#pragma once
// The umbrella header: everything a model author needs, `#include <tensorgrad/tensorgrad.h>`.
#include "core/error.h"
#include "core/format.h"
#include "core/ops.h"
#include "core/parallel.h"
#include "core/random.h"
#include "core/tensor.h"
#include "autograd/functions.h"
#include "autograd/gradcheck.h"
#include "autograd/variable.h"
#include "core/safetensors.h"
#include "nn/nn.h"
#include "optim/optim.h"
