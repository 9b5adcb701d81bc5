// The training loop, on the toolkit (data/, train/): random windows of the training stream from a
// DataLoader, AdamW (or Muon with AdamW) with the warmup + cosine schedule set per step, the non-finite guard before each step,
// and at every eval interval the validation bits per byte, a metrics line, a checkpoint (model, optimizer,
// loader and generator: a resumed run ends bit-identical to an uninterrupted one) and the learning curve.
// Under mpirun (options.parallel) every rank draws the same global batches and trains on its shard of each;
// rank 0 alone validates, prints and writes.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <numbers>

#include "train.h"

namespace gpt {
namespace fs = std::filesystem;
namespace {

// Example i of a stream: inputs tokens[i, i + T), targets tokens[i + 1, i + T] (T = block_size).
class WindowDataset : public tg::data::Dataset {
 public:
  WindowDataset(const std::vector<int64_t>& tokens, int64_t block_size) : tokens_(tokens), T_(block_size) {}
  int64_t size() const override { return int64_t(tokens_.size()) - T_; }
  tg::data::Example get(int64_t i) const override {
    tg::check<tg::IndexError>(i >= 0 && i < size(), "WindowDataset: index {} out of [0, {})", i, size());
    const auto at = tokens_.begin() + i;
    return {tg::index_tensor({at, at + T_}, {T_}), tg::index_tensor({at + 1, at + T_ + 1}, {T_})};
  }

 private:
  const std::vector<int64_t>& tokens_;
  int64_t T_;
};

// Whether this process prints and writes: the only one, or rank 0 of an mpirun job.
bool lead(const TrainOptions& o) { return o.parallel == nullptr || o.parallel->rank() == 0; }

// Linear warmup to lr, cosine down to min_lr at decay_steps, then min_lr (steps count from 0).
double lr_at(const TrainConfig& t, int64_t step) {
  if (step < t.warmup_steps) return t.lr * double(step + 1) / double(t.warmup_steps);
  if (step >= t.decay_steps) return t.min_lr;
  const double progress = double(step - t.warmup_steps) / double(std::max<int64_t>(t.decay_steps - t.warmup_steps, 1));
  return t.min_lr + 0.5 * (t.lr - t.min_lr) * (1 + std::cos(std::numbers::pi * progress));
}

// Whether Muon trains parameter `name`: with muon_lr > 0, the decoder blocks' matrices (attention and
// feed-forward projections), not the embeddings that the output head shares.
bool by_muon(const TrainConfig& t, const std::string& name, const tg::Variable& p) {
  return t.muon_lr > 0 && p.dim() == 2 && name.starts_with("decoder.layers.");
}

// AdamW alone, or MuonWithAdamW with Muon's group first. Weight decay on the matrices only (embeddings,
// projections), not on biases and LayerNorm gains (nanoGPT).
std::unique_ptr<tg::optim::Optimizer> make_optimizer(const Gpt& model, const TrainConfig& t) {
  std::vector<tg::optim::ParamGroup> muon = {{.weight_decay = t.weight_decay}},
                                     adamw = {{.weight_decay = t.weight_decay}, {.weight_decay = 0.0}};
  for (const auto& [name, p] : model.named_parameters())
    (by_muon(t, name, p) ? muon[0] : adamw[p.dim() >= 2 ? 0 : 1]).params.push_back(p);
  const tg::optim::AdamWOptions adamw_options{.lr = t.lr, .betas = {0.9, 0.95}};
  if (t.muon_lr == 0) return std::make_unique<tg::optim::AdamW>(std::move(adamw), adamw_options);
  // the update's RMS matched to AdamW's (Liu et al. 2025), so that muon_lr is on AdamW's scale
  return std::make_unique<tg::optim::MuonWithAdamW>(
      std::move(muon), tg::optim::MuonOptions{.lr = t.muon_lr, .adjust_lr = tg::optim::MuonLrAdjust::match_rms_adamw},
      std::move(adamw), adamw_options);
}

// A training run in progress; a checkpoint is the toolkit's TrainingState of it plus `user()`.
struct Run {
  const Config& config;
  const Data& data;
  const TrainOptions& options;
  Gpt model;
  std::unique_ptr<tg::optim::Optimizer> opt;
  tg::data::DataLoader loader;
  tg::train::CheckpointManager checkpoints;
  tg::train::NonFiniteGuard guard;
  int64_t step = 0, records = 0;  // optimizer steps taken; metrics lines written
  int64_t committed = 0;          // the step of the state the guard rolls back to
  double lr_scale = 1;            // the rollbacks' factor from earlier sessions of this run
  nlohmann::json curve = nlohmann::json::array();  // [step, train bpc, valid bpc] per evaluation

  Run(const Config& c, const Data& d, const TrainOptions& o)
      : config(c), data(d), options(o), model(c.model),
        opt(make_optimizer(model, c.train)),
        loader(std::make_shared<WindowDataset>(d.train, c.model.block_size),
               {.batch_size = c.train.batch_size, .shuffle = true, .seed = o.seed + 1}),
        checkpoints({.model = &model, .optimizer = opt.get(), .loader = &loader},
                    {.dir = o.out_dir, .prefix = kCheckpointPrefix, .keep_last = 1, .keep_best = 1}),
        guard({.model = &model, .optimizer = opt.get()},
              {.action = o.on_nonfinite, .factor = o.rollback_factor, .max_rollbacks = o.max_rollbacks}) {}

  std::map<std::string, std::string> user() const {
    return {{"config", nlohmann::json(config).dump()}, {"seed", fmt::format("{}", options.seed)},
            {"corpus", data.corpus_path}, {"splits", data.splits_path}, {"fingerprint", data_fingerprint(data)},
            {"records", fmt::format("{}", records)}, {"lr_scale", fmt::format("{}", lr_scale * guard.lr_scale())},
            {"curve", curve.dump()}};
  }
};

// ValueError unless the checkpoint `r` is of this run: the same seed, data and configuration (max_steps aside).
void check_resumable(const Run& run, const RunRecord& r) {
  tg::check<tg::ValueError>(r.seed == run.options.seed, "resume: {} was trained with seed {}, not {}", r.path, r.seed,
                            run.options.seed);
  tg::check<tg::ValueError>(r.fingerprint == data_fingerprint(run.data), "resume: {} was trained on other data ({} "
                            "and {}), not {} and {}", r.path, r.corpus_path, r.splits_path, run.data.corpus_path,
                            run.data.splits_path);
  nlohmann::json here = run.config, there = r.config;
  std::string diff;
  for (nlohmann::json* j : {&here, &there}) (*j)["train"].erase("max_steps"), (*j)["model"].erase("vocab_size");
  for (const char* section : {"model", "train"})
    for (const auto& [key, value] : there[section].items())
      if (here[section][key] != value)
        diff += fmt::format("; {}.{} is {} there, {} here", section, key, value.dump(), here[section][key].dump());
  tg::check<tg::ValueError>(diff.empty(), "resume: {} is of another configuration{}", r.path, diff);
}

// Continues from the newest checkpoint: the toolkit's parts, then the loop's own counters.
void resume(Run& run) {
  const RunRecord record = read_run_record(run.options.out_dir);
  check_resumable(run, record);
  const tg::train::CheckpointInfo info = *run.checkpoints.resume();
  tg::check<tg::ValueError>(info.step <= run.config.train.max_steps, "resume: {} has {} steps done, more than the {} "
                            "asked for", info.path, info.step, run.config.train.max_steps);
  run.step = info.step;
  run.records = std::stoll(info.user.at("records"));
  run.lr_scale = std::stod(info.user.at("lr_scale"));
  run.curve = nlohmann::json::parse(info.user.at("curve"));
  run.guard.commit(), run.committed = run.step;
  if (lead(run.options)) fmt::print("resuming from {}: {} of {} steps done\n", info.path, run.step, run.config.train.max_steps);
}

// Validation, metrics line, checkpoint and learning curve after step run.step.
void evaluate(Run& run, tg::train::MetricsLogger& log, double train_nats, double seconds, int64_t tokens) {
  const double valid_bpc = bits_per_byte(run.model, run.data, run.data.valid, run.config.train.eval_stride);
  // the schedule's lr: AdamW's, in the last group (Muon's, when there is one, is the first)
  const double train_bpc = train_nats / std::numbers::ln2, lr = run.opt->lr(run.opt->param_groups().size() - 1);
  run.curve.push_back({run.step, train_bpc, valid_bpc});
  log.log({{"step", double(run.step)}, {"train_loss", train_nats}, {"train_bpc", train_bpc},
           {"valid_loss", valid_bpc * std::numbers::ln2}, {"valid_bpc", valid_bpc}, {"lr", lr},
           {"seconds", seconds}, {"tokens_per_second", double(tokens) / seconds}});
  ++run.records;
  run.checkpoints.save(run.step, valid_bpc, run.user());
  fmt::print("step {:>5}/{}  train loss {:.4f}  valid loss {:.4f}  valid bpc {:.4f}  lr {:.2e}  {:.0f} tok/s\n",
             run.step, run.config.train.max_steps, train_nats, valid_bpc * std::numbers::ln2, valid_bpc, lr,
             double(tokens) / seconds);
  std::fflush(stdout);  // a log file sees each evaluation as it happens
}

// This rank's rows of the global batch b, and its loss weight: its share of the batch over an equal share
// (count * N / B), so that the average of the ranks' gradients is the gradient of the whole batch's mean.
// Ranks after the first draw their dropout masks from a generator seeded by (seed, rank, step): not the
// same masks as rank 0's, and the same again after a resume (rank 0's generator is the checkpointed one).
struct Share {
  tg::Tensor inputs, targets;  // (rows, T)
  double weight = 1;
};
Share my_share(const Run& run, const tg::data::Batch& b) {
  const Parallel* par = run.options.parallel;
  if (par == nullptr) return {b[0], b[1]};
  const int64_t batch = b[0].size(0);
  const Shard s = shard_of(batch, par->world_size(), par->rank());
  if (par->rank() > 0 && run.config.model.dropout > 0)
    tg::manual_seed(run.options.seed ^ (uint64_t(par->rank()) << 40) ^ (uint64_t(run.step) * 0x9E3779B97F4A7C15ull));
  return {b[0].narrow(0, s.begin, s.count), b[1].narrow(0, s.begin, s.count),
          double(s.count * par->world_size()) / double(batch)};
}

// One step on batch b: false when the guard rolled back instead (the step is not taken).
bool train_step(Run& run, const tg::data::Batch& global, double& loss_sum) {
  const TrainConfig& t = run.config.train;
  const double lr = lr_at(t, run.step) * run.lr_scale * run.guard.lr_scale();
  // AdamW's groups at lr; with Muon, its group (the first) at the same point of the schedule for muon_lr
  for (size_t g = 0; g < run.opt->param_groups().size(); ++g) run.opt->set_lr(g, lr);
  if (t.muon_lr > 0) run.opt->set_lr(0, lr / t.lr * t.muon_lr);
  const Share b = my_share(run, global);
  const int64_t B = b.inputs.size(0), T = b.inputs.size(1), V = run.model.config().vocab_size;
  tg::Variable logits = run.model.forward(b.inputs);  // (B, T, V)
  tg::Variable loss = tg::cross_entropy(logits.reshape({B * T, V}), b.targets.reshape({B * T}));
  if (b.weight != 1.0) loss = loss * b.weight;
  run.opt->zero_grad();
  loss.backward();
  double value = loss.item();  // the whole batch's mean loss, below, on every rank alike
  if (Parallel* par = run.options.parallel) par->finish(), value = par->sum(value) / par->world_size();
  try {
    if (!run.guard.check(value)) return false;
  } catch (const tg::Error& e) {
    throw tg::Error(fmt::format("train: step {} (lr {:.6g}): {}. The checkpoint of the last evaluation in {} is intact; "
                                "lower the learning rate, or roll back with --on-nonfinite rollback", run.step + 1, lr,
                                e.what(), run.options.out_dir));
  }
  if (t.clip_grad_norm > 0) tg::optim::clip_grad_norm(run.model.parameters(), t.clip_grad_norm);
  run.opt->step();
  ++run.step;
  loss_sum += value;
  return true;
}

// Writes the best checkpoint's weights as model.safetensors, and the learning curve.
TrainResult finish(Run& run) {
  const std::optional<tg::train::CheckpointInfo> best = run.checkpoints.best();
  tg::check<tg::Error>(best.has_value(), "train: no evaluation was made");
  if (best->step != run.step) run.checkpoints.load(best->path);
  const fs::path out(run.options.out_dir);
  run.model.save((out / "model.safetensors").string());
  std::vector<double> steps, train, valid;
  for (const nlohmann::json& e : run.curve)
    steps.push_back(e[0].get<double>()), train.push_back(e[1].get<double>()), valid.push_back(e[2].get<double>());
  write_text(out / "learning_curve.svg",
             tg::train::learning_curve_svg({{"train bits/byte", train}, {"valid bits/byte", valid}},
                                           {.title = "gpt: " + run.config.name, .x_label = "step", .x = steps}));
  return {best->metric, best->step};
}

}  // namespace

TrainResult train(Config config, const Data& data, const TrainOptions& options) {
  check_config(config);
  tg::check<tg::ValueError>(!options.out_dir.empty(), "train: no output directory given");
  tg::check<tg::ValueError>(int64_t(data.train.size()) > config.model.block_size, "train: the training stream has {} "
                            "bytes; it needs more than block_size = {}", data.train.size(), config.model.block_size);
  if (options.resume) check_model_dir(options.out_dir);
  tg::manual_seed(options.seed);
  config.model.vocab_size = data.vocab.size();
  tg::AnomalyGuard anomaly(options.detect_anomaly);
  if (options.parallel)
    tg::check<tg::ValueError>(config.train.batch_size >= options.parallel->world_size(), "train: batch_size {} is "
                              "smaller than the {} ranks: each rank needs at least one window of the global batch",
                              config.train.batch_size, options.parallel->world_size());
  Run run(config, data, options);
  if (options.resume) resume(run);
  if (options.parallel) options.parallel->attach(run.model);  // after resume: every rank then holds rank 0's weights
  std::optional<tg::train::JsonlLogger> log;  // rank 0's
  std::optional<tg::train::ProgressBar> progress;
  const int64_t start = run.step, tokens_per_step = config.train.batch_size * config.model.block_size;
  if (lead(options)) {
    create_model_dir(options.out_dir, config, data.vocab);
    log.emplace((fs::path(options.out_dir) / "metrics.jsonl").string(), run.records);
    progress.emplace(tg::train::ProgressBarOptions{.total = std::max<int64_t>(config.train.max_steps - start, 1),
                                                   .label = "train"});
  }
  double loss_sum = 0;
  int64_t steps = 0;  // since the last evaluation
  while (run.step < config.train.max_steps) {
    for (const tg::data::Batch& b : run.loader) {
      if (!train_step(run, b, loss_sum)) {  // the weights are back at step `committed`: so is the schedule
        if (progress) progress->clear();
        if (lead(options)) fmt::print("train: NaN or inf at step {}; rollback {} of {}: back to step {}, learning rate scaled by {:.6g}\n",
                   run.step + 1, run.guard.rollbacks(), options.max_rollbacks, run.committed, run.guard.lr_scale());
        run.step = run.committed, loss_sum = 0, steps = 0;
        continue;
      }
      ++steps;
      if (progress) progress->update(run.step - start, {{"loss", loss_sum / double(steps)}});
      if (run.step % config.train.eval_interval == 0 || run.step == config.train.max_steps) {
        if (lead(options)) {
          progress->clear();
          evaluate(run, *log, loss_sum / double(steps), progress->elapsed_seconds(),
                   (run.step - start) * tokens_per_step);
        }
        run.guard.commit(), run.committed = run.step;  // on every rank: the state a rollback returns to
        loss_sum = 0, steps = 0;
      }
      if (run.step == config.train.max_steps) break;
    }
  }
  if (!lead(options)) return {std::numeric_limits<double>::quiet_NaN(), 0};
  return finish(run);
}

}  // namespace gpt
