#pragma once
// Every nn header: layers, attention and the Transformer encoder, positional encodings, activations,
// Sequential, losses, initialisation.
#include "nn/activation.h"
#include "nn/attention.h"
#include "nn/dense.h"
#include "nn/dropout.h"
#include "nn/embedding.h"
#include "nn/encoder.h"
#include "nn/init.h"
#include "nn/layer.h"
#include "nn/layer_norm.h"
#include "nn/loss.h"
#include "nn/positional.h"
#include "nn/sequential.h"
