// The training loop and the model directory. The loop reads like PyTorch's (forward, loss, zero_grad,
// backward, step) over a DataLoader; around it the library's toolkit: a checkpoint after every epoch
// (model, optimizer, BatchNorm statistics, the loader's shuffling and the dropout generator, so a resumed
// run ends bit-identical), a guard that never applies a NaN or inf step, a progress bar and a metrics log.
#include "train.h"

#include <chrono>
#include <cmath>
#include <filesystem>
#include <numbers>
#include <optional>

#include "files.h"

namespace digits {
namespace fs = std::filesystem;
namespace {

// The learning rate of epoch `epoch` (0-based): constant, or a cosine from lr to 0 over the run's epochs.
// A function of the epoch alone, so a resume that extends the run stretches the schedule.
double lr_at(const TrainConfig& t, int64_t epoch) {
  if (t.schedule != "cosine") return t.lr;
  return t.lr * 0.5 * (1 + std::cos(std::numbers::pi * double(epoch) / double(t.epochs)));
}

// What a resumed run must share with its checkpoint: the configuration but for the epoch count.
std::string identity(const Config& c) {
  nlohmann::json j = to_json(c);
  j["train"].erase("epochs");
  return j.dump();
}

nlohmann::json history_json(const std::vector<EpochLog>& log) {
  nlohmann::json out = nlohmann::json::array();
  for (const EpochLog& e : log)
    out.push_back({e.epoch, e.loss, e.train_accuracy, e.val_accuracy, e.lr, e.seconds});
  return out;
}

// The epochs of checkpoint `c`, from its metadata "history".
std::vector<EpochLog> history_of(const tg::train::CheckpointInfo& c) {
  auto it = c.user.find("history");
  tg::check<tg::ValueError>(it != c.user.end(), "resume: {} has no 'history' (not a digits checkpoint)", c.path);
  std::vector<EpochLog> log;
  try {
    for (const nlohmann::json& e : nlohmann::json::parse(it->second))
      log.push_back({e.at(0).get<int64_t>(), e.at(1).get<double>(), e.at(2).get<double>(), e.at(3).get<double>(),
                     e.at(4).get<double>(), e.at(5).get<double>()});
  } catch (const nlohmann::json::exception& e) {
    throw tg::ValueError(fmt::format("resume: {}: malformed 'history': {}", c.path, e.what()));
  }
  tg::check<tg::ValueError>(int64_t(log.size()) == c.step, "resume: {}: 'history' holds {} epochs, but the checkpoint "
                            "is of epoch {}", c.path, log.size(), c.step);
  return log;
}

std::unique_ptr<DigitsNet> seeded_model(const ModelConfig& c, uint64_t seed) {
  tg::manual_seed(seed);  // the initial weights, then dropout
  return std::make_unique<DigitsNet>(c);
}

// A run in progress: the model, its optimizer and loader, and what a checkpoint holds of them.
struct Run {
  Run(const Config& c, const Split& s, const TrainOptions& o)
      : config(c), split(s), options(o), model(seeded_model(c.model, o.seed)),
        opt(model->parameters(), {.lr = c.train.lr, .weight_decay = c.train.weight_decay}),
        loader(std::make_shared<tg::data::TensorDataset>(std::vector<tg::Tensor>{s.train.pixels, s.train.labels}),
               {.batch_size = c.train.batch_size, .shuffle = true, .seed = o.seed}),
        state{.model = model.get(), .optimizer = &opt, .loader = &loader},
        checkpoints(state, {.dir = o.out_dir, .keep_last = 1}), guard(state) {}

  const Config& config;
  const Split& split;
  const TrainOptions& options;
  std::unique_ptr<DigitsNet> model;
  tg::optim::AdamW opt;
  tg::data::DataLoader loader;
  tg::train::TrainingState state;
  tg::train::CheckpointManager checkpoints;
  tg::train::NonFiniteGuard guard;  // stops (throws) at the first NaN or inf loss or gradient
  std::vector<EpochLog> log;

  std::map<std::string, std::string> user() const {
    return {{"config", identity(config)}, {"seed", std::to_string(options.seed)}, {"data", split.fingerprint},
            {"history", history_json(log).dump()}};
  }
};

// ValueError unless checkpoint `c` is of this run: the same configuration (the epoch count aside), seed and data.
void check_resumable(const Run& r, const tg::train::CheckpointInfo& c) {
  auto get = [&](const std::string& key) {
    auto it = c.user.find(key);
    tg::check<tg::ValueError>(it != c.user.end(), "resume: {} has no '{}' (not a digits checkpoint)", c.path, key);
    return it->second;
  };
  tg::check<tg::ValueError>(get("seed") == std::to_string(r.options.seed), "resume: {} was trained with seed {}, not {}",
                            c.path, get("seed"), r.options.seed);
  tg::check<tg::ValueError>(get("config") == identity(r.config), "resume: {} is of another configuration: {} there, {} "
                            "here", c.path, get("config"), identity(r.config));
  tg::check<tg::ValueError>(get("data") == r.split.fingerprint, "resume: {} was trained on other data: fingerprint {} "
                            "there, {} here ({})", c.path, get("data"), r.split.fingerprint, r.split.dir);
  tg::check<tg::ValueError>(c.step <= r.config.train.epochs, "resume: {} has {} epochs done, more than the {} asked for",
                            c.path, c.step, r.config.train.epochs);
}

// Starts the run (the checkpoint of epoch 0) or continues it from its newest checkpoint. config.json, which
// train() writes next, holds what a resume needs, so it cannot wait for the end as sentiment's does: instead a
// previous model.safetensors goes first, a resumed run's too (`--resume --epochs` more), and the weights come
// last. A run that fails part-way (a full disk) leaves a directory that load_model refuses as having no
// model.safetensors, never one run's weights beside another's config.json.
void start(Run& r) {
  const std::string previous = (fs::path(r.options.out_dir) / "model.safetensors").string();
  if (!r.options.resume) {
    examples::remove_previous(previous, "train");
    r.checkpoints.save(0, NAN, r.user());
    return;
  }
  std::optional<tg::train::CheckpointInfo> c = r.checkpoints.resume();
  tg::check<tg::ValueError>(c.has_value(), "resume: no checkpoint in '{}' (`digits train --out {}` writes one after "
                            "every epoch)", r.options.out_dir, r.options.out_dir);
  check_resumable(r, *c);  // a refused resume leaves the directory as it was
  examples::remove_previous(previous, "train");
  r.log = history_of(*c);
  fmt::print("resuming from {}: {} of {} epochs done\n", c->path, c->step, r.config.train.epochs);
}

// The training steps of epoch `epoch` (1-based), then validation.
EpochLog train_epoch(Run& r, int64_t epoch) {
  const TrainConfig& t = r.config.train;
  EpochLog e{.epoch = epoch, .lr = lr_at(t, epoch - 1)};
  r.opt.set_lr(0, e.lr);
  r.model->train();
  tg::train::ProgressBar bar({.total = r.loader.size(), .label = fmt::format("epoch {}/{}", epoch, t.epochs)});
  const auto started = std::chrono::steady_clock::now();
  double loss_sum = 0;
  int64_t correct = 0, seen = 0, done = 0;
  for (const tg::data::Batch& b : r.loader) {
    tg::Variable logits, loss;
    // A diverging run fails here: a non-finite loss (the guard), or a layer refusing ±inf (batch_norm).
    try {
      logits = (*r.model)(tg::Variable(b[0]));  // (B, 10)
      loss = tg::cross_entropy(logits, b[1]);   // scalar
      r.opt.zero_grad();
      loss.backward();
      if (r.guard.check(loss.item())) r.opt.step();
    } catch (const tg::Error& err) {
      throw tg::Error(fmt::format("train: epoch {}, batch {} of {}: {} (the checkpoint of epoch {} in {} is intact; "
                                  "lower the learning rate)", epoch, done + 1, r.loader.size(), err.what(), epoch - 1,
                                  r.options.out_dir));
    }
    loss_sum += loss.item() * double(b.size()), correct += count_correct(logits.value(), b[1]), seen += b.size();
    bar.update(++done, {{"loss", loss_sum / double(seen)}, {"acc", double(correct) / double(seen)}});
  }
  bar.clear();
  e.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  e.loss = loss_sum / double(seen), e.train_accuracy = double(correct) / double(seen);
  e.val_accuracy = double(count_correct(predict_proba(*r.model, r.split.valid.pixels), r.split.valid.labels)) /
                   double(r.split.valid.size());
  return e;
}

tg::train::Record record(const EpochLog& e) {
  return {{"epoch", double(e.epoch)}, {"loss", e.loss}, {"train_accuracy", e.train_accuracy},
          {"val_accuracy", e.val_accuracy}, {"lr", e.lr}, {"seconds", e.seconds}};
}

std::string learning_curve(const std::vector<EpochLog>& log, const std::string& name) {
  tg::train::Series loss{"training loss", {}}, train_acc{"training accuracy", {}, true};
  tg::train::Series val_acc{"validation accuracy", {}, true};
  for (const EpochLog& e : log) {
    loss.values.push_back(e.loss), train_acc.values.push_back(e.train_accuracy);
    val_acc.values.push_back(e.val_accuracy);
  }
  return tg::train::learning_curve_svg({loss, train_acc, val_acc}, {.title = "digits: " + name});
}

}  // namespace

TrainResult train(const Config& config, const Split& split, const TrainOptions& options) {
  check_config(config);
  tg::check<tg::ValueError>(!options.out_dir.empty(), "train: no output directory given");
  tg::check<tg::ValueError>(split.train.size() > 0 && split.valid.size() > 0, "train: no training or validation images");
  std::error_code ec;
  fs::create_directories(options.out_dir, ec);
  tg::check<tg::Error>(!ec && fs::is_directory(options.out_dir), "train: cannot create the output directory '{}': {}",
                       options.out_dir, ec ? ec.message() : "a file of that name exists");
  Run r(config, split, options);
  start(r);
  save_run_info(options.out_dir, {config, options.seed, split.dir});
  const std::string metrics_path = (fs::path(options.out_dir) / "metrics.csv").string();
  tg::train::CsvLogger metrics(metrics_path);  // rewritten: a resume drops the epochs past its checkpoint
  for (const EpochLog& e : r.log) metrics.log(record(e));
  for (int64_t epoch = int64_t(r.log.size()) + 1; epoch <= config.train.epochs; ++epoch) {
    r.log.push_back(train_epoch(r, epoch));
    const EpochLog& e = r.log.back();
    r.checkpoints.save(epoch, e.val_accuracy, r.user());
    metrics.log(record(e));
    fmt::print("epoch {:>2}/{}  loss {:.4f}  train acc {:.4f}  val acc {:.4f}  lr {:.2g}  {:.1f}s\n", epoch,
                 config.train.epochs, e.loss, e.train_accuracy, e.val_accuracy, e.lr, e.seconds);
  }
  r.model->save((fs::path(options.out_dir) / "model.safetensors").string());
  const std::string svg = learning_curve(r.log, config.name);
  tg::write_file_atomic((fs::path(options.out_dir) / "learning_curve.svg").string(), {svg}, "digits: cannot write");
  r.model->eval();
  return {std::move(r.model), r.log};
}

std::pair<std::unique_ptr<DigitsNet>, RunInfo> load_model(const std::string& dir) {
  RunInfo info = load_run_info(dir);
  const fs::path path = fs::path(dir) / "model.safetensors";
  tg::check<tg::ValueError>(fs::is_regular_file(path), "model directory '{}' has no model.safetensors (did its "
                            "training stop early? `digits train --resume {}` finishes it)", dir, dir);
  auto model = std::make_unique<DigitsNet>(info.config.model);
  try {  // the layer's errors name the tensor and both shapes, but not the file
    model->load(path.string());
  } catch (const tg::Error& e) {
    throw tg::ValueError(fmt::format("model directory '{}': cannot load model.safetensors: {}", dir, e.what()));
  }
  for (const auto& [name, t] : model->state_dict())
    tg::check<tg::ValueError>(t.dtype() == tg::i64 || tg::all_finite(t), "model directory '{}': model.safetensors "
                              "holds NaN or inf in '{}' {}", dir, name, t.shape());
  model->eval();
  return {std::move(model), info};
}

}  // namespace digits
