#pragma once
// Training and evaluation, and the model directory: config.json, vocab.json, model.safetensors,
// metrics.jsonl, learning_curve.svg and checkpoint-<step>.safetensors (train/CheckpointManager).
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <tensorgrad/tensorgrad.h>

#include "config.h"
#include "model.h"
#include "parallel.h"
#include "text.h"

namespace gpt {

using examples::Parallel, examples::Shard, examples::shard_of, examples::start_parallel;  // examples/common/parallel.h

/// A corpus encoded with its vocabulary (the bytes of the whole file, data/README.md).
struct Data {
  ByteVocab vocab;
  std::vector<int64_t> train, valid, test, separator;
  std::string corpus_path, splits_path;  ///< absolute, kept in the checkpoints for --resume
};
/// read_corpus's errors; ValueError when the training stream is empty.
Data prepare_data(const std::string& corpus_path, const std::string& splits_path);
/// The same corpus in a model's vocabulary (eval): ValueError naming a byte the vocabulary lacks.
Data prepare_data(const std::string& corpus_path, const std::string& splits_path, const ByteVocab& vocab);

struct TrainOptions {
  std::string out_dir;  ///< the model directory
  uint64_t seed = 0;
  /// Continue from the newest checkpoint in out_dir (ValueError when there is none, or when it is of
  /// another configuration, seed or data); the run then ends with the same weights as an uninterrupted one.
  bool resume = false;
  tg::train::OnNonFinite on_nonfinite = tg::train::OnNonFinite::stop;
  double rollback_factor = 0.5;
  int64_t max_rollbacks = 3;
  bool detect_anomaly = false;  ///< tg::AnomalyGuard: stop at the first op giving NaN or inf, naming it
  /// Data-parallel training under mpirun (null: one process). batch_size stays the global batch: each rank
  /// trains on its shard_of() rows of every batch, the loss weighted by its share, and the gradients are
  /// averaged, so that N ranks take one process's steps (to rounding). Rank 0 alone prints, writes the
  /// model directory and checkpoints; a checkpoint resumes at any number of ranks.
  Parallel* parallel = nullptr;
};

struct TrainResult {
  double best_valid_bpc = 0;  ///< of the weights written to model.safetensors
  int64_t best_step = 0;
};

/// The checkpoint metadata a resumed run takes its inputs from: the paths of the corpus and splits, the
/// seed and the configuration (config.json of the run, as saved).
struct RunRecord {
  std::string corpus_path, splits_path;
  uint64_t seed = 0;
  Config config;
  std::string fingerprint;  ///< of the encoded data (vocabulary and streams)
  std::string path;         ///< the checkpoint file
};
/// The newest checkpoint's record in a GPT model directory (check_model_dir first). ValueError naming the
/// directory when it holds no checkpoint.
RunRecord read_run_record(const std::string& dir);

/// The checkpoint files (checkpoint-<step>.safetensors) in a model directory, newest (largest step) last;
/// none when `dir` is not a directory.
std::vector<std::filesystem::path> checkpoint_files(const std::string& dir);

/// ValueError unless `dir` is a GPT model directory: it exists and its config.json is a GPT's (a sentiment
/// model directory is named as one).
void check_model_dir(const std::string& dir);

/// Trains (or continues) a GPT on data.train, validating every eval_interval steps and at the end, and
/// writes the model directory; model.safetensors holds the weights of the best validation. Prints a
/// progress line and one line per evaluation. Deterministic per seed (and per rank count, with dropout).
/// Under options.parallel the other ranks return a TrainResult of NaN.
TrainResult train(Config config, const Data& data, const TrainOptions& options);

/// Bits per byte of a stream (model.h's stream_nats / ln 2 / bytes).
double bits_per_byte(Gpt& model, const Data& data, const std::vector<int64_t>& stream, int64_t stride);

// The model directory's parts, shared by train.cpp and loop.cpp.
inline constexpr const char* kCheckpointPrefix = "checkpoint";  ///< checkpoint-<step>.safetensors
/// FNV-1a over the vocabulary and the three streams: equal for the same corpus and split.
std::string data_fingerprint(const Data& d);
/// Creates `dir` and writes config.json and vocab.json; tg::Error naming the directory when it cannot.
void create_model_dir(const std::string& dir, const Config& config, const ByteVocab& vocab);
/// Writes `text` to `path` atomically (tg::write_file_atomic): tg::Error naming the file when a write fails,
/// and a previous file there intact.
void write_text(const std::filesystem::path& path, const std::string& text);

/// A trained model read back from its directory.
struct LoadedModel {
  Config config;
  ByteVocab vocab;
  std::unique_ptr<Gpt> model;  ///< in eval mode
};
/// ValueError naming the directory and the problem (not a GPT directory, missing or corrupt files, weights
/// of another shape or holding NaN or inf).
LoadedModel load_model(const std::string& dir);

}  // namespace gpt
