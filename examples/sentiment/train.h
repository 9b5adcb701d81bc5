#pragma once
// Training, evaluation and the model directory (weights, vocabulary, configuration, metrics, plots).
#include <memory>
#include <string>
#include <vector>

#include "batch.h"
#include "config.h"
#include "model.h"
#include "report.h"

namespace sentiment {

/// The data of one run: vocabulary from the training split, and the encoded splits.
struct Data {
  Vocab vocab;
  std::vector<Encoded> train, val, test;
};
/// Reads `path`, splits it (reference split; validation carved from training with `seed`), builds the
/// vocabulary from the training part only, and encodes everything.
Data prepare_data(const std::string& path, const Config& config, uint64_t seed, const ReadOptions& read_options = {});

struct TrainResult {
  std::vector<EpochLog> log;
  Metrics test;  ///< on the test split, after the last (or best-on-validation) epoch
};

/// Trains a fresh classifier on data.train and writes the model directory `out_dir` (created if needed):
/// model.safetensors, vocab.txt, config.json, metrics.jsonl, learning_curve.svg. Deterministic per seed.
TrainResult train(Config config, const Data& data, const std::string& out_dir, uint64_t seed, bool verbose = true);

/// Class predictions (argmax) of `model` on `data`, batched, in eval mode without recording a graph.
std::vector<int64_t> predict_labels(Classifier& model, const std::vector<Encoded>& data);

/// A trained model read back from its directory.
struct LoadedModel {
  Config config;
  Vocab vocab;
  std::unique_ptr<Classifier> model;
};
/// Throws tg::Error naming the directory and the problem: missing files, a corrupt or foreign config,
/// a vocabulary that does not match the config, weights of another configuration.
LoadedModel load_model(const std::string& dir);

}  // namespace sentiment
