#pragma once
// The state of a training run, gathered from its parts: what a checkpoint file holds and what the
// non-finite guard rolls back to. The parts are the user's own objects, referred to by pointer; the loop
// stays theirs.
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/random.h"
#include "core/safetensors.h"
#include "data/loader.h"
#include "nn/layer.h"
#include "optim/optimizer.h"
#include "optim/scheduler.h"
#include "train/early_stopping.h"

namespace tg::train {

/// The parts of a run whose state is saved and restored; null parts are left out. tg::default_generator()
/// (dropout, initialisation) is always included. The pointed-to objects must outlive the users of this.
struct TrainingState {
  nn::Layer* model = nullptr;                   ///< weights and buffers
  optim::Optimizer* optimizer = nullptr;        ///< moments, step counts, learning rates
  optim::LRScheduler* scheduler = nullptr;      ///< the position in the schedule
  optim::ReduceLROnPlateau* plateau = nullptr;  ///< best metric and counters
  data::DataLoader* loader = nullptr;           ///< the position in the epoch and the sampler's generator
  EarlyStopping* early_stopping = nullptr;      ///< best metric and patience counter
  /// Further generators (e.g. data augmentation's), by name.
  std::vector<std::pair<std::string, Generator*>> generators = {};
};

/// The state as named tensors and metadata strings: tensors "model.<name>" and "optim.<key>"; metadata
/// "parts" (which are present), "optim.<key>", "scheduler.<key>", "plateau.<key>", "early_stopping.<key>",
/// "loader.<key>", "rng.default", "rng.<name>". Numbers are shortest round-trip decimals (bit-exact). With
/// copy, the tensors are copies (a snapshot that later steps do not change); without, they share storage.
Safetensors capture(const TrainingState& state, bool copy);

/// Puts a captured state back into the parts. `source` (a file name) starts every error message. Throws
/// ValueError when the parts present differ from the state's, or for a missing, malformed or mismatching
/// entry (another model, optimizer or loader); on any error every part is left as it was.
void restore(const TrainingState& state, const Safetensors& captured, const std::string& source);

}  // namespace tg::train
