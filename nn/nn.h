#pragma once
// Every nn header: layers, normalisations, attention, the Transformer encoder and decoder, positional
// encodings, activations, containers (Sequential, ModuleList, ModuleDict), losses, initialisation, sampling
// from a language model.
#include "nn/activation.h"
#include "nn/attention.h"
#include "nn/batch_norm.h"
#include "nn/containers.h"
#include "nn/decoder.h"
#include "nn/dense.h"
#include "nn/dropout.h"
#include "nn/embedding.h"
#include "nn/encoder.h"
#include "nn/group_norm.h"
#include "nn/init.h"
#include "nn/layer.h"
#include "nn/layer_norm.h"
#include "nn/loss.h"
#include "nn/positional.h"
#include "nn/rms_norm.h"
#include "nn/sampling.h"
#include "nn/sequential.h"
#include "nn/transformer.h"
