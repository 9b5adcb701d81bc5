// `sentiment`: train a Transformer sentiment classifier on the UCI Sentiment Labelled Sentences, then
// evaluate it, predict with it, and draw what its attention heads look at.
#include <CLI/CLI.hpp>

#include <charconv>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <thread>

#include "checkpoint.h"
#include "cli.h"
#include "export_onnx.h"
#include "files.h"
#include "train.h"

using namespace sentiment;
namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kClassNames = {"negative", "positive"};

// The commands read labels 0 and 1 and name them kClassNames: a model of more classes is refused up front
// (train used to run to the end and then crash printing a third class's metrics).
void check_binary(const Config& config, const std::string& where) {
  tg::check<tg::ValueError>(config.model.num_classes == 2, "{}: model.num_classes must be 2 (labels 0 = negative, "
                            "1 = positive), got {}", where, config.model.num_classes);
}

Config load_config(const std::string& name_or_path) {
  return examples::load_config<Config>(name_or_path, config_by_name);
}

// The BLAS line every run starts with; warns when OpenBLAS picked a slow generic core, and refuses a
// core that computes wrong products.
void print_blas() {
  tg::BlasInfo b = tg::blas_info();
  tg::check_blas();
  fmt::print("tensorgrad on {} (kernel core {}, {} threads)\n", b.config.substr(0, b.config.find(' ', 9)), b.core,
             tg::get_num_threads());
  if (!b.warning.empty()) fmt::print(stderr, "warning: {}\n", b.warning);
}

int run_blas(bool suggest) {
  tg::BlasInfo b = tg::blas_info();
  if (suggest) {
    if (!b.warning.empty()) fmt::print("{}\n", b.suggested_core);
    return 0;
  }
  tg::check_blas();
  fmt::print("{}\nkernel core: {}\nthreads: {}\nbetter core for this CPU: {}\n{}", b.config, b.core, b.threads,
             b.suggested_core.empty() ? "-" : b.suggested_core, b.warning.empty() ? "" : "warning: " + b.warning + "\n");
  return 0;
}

// What --data, --config and --seed were, and whether each was given on the command line.
struct RunInputs {
  std::string data, config, lexicon = default_lexicon_path();
  uint64_t seed = 0;
  bool data_given = false, config_given = false, seed_given = false;
};

// With --resume, the data, configuration and seed not given on the command line are the checkpoint's: a
// resumed run continues on what it started with (the checkpoint's data fingerprint refuses other data).
void defaults_from_checkpoint(const TrainOptions& o, RunInputs& in, Config& config) {
  if (!o.resume) return;
  const RunRecord c = read_record(resume_checkpoint(o.out_dir));  // refused here, before the data is read
  if (!in.config_given) config = c.config.get<Config>();
  if (!in.seed_given) in.seed = c.seed;
  if (!in.data_given) in.data = c.data_path;
}

int run_train(RunInputs in, int64_t epochs, TrainOptions o, bool skip_malformed) {
  const bool lead = o.parallel == nullptr || o.parallel->rank() == 0;  // rank 0 alone prints
  if (lead) print_blas();
  else tg::check_blas();
  Config config = load_config(in.config);
  defaults_from_checkpoint(o, in, config);
  if (skip_malformed) config.train.skip_malformed = true;  // else the config's (a resumed run's: its checkpoint's)
  o.seed = in.seed;
  const std::string& data = in.data;
  check_binary(config, "config '" + tg::escape_bytes(config.name) + "'");
  if (epochs > 0) config.train.epochs = epochs;
  check_config(config);  // before the data is read
  Data d = prepare_data(data, config, o.seed, {.skip_malformed = config.train.skip_malformed}, in.lexicon);
  if (!lead) {
    train(config, d, o);
    return 0;
  }
  if (o.parallel)
    fmt::print("data-parallel: {} ranks (mpirun), each a share of every {}-sentence batch\n", o.parallel->world_size(),
               config.train.batch_size);
  if (config.train.skip_malformed) fmt::print("data {}: skipped {} malformed lines\n", data, d.num_skipped);
  fmt::print("data {}: {} training, {} validation, {} test sentences; vocabulary {} tokens\n", data, d.train.size(),
             d.val.size(), d.test.size(), d.vocab.size());
  if (config.model.lexicon_weight > 0) fmt::print("lexicon {}: {} words\n", in.lexicon, d.lexicon.size());
  const ModelConfig& mc = config.model;
  if (mc.architecture == Architecture::transformer)
    fmt::print("config '{}': d_model {}, {} heads, {} layers, {} epochs, seed {}\n", tg::escape_bytes(config.name),
               mc.d_model, mc.num_heads, mc.num_layers, config.train.epochs, o.seed);
  else
    fmt::print("config '{}': {}{}, d_model {}, hidden_size {}, {} layers, {} epochs, seed {}\n", tg::escape_bytes(config.name),
               mc.bidirectional ? "bidirectional " : "", name_of(mc.architecture), mc.d_model, mc.hidden_size,
               mc.num_layers, config.train.epochs, o.seed);
  if (config.train.ensemble_data == EnsembleData::folds)
    fmt::print("an ensemble of {0} networks on {0} folds: network k trains on all but fold k of the training sentences; "
               "val acc is out-of-fold (each network on its own held-out fold)\n", config.model.ensemble);
  TrainResult r = train(config, d, o);
  if (!std::isnan(r.val_accuracy))
    fmt::print("\nvalidation accuracy of the final weights{}: {:.4f}\n", config.train.keep_best ? " (best epoch)" : "",
               r.val_accuracy);
  fmt::print("\ntest set ({} sentences):\n{}", d.test.size(), format_metrics(r.test, kClassNames));
  fmt::print("model written to {}/ (model.safetensors, vocab.txt, {}config.json, metrics.jsonl, learning_curve.svg, "
             "{})\n", o.out_dir, config.model.lexicon_weight > 0 ? "lexicon.tsv, " : "",
             fs::path(resume_checkpoint(o.out_dir)).filename().string());
  return 0;
}

// run_train under mpirun when launched by it: an error on one rank is printed with its rank, then ends the
// whole job (the others would wait for it in a collective).
int train_command(const RunInputs& in, int64_t epochs, TrainOptions o, bool skip_malformed) {
  const std::unique_ptr<examples::Parallel> parallel = examples::start_parallel();
  if (parallel == nullptr) return run_train(in, epochs, o, skip_malformed);
  o.parallel = parallel.get();
  const int status = examples::run_checked([&] {
    try {
      return run_train(in, epochs, o, skip_malformed);
    } catch (const std::exception& e) {
      throw tg::Error(fmt::format("rank {} of {}: {}", parallel->rank(), parallel->world_size(), e.what()));
    }
  });
  if (status != 0) parallel->abort(status);
  return status;
}

// The examples as model `m` reads them: truncated to its max_len, with its sub-word buckets and lexicon.
std::vector<Encoded> encode_for(const LoadedModel& m, const std::vector<Example>& examples) {
  return encode_all(examples, m.vocab, m.config.model.max_len, m.config.model.subword_buckets,
                    m.config.model.lexicon_weight > 0 ? &m.lexicon : nullptr, m.config.model.lexicon_weight);
}

// One line per sentence, in order: its logits as decimal text with 9 significant digits, which give back
// the exact f32 values (for comparing with another implementation, e.g. pytorch_check.py).
void write_logits(Classifier& model, const std::vector<Encoded>& data, const std::string& path) {
  tg::NoGradGuard no_grad;
  model.eval();
  std::string text;
  const std::unique_ptr<tg::data::DataLoader> loader = make_loader(data, 128);
  for (const tg::data::Batch& batch : *loader) {
    const Batch b = Batch::of(batch);
    tg::Tensor logits = model.forward(b.tokens, b.pad_mask, b.subwords).value();  // (B, C)
    std::vector<float> v = logits.to_vector<float>();
    for (int64_t r = 0; r < logits.size(0); ++r) {
      auto row = v.begin() + r * logits.size(1);
      text += fmt::format("{:.9g}\n", fmt::join(row, row + logits.size(1), " "));
    }
  }
  tg::write_file_atomic(path, {text}, "eval");
}

// The data `eval` reads when --data is not given: the file the model was trained on, as its checkpoint records
// it, else the bundled data. An unreadable checkpoint is warned about, not fatal: eval needs only the model.
std::string trained_data(const std::string& dir, const std::string& fallback) {
  try {
    const std::string recorded = recorded_data_path(dir);  // empty without a checkpoint, or an old one without it
    if (recorded.empty()) return fallback;
    fmt::print("data: {}, the file the model was trained on (from its checkpoint; --data overrides)\n", recorded);
    return recorded;
  } catch (const tg::Error& e) {
    fmt::print(stderr, "warning: {}; evaluating on {}\n", e.what(), fallback);
    return fallback;
  }
}

int run_eval(const std::string& dir, std::string data, bool data_given, const std::string& logits_path) {
  LoadedModel m = load_model(dir);
  if (!data_given) data = trained_data(dir, data);
  check_binary(m.config, "model '" + dir + "'");
  FileStamp stamp;
  int64_t skipped = 0;
  Split split = split_reference(read_examples(data, {.skip_malformed = m.config.train.skip_malformed}, &skipped, &stamp));
  if (m.config.train.skip_malformed) fmt::print("data {}: skipped {} malformed lines, as training did\n", data, skipped);
  const FileStamp& trained = m.config.files.data;
  if (trained != FileStamp{} && stamp != trained)  // unknown for models from before it was kept
    fmt::print(stderr, "warning: {} is not the file the model was trained on ({} here, {} in training): its test "
               "split may overlap the training data\n", data, stamp.str(), trained.str());
  std::vector<Encoded> test = encode_for(m, split.test);
  std::vector<int64_t> truth;
  tg::check<tg::ValueError>(!test.empty(), "eval: '{}' holds no test sentences (the test split is every 5th "
                            "sentence of each source, from the 5th on)", data);
  for (const Encoded& e : test) truth.push_back(e.label);
  fmt::print("{} ({} test sentences):\n{}", data, test.size(),
             format_metrics(compute_metrics(predict_labels(*m.model, test), truth, m.config.model.num_classes), kClassNames));
  if (!logits_path.empty()) {
    write_logits(*m.model, test, logits_path);
    fmt::print("test logits ({} x {}) written to {}\n", test.size(), m.config.model.num_classes, logits_path);
  }
  return 0;
}

std::vector<std::string> texts_or_stdin(std::vector<std::string> texts) {
  if (texts.empty()) {
    std::istringstream in(tg::read_file("/dev/stdin", kMaxDataBytes, "predict"));  // bounded: stdin may never end
    for (std::string line; std::getline(in, line);) {
      if (line.ends_with('\r')) line.pop_back();  // a CRLF file: the CR is not part of the sentence
      texts.push_back(line);
    }
  }
  for (size_t i = 0; i < texts.size(); ++i)  // numbered, so that a blank line in a long stdin can be found
    tg::check<tg::ValueError>(texts[i].find_first_not_of(" \t\r\n") != std::string::npos,
                              "predict: sentence {} of {} is empty", i + 1, texts.size());
  tg::check<tg::ValueError>(!texts.empty(), "predict: no sentences given (pass them as arguments or on stdin)");
  return texts;
}

int run_predict(const std::string& dir, const std::vector<std::string>& args) {
  LoadedModel m = load_model(dir);
  check_binary(m.config, "model '" + dir + "'");
  tg::NoGradGuard no_grad;
  const std::vector<std::string> texts = texts_or_stdin(args);
  for (size_t i = 0; i < texts.size(); ++i) {
    const std::string& text = texts[i];
    const size_t n = tokenize(text).size();
    if (int64_t(n) > m.config.model.max_len)  // on stderr, so that stdout stays one line per sentence
      fmt::print(stderr, "predict: sentence {} of {} has {} tokens; the model reads the first {}\n", i + 1,
                 texts.size(), n, m.config.model.max_len);
    Batch b = make_batch(encode_for(m, {{text, 0, ""}}), {0});
    std::vector<double> p = tg::softmax(m.model->forward(b.tokens, b.pad_mask, b.subwords).value(), 1).to_vector<double>();
    size_t best = p[1] > p[0] ? 1 : 0;
    fmt::print("{:<8}  {:.3f}  {}\n", kClassNames[best], p[best], text);
  }
  return 0;
}

int run_attend(const std::string& dir, const std::string& text, const std::string& out) {
  LoadedModel m = load_model(dir);
  check_binary(m.config, "model '" + dir + "'");
  tg::check<tg::ValueError>(m.config.model.architecture == Architecture::transformer, "attend: model '{}' has architecture "
                            "{}, which has no attention to draw; attend needs a transformer",
                            tg::escape_bytes(dir), name_of(m.config.model.architecture));
  tg::check<tg::ValueError>(text.find_first_not_of(" \t\r\n") != std::string::npos, "attend: empty sentence");
  tg::NoGradGuard no_grad;
  std::vector<std::string> tokens = tokenize(text);
  const size_t n = tokens.size();
  if (tokens.empty()) tokens = {"<unk>"};
  if (int64_t(tokens.size()) > m.config.model.max_len) tokens.resize(size_t(m.config.model.max_len));
  Batch b = make_batch(encode_for(m, {{text, 0, ""}}), {0});
  std::vector<std::string> shown;
  for (int64_t id : b.tokens.to_vector<int64_t>()) shown.push_back(m.vocab.token(id));
  for (size_t i = 0; i < shown.size() && i < tokens.size(); ++i)
    if (shown[i] == "<unk>") shown[i] = tokens[i] + "?";  // unknown to the vocabulary
  std::vector<tg::Tensor> weights;
  for (const tg::Variable& w : m.model->attention(b.tokens, b.pad_mask, b.subwords))
    weights.push_back(w.value().select(0, 0));
  std::vector<double> p = tg::softmax(m.model->forward(b.tokens, b.pad_mask, b.subwords).value(), 1).to_vector<double>();
  std::string title = fmt::format("\"{}\" -> {} ({:.3f})", text, p[1] > p[0] ? "positive" : "negative", std::max(p[0], p[1]));
  const int64_t networks = m.model->num_members();
  tg::write_file_atomic(out, {attention_svg(shown, weights, title, networks)}, "attend");
  fmt::print("attention of {}{} layers x {} heads over {} tokens{} written to {}\n",
             networks > 1 ? fmt::format("{} networks x ", networks) : "", int64_t(weights.size()) / networks,
             weights.empty() ? 0 : weights[0].size(0), shown.size(),
             n > shown.size() ? fmt::format(" (the first {} of {})", shown.size(), n) : "", out);
  const std::vector<std::vector<double>> entropy = attention_entropy(weights);
  const size_t per_network = entropy.size() / size_t(networks);
  fmt::print("normalised entropy of each head's attention (1: spread evenly over the {} keys, 0: one key per query):\n",
             shown.size());
  for (size_t l = 0; l < entropy.size(); ++l)
    fmt::print("  {}layer {}: {:.3f}\n", networks > 1 ? fmt::format("network {} ", l / per_network) : "", l % per_network,
               fmt::join(entropy[l], " "));
  return 0;
}

// More threads than cores is allowed (as torch.set_num_threads allows it) but only slows the kernels down:
// the threads take turns on the cores. Said on stderr, so that predict's stdout stays one line per sentence.
void set_threads(int n) {
  tg::set_num_threads(n);
  const unsigned cores = std::thread::hardware_concurrency();  // 0 when unknown
  if (cores > 0 && unsigned(n) > cores)
    fmt::print(stderr, "warning: --threads {} is more than the {} cores of this machine: the threads will take turns "
               "on them, which is slower, not faster\n", n, cores);
}

// A validator for a whole number >= min. CLI11's PositiveNumber and NonNegativeNumber said "Value 0 not in
// range 0.000000 to 179769313486231570814527...", also for "abc", and an unsigned option took "-1" as 2^64 - 1.
template <class T>
CLI::Validator whole_number(T min) {
  return CLI::Validator(
      [min](std::string& s) {
        T v{};
        auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (ec == std::errc() && end == s.data() + s.size() && v >= min) return std::string();
        return fmt::format("expected a whole number >= {}, got '{}'", min, s);
      },
      fmt::format(">={}", min));
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Train and use a Transformer sentiment classifier (tensorgrad example)"};
  app.require_subcommand(1);
  std::string data = SENTIMENT_DEFAULT_DATA, config = "default", out = "runs/sentiment", model, svg = "attention.svg";
  std::string lexicon = default_lexicon_path();
  int64_t epochs = 0;
  uint64_t seed = 0;
  int threads = 0;
  bool skip = false;
  std::vector<std::string> texts;
  auto* train = app.add_subcommand("train", "train a classifier and write a model directory");
  train->add_option("--data", data, "TSV/CSV with text and label columns")->capture_default_str();
  train->add_option("--config", config, "reference | default | path to a config.json")->capture_default_str();
  train->add_option("--lexicon", lexicon, "word<TAB>valence file for configurations with model.lexicon_weight (saved with "
                    "the model)")->capture_default_str();
  train->add_option("--epochs", epochs, "override the configuration's epoch count")->check(whole_number<int64_t>(1));
  train->add_option("--seed", seed, "random seed (weights, dropout, shuffling, validation split)")
      ->check(whole_number<uint64_t>(0))->capture_default_str();
  auto* out_opt = train->add_option("--out", out, "model directory to write")->capture_default_str();
  train->add_flag("--skip-malformed", skip, "skip (and count) malformed data lines instead of stopping");
  TrainOptions topt;
  std::string resume_dir, on_nonfinite = "stop";
  train->add_option("--resume", resume_dir, "continue the run in this model directory from its newest "
                    "checkpoint-<epoch>.safetensors (written after every epoch); --data, --config and --seed default to the checkpoint's and must "
                    "match it, --epochs may extend the run")->excludes(out_opt);
  train->add_option("--on-nonfinite", on_nonfinite, "when a step's loss or gradient is NaN or inf: stop (with the "
                    "epoch, step and value), or roll back to the end of the last epoch with a lower learning rate and go on")
      ->check(CLI::IsMember({"stop", "rollback"}))->capture_default_str();
  train->add_option("--rollback-factor", topt.rollback_factor, "the learning rate's factor per rollback")
      ->check(number_in<double>(0, 1, true, true))->capture_default_str();
  train->add_option("--max-rollbacks", topt.max_rollbacks, "rollbacks before giving up")
      ->check(whole_number(0))->capture_default_str();
  train->add_flag("--detect-anomaly", topt.detect_anomaly, "check every op for NaN/inf (tg::AnomalyGuard) and stop at "
                  "the first, naming it (slower)");
  auto* eval = app.add_subcommand("eval", "accuracy, precision, recall, F1 and confusion matrix on the test split");
  eval->add_option("--model", model, "model directory")->required();
  eval->add_option("--data", data, "TSV/CSV with text and label columns (default: the file the model was trained on, "
                   "as its checkpoint records it, else the bundled data)");
  std::string logits;
  eval->add_option("--logits", logits, "also write the test split's logits, one line per sentence");
  auto* predict = app.add_subcommand("predict", "label and probability for each sentence (arguments or stdin lines)");
  predict->add_option("--model", model, "model directory")->required();
  predict->add_option("texts", texts, "sentences");
  auto* attend = app.add_subcommand("attend", "SVG heatmaps of every layer's and head's attention over a sentence");
  attend->add_option("--model", model, "model directory")->required();
  attend->add_option("text", texts, "the sentence")->required()->expected(1);
  attend->add_option("--out", svg, "SVG file to write")->capture_default_str();
  auto* blas = app.add_subcommand("blas", "which BLAS kernels run, checked against a plain product");
  bool suggest = false;
  blas->add_flag("--suggest", suggest, "print only the OPENBLAS_CORETYPE to set, if the current core is a slow fallback");
  ExportArgs export_args;
  CLI::App* export_onnx = add_export_command(app, export_args);
  // Before or after the subcommand: `sentiment --threads 2 train` and `sentiment train --threads 2`.
  for (CLI::App* a : {&app, train, eval, predict, attend, blas, export_onnx})
    a->add_option("--threads", threads, fmt::format("threads for kernels and BLAS, and for an ensemble's networks, "
                  "which then run side by side (same results); at most {} (default: all cores; more than the cores "
                  "is allowed, as torch.set_num_threads allows it, with a warning)", tg::kMaxThreads))
        ->check(whole_number(1));
  CLI11_PARSE(app, argc, argv);
  return examples::run_checked([&] {
    if (threads > 0) set_threads(threads);
    if (*train) {
      topt.out_dir = resume_dir.empty() ? out : resume_dir, topt.resume = !resume_dir.empty();
      topt.on_nonfinite = on_nonfinite == "rollback" ? OnNonFinite::rollback : OnNonFinite::stop;
      return train_command({.data = data, .config = config, .lexicon = lexicon, .seed = seed, .data_given = train->count("--data") > 0,
                        .config_given = train->count("--config") > 0, .seed_given = train->count("--seed") > 0},
                       epochs, topt, skip);
    }
    if (*eval) return run_eval(model, data, eval->count("--data") > 0, logits);
    if (*predict) return run_predict(model, texts);
    if (*blas) return run_blas(suggest);
    if (*export_onnx) return run_export(export_args);
    return run_attend(model, texts.at(0), svg);
  });
}
