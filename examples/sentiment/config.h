#pragma once
// The sentiment classifier's settings: model shape and training recipe, named configurations, and their
// JSON form (saved next to the weights so that a model directory describes itself).
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "dataset.h"

namespace sentiment {

/// The classifier: token + learned position embeddings, a Transformer encoder, pooling, a Dense head.
struct ModelConfig {
  int64_t vocab_size = 0;  ///< set from the vocabulary at training time
  int64_t max_len = 48;    ///< tokens kept per sentence (longer ones are truncated)
  int64_t d_model = 64;
  int64_t num_heads = 4;
  int64_t num_layers = 2;
  int64_t dim_feedforward = 128;
  double dropout = 0.1;
  std::string activation = "relu";  ///< relu | gelu
  bool norm_first = false;          ///< pre-norm instead of PyTorch's default post-norm
  /// mean | max over non-pad positions, or mean+max: both, side by side (the classifier reads 2·d_model)
  std::string pooling = "mean";
  std::string positional = "learned";  ///< learned position embeddings, or none (a bag of contextual words)
  double token_dropout = 0.0;       ///< in training, each real token becomes <unk> with this probability
  /// Standard deviation of the initial token (and position) embeddings. PyTorch's N(0, 1) leaves a word seen a few times
  /// near its random start (Adam moves it by about lr per step); a small start lets what it learned dominate.
  double embedding_std = 1.0;
  int64_t num_classes = 2;
  /// Independently initialised networks, each trained on its own loss over the same batches, whose class
  /// probabilities are averaged (a deep ensemble); K of them cost K times the time per epoch.
  int64_t ensemble = 1;
  /// Sub-word features (fastText): with B > 0 buckets, each token's input vector is the mean of its word
  /// embedding and the embeddings of its hashed character 3- to 5-grams (subword.h); 0 = off.
  int64_t subword_buckets = 0;
  /// With sub-words, how a token's word vector and its n-gram vectors make its input: "mean" of them all
  /// (fastText's), or "sum": the word vector plus the n-grams' sum, so that a word seen often is not
  /// diluted by its n-grams, and one never seen is its n-grams.
  std::string subword_combine = "mean";
  /// With W > 0, each token the sentiment lexicon rates (lexicon.h: AFINN-165) also gets its valence's
  /// pseudo n-gram W times in its sub-word bag, so the valence's vector weighs W in the token's input; 0 = off,
  /// at most kMaxSubwords (48).
  /// Needs subword_buckets > 0; the lexicon is saved with the model.
  int64_t lexicon_weight = 0;
  /// A LayerNorm over each token's input vector (word, sub-words, lexicon and position together) before the
  /// encoder, as BERT's embeddings have (Devlin et al. 2019). Small embeddings (embedding_std) averaged over
  /// a sub-word bag make inputs far shorter than the unit-variance ones the later layers see, and the first
  /// layer's attention scores, dot products of projections of them, all near 0: every key weighs the same.
  bool embedding_norm = false;
  /// The initial query and key projection weights (in_proj_weight's first 2·d_model rows) of every encoder
  /// layer, times this. Xavier's start on unit-scale inputs gives attention logits of std ~0.5, under which
  /// every head is nearly even over a short sentence's keys, and training does not grow them; the logits
  /// scale with its square. Initialisation only: the model's parts and forward pass are unchanged.
  double qk_init_scale = 1.0;
};

/// How to train it.
struct TrainConfig {
  int64_t epochs = 15;
  int64_t batch_size = 32;
  std::string optimizer = "adam";  ///< adam | adamw
  double lr = 1e-3;
  double weight_decay = 0.0;
  double label_smoothing = 0.0;
  int64_t warmup_epochs = 0;        ///< linear warmup, then the schedule
  std::string schedule = "constant";  ///< constant | cosine (per step, to 0 at the last epoch)
  double clip_grad_norm = 0.0;      ///< 0 = no clipping
  double val_fraction = 0.0;        ///< carved from the training split; 0 = no validation set
  bool keep_best = false;           ///< restore the epoch with the best validation accuracy at the end
  int64_t min_freq = 1;             ///< vocabulary: drop rarer training tokens
  /// What the members of an ensemble (model.ensemble = K > 1) train on: "shared", every training sentence
  /// in the same batches; or "folds", the training sentences split into K folds by the seed, member k
  /// training on all but fold k and validated on fold k (the validation accuracy is then out-of-fold: each
  /// training sentence judged by the member that did not train on it). "folds" needs val_fraction 0.
  std::string ensemble_data = "shared";
  /// Skip (and count) malformed data lines instead of stopping (`train --skip-malformed`); kept so that `eval`
  /// and `train --resume` read the same file the same way.
  bool skip_malformed = false;
};

/// The files a model was made from, as stamps (size and hash; empty when unknown, as in model directories
/// written before they were kept): `eval` warns when its data file is not the training one, and loading a
/// model refuses a lexicon.tsv that is not the one saved with it (a truncated copy, say).
struct FileStamps {
  FileStamp data;
  FileStamp lexicon;  ///< of lexicon.tsv as Lexicon::save writes it; empty without a lexicon
};

struct Config {
  std::string name;
  ModelConfig model;
  TrainConfig train;
  FileStamps files;  ///< set by training; not part of the recipe (a resume compares the data by its fingerprint)
};

/// The most epochs a TrainConfig may ask for: it keeps epochs × steps per epoch (the schedule's length) far
/// from int64 overflow.
inline constexpr int64_t kMaxEpochs = 1'000'000;
/// The most parameters a model may have (4 GiB of f32 weights): a config.json asking for more is refused
/// before anything is allocated.
inline constexpr int64_t kMaxParameters = int64_t(1) << 30;

/// The number of parameters (elements of all weights) of the Classifier of `m`, from the config alone,
/// without building it; as a double, so that absurd sizes do not overflow.
double parameter_count(const ModelConfig& m);

/// ValueError naming the field ("model: max_len must be >= 1, got 0") for a model setting out of range or
/// unknown, and for a model of more than kMaxParameters; vocab_size is only bounded (it comes from the
/// vocabulary at training time). Checked before any
/// layer is built, so that the message names the config field, not the layer that would trip on it.
void check_model_config(const ModelConfig& m);
/// The same for the training recipe ("train: lr must be finite and >= 0, got -1").
void check_train_config(const TrainConfig& t);
/// Both, and the settings that involve both (ensemble_data "folds" needs model.ensemble >= 2).
void check_config(const Config& c);

/// "reference" (the fixed configuration compared with other frameworks) or "default" (our best recipe).
/// ValueError for another name.
Config config_by_name(const std::string& name);

void to_json(nlohmann::json& j, const Config& c);
/// Throws ValueError naming the key when a field is missing or has the wrong type.
void from_json(const nlohmann::json& j, Config& c);

}  // namespace sentiment
