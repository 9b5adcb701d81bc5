#pragma once
// Every nn header: layers, convolution and pooling, normalisations, attention, the Transformer encoder and
// decoder, recurrence (GRU, LSTM and their cells), positional encodings, activations, containers (Sequential,
// ModuleList, ModuleDict), losses, initialisation, sampling from a language model, whole-model save and load.
// A user-defined layer that save_model should know includes nn/registry.h (nlohmann-json) itself.
#include "nn/activation.h"
#include "nn/attention.h"
#include "nn/batch_norm.h"
#include "nn/containers.h"
#include "nn/conv.h"
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
#include "nn/pool.h"
#include "nn/positional.h"
#include "nn/rms_norm.h"
#include "nn/rnn.h"
#include "nn/rnn_cell.h"
#include "nn/sampling.h"
#include "nn/save_model.h"
#include "nn/sequential.h"
#include "nn/transformer.h"
