#pragma once
// The sentiment classifier's settings: model shape and training recipe, named configurations, and their
// JSON form (saved next to the weights so that a model directory describes itself).
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/read_file.h"

#include "dataset.h"

namespace sentiment {

// The configuration's choices. Typed here; their names ("mean+max") appear only in config.json and errors.
enum class Architecture {
  transformer,  ///< a Transformer encoder with the key padding mask
  lstm,         ///< an LSTM (PyTorch's nn.LSTM) over the valid steps of each sentence
  gru,          ///< a GRU (PyTorch's nn.GRU), likewise
};
enum class Activation { relu, gelu };
enum class Pooling {
  mean,      ///< over non-pad positions
  max,       ///< over non-pad positions
  mean_max,  ///< "mean+max": both side by side (the classifier reads 2·d_model)
};
enum class Positional {
  learned,  ///< learned position embeddings
  none,     ///< none: a bag of contextual words
};
enum class SubwordCombine {
  mean,  ///< the mean of the word vector and its n-gram vectors (fastText's)
  sum,   ///< the word vector plus the sum of its n-gram vectors
};
enum class OptimizerKind { adam, adamw };
enum class Schedule {
  cosine,    ///< per step, to 0 at the last epoch
  constant,  ///< the configured lr throughout (after any warmup)
};
enum class EnsembleData {
  shared,  ///< every member trains on every training sentence, in the same batches
  folds,   ///< member k trains on all but fold k and is validated on fold k
};

/// Each choice's name in config.json, in the order errors list them. A specialisation per enum holds
/// `values`, an array of (value, name) pairs.
template <class E>
struct EnumNames;
template <>
struct EnumNames<Architecture> {
  static constexpr std::pair<Architecture, std::string_view> values[] = {
      {Architecture::transformer, "transformer"}, {Architecture::lstm, "lstm"}, {Architecture::gru, "gru"}};
};
template <>
struct EnumNames<Activation> {
  static constexpr std::pair<Activation, std::string_view> values[] = {{Activation::relu, "relu"},
                                                                       {Activation::gelu, "gelu"}};
};
template <>
struct EnumNames<Pooling> {
  static constexpr std::pair<Pooling, std::string_view> values[] = {
      {Pooling::mean, "mean"}, {Pooling::max, "max"}, {Pooling::mean_max, "mean+max"}};
};
template <>
struct EnumNames<Positional> {
  static constexpr std::pair<Positional, std::string_view> values[] = {{Positional::learned, "learned"},
                                                                       {Positional::none, "none"}};
};
template <>
struct EnumNames<SubwordCombine> {
  static constexpr std::pair<SubwordCombine, std::string_view> values[] = {{SubwordCombine::mean, "mean"},
                                                                           {SubwordCombine::sum, "sum"}};
};
template <>
struct EnumNames<OptimizerKind> {
  static constexpr std::pair<OptimizerKind, std::string_view> values[] = {{OptimizerKind::adam, "adam"},
                                                                          {OptimizerKind::adamw, "adamw"}};
};
template <>
struct EnumNames<Schedule> {
  static constexpr std::pair<Schedule, std::string_view> values[] = {{Schedule::cosine, "cosine"},
                                                                     {Schedule::constant, "constant"}};
};
template <>
struct EnumNames<EnsembleData> {
  static constexpr std::pair<EnsembleData, std::string_view> values[] = {{EnsembleData::shared, "shared"},
                                                                         {EnsembleData::folds, "folds"}};
};

/// The name of `value` in config.json ("mean+max").
template <class E>
std::string name_of(E value) {
  for (const auto& [v, name] : EnumNames<E>::values)
    if (v == value) return std::string(name);
  return "?";  // unreachable for a value of the enum
}

/// The value named `text`. ValueError listing the allowed names, "<field> must be mean, max or mean+max,
/// got 'x'" (`field` e.g. "model: pooling"; x escaped).
template <class E>
E parse_enum(const std::string& text, const std::string& field) {
  std::string allowed;
  const size_t n = std::size(EnumNames<E>::values);
  for (size_t i = 0; i < n; ++i) {
    if (EnumNames<E>::values[i].second == text) return EnumNames<E>::values[i].first;
    allowed += (i == 0 ? "" : i + 1 == n ? " or " : ", ") + std::string(EnumNames<E>::values[i].second);
  }
  throw tg::ValueError(fmt::format("{} must be {}, got '{}'", field, allowed, tg::escape_bytes(text)));
}

/// The classifier: token + learned position embeddings, a Transformer encoder (or an LSTM or GRU),
/// pooling, a Dense head.
struct ModelConfig {
  int64_t vocab_size = 0;  ///< set from the vocabulary at training time
  int64_t max_len = 48;    ///< tokens kept per sentence (longer ones are truncated)
  /// The network between the embeddings and the pooling. For lstm and gru, d_model is the width of the
  /// token vectors (the RNN's input_size), num_layers the RNN's stacked layers and dropout also the dropout
  /// between them; num_heads, dim_feedforward, activation, norm_first and qk_init_scale are the Transformer's.
  Architecture architecture = Architecture::transformer;
  int64_t d_model = 64;
  int64_t num_heads = 4;
  int64_t num_layers = 2;
  int64_t dim_feedforward = 128;
  double dropout = 0.1;
  int64_t hidden_size = 64;    ///< lstm and gru: the state's width H per direction
  bool bidirectional = false;  ///< lstm and gru: a second RNN over the reversed sentence, outputs side by side
  Activation activation = Activation::relu;
  bool norm_first = false;          ///< pre-norm instead of PyTorch's default post-norm
  Pooling pooling = Pooling::mean;
  Positional positional = Positional::learned;
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
  /// With sub-words, how a token's word vector and its n-gram vectors make its input: the mean of them all
  /// (fastText's), or the sum: the word vector plus the n-grams' sum, so that a word seen often is not
  /// diluted by its n-grams, and one never seen is its n-grams.
  SubwordCombine subword_combine = SubwordCombine::mean;
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
  OptimizerKind optimizer = OptimizerKind::adam;
  double lr = 1e-3;
  double weight_decay = 0.0;
  double label_smoothing = 0.0;
  int64_t warmup_epochs = 0;        ///< linear warmup, then the schedule
  Schedule schedule = Schedule::constant;
  double clip_grad_norm = 0.0;      ///< 0 = no clipping
  double val_fraction = 0.0;        ///< carved from the training split; 0 = no validation set
  bool keep_best = false;           ///< restore the epoch with the best validation accuracy at the end
  int64_t min_freq = 1;             ///< vocabulary: drop rarer training tokens
  /// What the members of an ensemble (model.ensemble = K > 1) train on: shared, every training sentence
  /// in the same batches; or folds, the training sentences split into K folds by the seed, member k
  /// training on all but fold k and validated on fold k (the validation accuracy is then out-of-fold: each
  /// training sentence judged by the member that did not train on it). folds needs val_fraction 0.
  EnsembleData ensemble_data = EnsembleData::shared;
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

/// The width of each token's vector after the network, before pooling: d_model for the Transformer,
/// hidden_size times the directions (1 or 2) for an RNN.
int64_t encoded_width(const ModelConfig& m);

/// The number of parameters (elements of all weights) of the Classifier of `m`, from the config alone,
/// without building it; as a double, so that absurd sizes do not overflow.
double parameter_count(const ModelConfig& m);

/// ValueError naming the field ("model: max_len must be >= 1, got 0") for a model setting out of range,
/// and for a model of more than kMaxParameters; vocab_size is only bounded (it comes from the
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
/// Throws ValueError naming the key when a field is missing or has the wrong type, and for an unknown
/// choice, listing the allowed ones ("train: schedule must be cosine or constant, got 'Cosine'").
void from_json(const nlohmann::json& j, Config& c);

}  // namespace sentiment
