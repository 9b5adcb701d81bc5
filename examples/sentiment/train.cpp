// The training loop and the model directory. The loop reads like PyTorch's: zero_grad, forward, loss,
// backward, (clip), step, with the learning rate set per step from the schedule.
#include "train.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <numbers>

namespace sentiment {
namespace fs = std::filesystem;

Data prepare_data(const std::string& path, const Config& config, uint64_t seed, const ReadOptions& read_options) {
  Split split = split_reference(read_examples(path, read_options));
  std::vector<Example> train = split.train, val;
  if (config.train.val_fraction > 0) std::tie(train, val) = split_validation(split.train, config.train.val_fraction, seed);
  std::vector<std::vector<std::string>> tokenized;
  for (const Example& e : train) tokenized.push_back(tokenize(e.text));
  Data d;
  d.vocab = Vocab::build(tokenized, {.min_freq = config.train.min_freq});
  const int64_t L = config.model.max_len;
  d.train = encode_all(train, d.vocab, L), d.val = encode_all(val, d.vocab, L), d.test = encode_all(split.test, d.vocab, L);
  return d;
}

namespace {

std::unique_ptr<tg::optim::Optimizer> make_optimizer(const TrainConfig& t, const std::vector<tg::Variable>& params) {
  if (t.optimizer == "adam")
    return std::make_unique<tg::optim::Adam>(params, tg::optim::AdamOptions{.lr = t.lr, .weight_decay = t.weight_decay});
  tg::check<tg::ValueError>(t.optimizer == "adamw", "train: optimizer must be adam or adamw, got '{}'", t.optimizer);
  return std::make_unique<tg::optim::AdamW>(params, tg::optim::AdamWOptions{.lr = t.lr, .weight_decay = t.weight_decay});
}

// Learning rate at `step` of `total`: linear warmup over the first warmup_steps, then constant or cosine.
double lr_at(const TrainConfig& t, int64_t step, int64_t warmup_steps, int64_t total) {
  if (step < warmup_steps) return t.lr * double(step + 1) / double(warmup_steps);
  if (t.schedule != "cosine") return t.lr;
  double progress = double(step - warmup_steps) / double(std::max<int64_t>(total - warmup_steps, 1));
  return t.lr * 0.5 * (1 + std::cos(std::numbers::pi * progress));
}

int64_t correct_count(const tg::Tensor& logits, const tg::Tensor& labels) {
  return tg::sum(tg::eq(tg::argmax(logits, 1), labels)).to_vector<int64_t>()[0];
}

double accuracy(Classifier& model, const std::vector<Encoded>& data) {
  if (data.empty()) return NAN;
  std::vector<int64_t> pred = predict_labels(model, data);
  int64_t ok = 0;
  for (size_t i = 0; i < data.size(); ++i) ok += pred[i] == data[i].label;
  return double(ok) / double(data.size());
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  tg::check<tg::Error>(bool(out), "cannot write {}", path.string());
}

}  // namespace

std::vector<int64_t> predict_labels(Classifier& model, const std::vector<Encoded>& data) {
  tg::NoGradGuard no_grad;
  bool was_training = model.is_training();
  model.eval();
  std::vector<int64_t> out;
  for (const Batch& b : make_batches(data, 128, false, nullptr)) {
    std::vector<int64_t> p = tg::argmax(model.forward(b.tokens, b.pad_mask).value(), 1).to_vector<int64_t>();
    out.insert(out.end(), p.begin(), p.end());
  }
  model.train(was_training);
  return out;
}

TrainResult train(Config config, const Data& data, const std::string& out_dir, uint64_t seed, bool verbose) {
  tg::manual_seed(seed);
  tg::Generator shuffle_gen(seed + 1);
  config.model.vocab_size = data.vocab.size();
  Classifier model(config.model);
  const TrainConfig& t = config.train;
  auto opt = make_optimizer(t, model.parameters());
  const int64_t per_epoch = (int64_t(data.train.size()) + t.batch_size - 1) / t.batch_size;
  const int64_t total = per_epoch * t.epochs, warmup = per_epoch * t.warmup_epochs;
  fs::create_directories(out_dir);
  std::ofstream metrics(fs::path(out_dir) / "metrics.jsonl");
  TrainResult result;
  Progress progress(t.epochs, per_epoch);
  double best_val = -1;
  int64_t step = 0;
  for (int64_t epoch = 1; epoch <= t.epochs; ++epoch) {
    model.train();
    progress.start_epoch();
    double loss_sum = 0;
    int64_t correct = 0, seen = 0, batch_index = 0;
    for (const Batch& b : make_batches(data.train, t.batch_size, true, &shuffle_gen)) {
      opt->set_lr(0, lr_at(t, step++, warmup, total));
      tg::Variable logits = model.forward(b.tokens, b.pad_mask);  // (B, C)
      tg::Variable loss = tg::cross_entropy(logits, b.labels, {.label_smoothing = t.label_smoothing});
      opt->zero_grad();
      loss.backward();
      if (t.clip_grad_norm > 0) tg::optim::clip_grad_norm(model.parameters(), t.clip_grad_norm);
      opt->step();
      loss_sum += loss.item() * double(b.size()), correct += correct_count(logits.value(), b.labels), seen += b.size();
      progress.update(epoch, ++batch_index, loss_sum / double(seen), double(correct) / double(seen), seen);
    }
    progress.clear();
    EpochLog e{epoch, loss_sum / double(seen), double(correct) / double(seen), accuracy(model, data.val),
               opt->lr(), progress.epoch_seconds(), double(seen) / progress.epoch_seconds()};
    result.log.push_back(e);
    metrics << nlohmann::json{{"epoch", e.epoch}, {"train_loss", e.train_loss}, {"train_accuracy", e.train_accuracy},
                              {"val_accuracy", std::isnan(e.val_accuracy) ? nlohmann::json() : nlohmann::json(e.val_accuracy)},
                              {"lr", e.lr}, {"seconds", e.seconds}, {"sentences_per_second", e.sentences_per_second}}
            << "\n" << std::flush;
    if (verbose)
      fmt::print("epoch {:>2}/{}  loss {:.4f}  train acc {:.3f}  val acc {}  {:.1f}s  {:.0f} sent/s\n", epoch, t.epochs,
                 e.train_loss, e.train_accuracy, std::isnan(e.val_accuracy) ? "  -  " : fmt::format("{:.3f}", e.val_accuracy),
                 e.seconds, e.sentences_per_second);
    if (t.keep_best && e.val_accuracy > best_val) best_val = e.val_accuracy, model.save((fs::path(out_dir) / "model.safetensors").string());
  }
  if (t.keep_best && best_val >= 0) model.load((fs::path(out_dir) / "model.safetensors").string());  // none: no val
  model.save((fs::path(out_dir) / "model.safetensors").string());
  data.vocab.save((fs::path(out_dir) / "vocab.txt").string());
  write_text(fs::path(out_dir) / "config.json", nlohmann::json(config).dump(2) + "\n");
  write_text(fs::path(out_dir) / "learning_curve.svg", learning_curve_svg(result.log, "sentiment: " + config.name));
  std::vector<int64_t> truth;
  for (const Encoded& e : data.test) truth.push_back(e.label);
  result.test = compute_metrics(predict_labels(model, data.test), truth, config.model.num_classes);
  return result;
}

LoadedModel load_model(const std::string& dir) {
  const fs::path d(dir);
  for (const char* f : {"config.json", "vocab.txt", "model.safetensors"})
    tg::check<tg::ValueError>(fs::exists(d / f), "model directory '{}' has no {} (train one with `sentiment train "
                              "--out {}`)", dir, f, dir);
  LoadedModel m;
  try {
    std::ifstream in(d / "config.json");
    m.config = nlohmann::json::parse(in).get<Config>();
  } catch (const nlohmann::json::exception& e) {
    throw tg::ValueError(fmt::format("model directory '{}': config.json is not valid JSON: {}", dir, e.what()));
  } catch (const tg::ValueError& e) {  // valid JSON, but a field is missing or mistyped
    throw tg::ValueError(fmt::format("model directory '{}': config.json: {}", dir, e.what()));
  }
  m.vocab = Vocab::load((d / "vocab.txt").string());
  tg::check<tg::ValueError>(m.vocab.size() == m.config.model.vocab_size,
                            "model directory '{}': vocab.txt has {} tokens but config.json says {}", dir, m.vocab.size(),
                            m.config.model.vocab_size);
  try {
    m.model = std::make_unique<Classifier>(m.config.model);
  } catch (const tg::Error& e) {
    throw tg::ValueError(fmt::format("model directory '{}': config.json: {}", dir, e.what()));
  }
  try {  // the layer's errors name the tensor and both shapes, but not the file
    m.model->load((d / "model.safetensors").string());
  } catch (const tg::Error& e) {
    throw tg::ValueError(fmt::format("model directory '{}': cannot load model.safetensors: {}", dir, e.what()));
  }
  m.model->eval();
  return m;
}

}  // namespace sentiment
