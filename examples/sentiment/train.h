#pragma once
// Training, evaluation and the model directory (weights, vocabulary, configuration, metrics, plots,
// checkpoints).
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "batch.h"
#include "config.h"
#include "model.h"
#include "parallel.h"
#include "report.h"

namespace sentiment {

/// The data of one run: vocabulary from the training split, and the encoded splits.
struct Data {
  Vocab vocab;
  std::vector<Encoded> train, val, test;
  int64_t num_skipped = 0;  // malformed lines skipped (ReadOptions::skip_malformed)
  std::string path;         // the file read, made absolute (prepare_data); kept in the checkpoint for --resume
  FileStamp file;           // its size and hash, kept in config.json (files.data) for eval's warning
  Lexicon lexicon;          // with config.model.lexicon_weight > 0, the one the sub-word bags were made with; else empty
};

/// The bundled sentiment lexicon, examples/sentiment/data/afinn.tsv (its absolute path at build time).
std::string default_lexicon_path();

/// Reads `path`, splits it (reference split; validation carved from training with `seed`), builds the
/// vocabulary from the training part only, and encodes everything; with config.model.lexicon_weight > 0, with the
/// lexicon read from lexicon_path (Lexicon::load's errors).
Data prepare_data(const std::string& path, const Config& config, uint64_t seed, const ReadOptions& read_options = {},
                  const std::string& lexicon_path = default_lexicon_path());

struct TrainResult {
  std::vector<EpochLog> log;
  Metrics test;           ///< on the test split, with the final weights (last or best-on-validation epoch)
  double val_accuracy = NAN;  ///< on the validation split, with the same weights (NaN: no validation split)
  int64_t rollbacks = 0;  ///< rollbacks after a NaN/inf step (OnNonFinite::rollback), resumed runs included
  double lr_scale = 1;    ///< the learning-rate factor those rollbacks left (rollback_factor^rollbacks)
};

/// What train does when a step gives a NaN or inf loss or gradient (tg::train::NonFiniteGuard): stop with
/// its error, or roll back to the state at the end of the last epoch with a lower learning rate and go on.
using OnNonFinite = tg::train::OnNonFinite;

struct TrainOptions {
  std::string out_dir;  ///< the model directory; checkpoint-<epoch>.safetensors there after every epoch
  uint64_t seed = 0;
  bool verbose = true;
  /// Continue from the newest checkpoint in out_dir (resume_checkpoint): the weights, optimizer state,
  /// schedule position, generator states and metrics of its last epoch, and the best epoch's weights from
  /// the best checkpoint. ValueError when there is none, or when it is of another configuration
  /// (train.epochs aside), seed or data.
  bool resume = false;
  OnNonFinite on_nonfinite = OnNonFinite::stop;
  double rollback_factor = 0.5;  ///< in (0, 1): the learning rate's factor per rollback
  int64_t max_rollbacks = 3;     ///< one more non-finite step after these stops as OnNonFinite::stop does
  /// Train under tg::AnomalyGuard: the first op whose forward or backward gives NaN or inf throws
  /// ValueError naming it (and the epoch and step). Slower (each output is scanned); for finding the cause.
  bool detect_anomaly = false;
  /// Called after each epoch, once its checkpoint is written; returning false ends training there, as if
  /// the configured epochs were done (the model directory is written; `resume` can continue the run).
  std::function<bool(const EpochLog&)> on_epoch_end = nullptr;
  /// Data-parallel training under mpirun (examples/common/parallel.h; null: one process). batch_size stays
  /// the global batch: every rank draws the same batches, trains each member on its shard_of() rows (the
  /// loss weighted by its share), and the gradients are averaged over the ranks on the main thread after the
  /// members' backwards, so that N ranks take one process's steps (to rounding; with dropout, ranks after
  /// the first draw their own masks). Rank 0 alone prints and writes the model directory, checkpoints and
  /// metrics; every rank evaluates. The ranks read the checkpoints to resume (one file system).
  examples::Parallel* parallel = nullptr;
};

/// Trains a classifier on data.train (or continues one, `resume`) and writes the model directory
/// `options.out_dir` (created if needed): model.safetensors, vocab.txt, config.json, metrics.jsonl,
/// learning_curve.svg, and checkpoint-<epoch>.safetensors after every epoch (the newest, and with keep_best
/// the best on validation, are kept: tg::train::CheckpointManager). Deterministic
/// per seed: a resumed run ends with the same weights and metrics as an uninterrupted one. ValueError for
/// a bad option, a config check_config refuses (naming the field), no training or no test sentences, or
/// ensemble_data "folds" with validation sentences or with fewer training sentences than folds; tg::Error for a
/// NaN/inf step (see OnNonFinite) or a failed write (each file is written atomically: tg::write_file_atomic).
TrainResult train(Config config, const Data& data, const TrainOptions& options);
/// The same with default options.
inline TrainResult train(Config config, const Data& data, const std::string& out_dir, uint64_t seed,
                         bool verbose = true) {
  return train(std::move(config), data, TrainOptions{.out_dir = out_dir, .seed = seed, .verbose = verbose});
}

/// Class predictions (argmax) of `model` on `data`, batched, in eval mode without recording a graph.
std::vector<int64_t> predict_labels(Classifier& model, const std::vector<Encoded>& data);

/// A trained model read back from its directory.
struct LoadedModel {
  Config config;
  Vocab vocab;
  Lexicon lexicon;  ///< lexicon.tsv, with config.model.lexicon_weight > 0; else empty
  std::unique_ptr<Classifier> model;
};
/// Throws tg::Error naming the directory and the problem: missing files, a corrupt or foreign config,
/// a vocabulary that does not match the config, a lexicon.tsv that is not the one saved with the model
/// (config.json's files.lexicon), weights of another configuration (checked against the config before
/// the model is built, so a config of absurd sizes allocates nothing) or holding NaN or inf.
LoadedModel load_model(const std::string& dir);

}  // namespace sentiment
