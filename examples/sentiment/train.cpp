// The training loop and the model directory. The loop reads like PyTorch's: zero_grad, forward, loss,
// backward, (clip), step, with the learning rate set per step from the schedule. Around it, the toolkit's
// parts (tg::train): a checkpoint after every epoch (resume continues from it bit-exact), and a guard that
// never applies a step whose loss or gradient is NaN or inf, but stops, or rolls back to the end of the last
// epoch with a lower learning rate.
#include "train.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <numbers>
#include <optional>

#include "checkpoint.h"
#include "files.h"

namespace sentiment {
namespace fs = std::filesystem;

std::string default_lexicon_path() { return SENTIMENT_DEFAULT_LEXICON; }

Data prepare_data(const std::string& path, const Config& config, uint64_t seed, const ReadOptions& read_options,
                  const std::string& lexicon_path) {
  int64_t num_skipped = 0;
  FileStamp file;
  Split split = split_reference(read_examples(path, read_options, &num_skipped, &file));
  std::vector<Example> train = split.train, val;
  if (config.train.val_fraction > 0) std::tie(train, val) = split_validation(split.train, config.train.val_fraction, seed);
  std::vector<std::vector<std::string>> tokenized;
  for (const Example& e : train) tokenized.push_back(tokenize(e.text));
  Data d;
  d.vocab = Vocab::build(tokenized, {.min_freq = config.train.min_freq});
  const int64_t L = config.model.max_len, buckets = config.model.subword_buckets, w = config.model.lexicon_weight;
  if (w > 0) d.lexicon = Lexicon::load(lexicon_path);
  const Lexicon* lex = w > 0 ? &d.lexicon : nullptr;
  d.train = encode_all(train, d.vocab, L, buckets, lex, w), d.val = encode_all(val, d.vocab, L, buckets, lex, w);
  d.test = encode_all(split.test, d.vocab, L, buckets, lex, w);
  d.num_skipped = num_skipped;
  d.path = fs::absolute(path).string();
  d.file = file;
  return d;
}

namespace {

std::unique_ptr<tg::optim::Optimizer> make_optimizer(const TrainConfig& t, const std::vector<tg::Variable>& params) {
  if (t.optimizer == OptimizerKind::adam)
    return std::make_unique<tg::optim::Adam>(params, tg::optim::AdamOptions{.lr = t.lr, .weight_decay = t.weight_decay});
  return std::make_unique<tg::optim::AdamW>(params, tg::optim::AdamWOptions{.lr = t.lr, .weight_decay = t.weight_decay});
}

// The learning rate's factor at optimizer step `step` (0-based) of `total`, for a LambdaLR: a linear warmup
// over the first warmup_steps ((step + 1) / warmup_steps), then 1 (constant) or a cosine from 1 to 0 at the
// last step (Loshchilov & Hutter 2017, without restarts): the warmup-then-cosine LambdaLR of HuggingFace's
// get_cosine_schedule_with_warmup. A function of the step and the run's length alone, so a resume that
// extends the run stretches the cosine.
double schedule_factor(Schedule schedule, int64_t step, int64_t warmup_steps, int64_t total) {
  if (step < warmup_steps) return double(step + 1) / double(warmup_steps);
  if (schedule != Schedule::cosine) return 1;
  double progress = double(step - warmup_steps) / double(std::max<int64_t>(total - warmup_steps, 1));
  return 0.5 * (1 + std::cos(std::numbers::pi * progress));
}

int64_t correct_count(const tg::Tensor& logits, const tg::Tensor& labels) {
  return tg::sum(tg::eq(tg::argmax(logits, 1), labels)).to_vector<int64_t>()[0];
}

// Argmax predictions of a Classifier or one of its members, in eval mode without recording a graph.
template <class Model>
std::vector<int64_t> predict_with(Model& model, const std::vector<Encoded>& data) {
  tg::NoGradGuard no_grad;
  bool was_training = model.is_training();
  model.eval();
  std::vector<int64_t> out;
  const std::unique_ptr<tg::data::DataLoader> loader = make_loader(data, 128);
  for (const tg::data::Batch& batch : *loader) {
    const Batch b = Batch::of(batch);
    std::vector<int64_t> p = tg::argmax(model.forward(b.tokens, b.pad_mask, b.subwords).value(), 1).template to_vector<int64_t>();
    out.insert(out.end(), p.begin(), p.end());
  }
  model.train(was_training);
  return out;
}

// The fraction of `data` that `model` labels right; NaN for no data.
double accuracy(Classifier& model, const std::vector<Encoded>& data) {
  if (data.empty()) return NAN;
  std::vector<int64_t> pred = predict_with(model, data);
  int64_t ok = 0;
  for (size_t i = 0; i < data.size(); ++i) ok += pred[i] == data[i].label;
  return double(ok) / double(data.size());
}

// FNV-1a over the vocabulary and the encoded splits (ids, labels, sub-word buckets): equal for the same data
// file, split and vocabulary options, different (with near certainty) otherwise.
std::string data_fingerprint(const Data& d) {
  std::string bytes;  // every value as 8 little-endian bytes
  auto mix = [&bytes](uint64_t v) {
    for (int i = 0; i < 8; ++i) bytes += char((v >> (8 * i)) & 0xff);
  };
  for (int64_t id = 0; id < d.vocab.size(); ++id)
    for (char ch : d.vocab.token(id) + '\n') mix(uint8_t(ch));
  for (const std::vector<Encoded>* split : {&d.train, &d.val, &d.test}) {
    mix(split->size());
    for (const Encoded& e : *split) {
      mix(e.ids.size()), mix(uint64_t(e.label));
      for (int64_t id : e.ids) mix(uint64_t(id));
      for (const std::vector<int64_t>& g : e.subwords)
        for (int64_t id : g) mix(uint64_t(id));
    }
  }
  return stamp_of(bytes).fnv1a64;
}

}  // namespace

std::vector<int64_t> predict_labels(Classifier& model, const std::vector<Encoded>& data) {
  return predict_with(model, data);
}

namespace {

// The K members' training and validation sentences: member k's are all but fold k of `train`, and fold k
// (assign_folds with `seed`), each in input order.
std::pair<std::vector<std::vector<Encoded>>, std::vector<std::vector<Encoded>>> split_folds(
    const std::vector<Encoded>& train, int64_t k, uint64_t seed) {
  const std::vector<int64_t> fold = assign_folds(train.size(), k, seed);
  std::vector<std::vector<Encoded>> member_train(static_cast<size_t>(k)), member_val(static_cast<size_t>(k));
  for (size_t i = 0; i < train.size(); ++i)
    for (int64_t m = 0; m < k; ++m) (fold[i] == m ? member_val : member_train)[size_t(m)].push_back(train[i]);
  return {member_train, member_val};
}

// A training run in progress: the model, its optimizer and generators, and where the run is. A checkpoint
// is the toolkit's TrainingState of it (model, optimizer, schedule, generators) plus its RunRecord.
struct Run {
  const Config& config;
  const Data& data;
  const TrainOptions& options;
  Classifier model;
  std::unique_ptr<tg::optim::Optimizer> opt;
  std::unique_ptr<tg::optim::LambdaLR> schedule;  // the lr of each step (a rollback lowers its base lr)
  tg::Generator shuffle_gen;
  std::string fingerprint;
  int64_t per_epoch, total_steps, warmup_steps;
  int64_t epoch = 0, step = 0, committed_step = 0;  // epochs done, optimizer steps taken; the guard's step
  int64_t earlier_rollbacks = 0;  // of the sessions before a resume, and their learning-rate factor
  double earlier_scale = 1;
  int64_t best_epoch = 0;
  double best_val = -1;
  tg::TensorMap best_model;  // keep_best: a copy of the weights of best_epoch
  std::vector<EpochLog> log;
  // ensemble_data "folds": member k trains on fold_train[k] and is validated on fold_val[k]. Empty otherwise:
  // every member trains on data.train, in the same batches.
  std::vector<std::vector<Encoded>> fold_train, fold_val;
  // One loader per training set, shuffled from shuffle_gen, each drawing its epoch's order in turn.
  std::vector<std::unique_ptr<tg::data::DataLoader>> loaders;
  std::optional<tg::train::CheckpointManager> checkpoints;
  std::optional<tg::train::NonFiniteGuard> guard;  // made by start(), on the resumed state

  Run(const Config& c, const Data& d, const TrainOptions& o)
      : config(c), data(d), options(o), model(c.model), opt(make_optimizer(c.train, model.parameters())),
        shuffle_gen(o.seed + 1), fingerprint(data_fingerprint(d)) {
    if (c.train.ensemble_data == EnsembleData::folds) std::tie(fold_train, fold_val) = split_folds(d.train, c.model.ensemble, o.seed);
    per_epoch = 0;
    for (const std::vector<Encoded>* set : train_sets()) {
      loaders.push_back(make_loader(*set, c.train.batch_size,
                                    std::make_shared<SharedRandomSampler>(int64_t(set->size()), shuffle_gen)));
      per_epoch = std::max(per_epoch, loaders.back()->size());
    }
    total_steps = per_epoch * c.train.epochs, warmup_steps = per_epoch * c.train.warmup_epochs;
    schedule = std::make_unique<tg::optim::LambdaLR>(*opt, std::vector<tg::optim::LambdaLR::Lambda>{[this](int64_t s) {
      return schedule_factor(config.train.schedule, s, warmup_steps, total_steps);
    }});
    checkpoints.emplace(tg::train::TrainingState{.model = &model, .optimizer = opt.get(), .scheduler = schedule.get(),
                                                 .generators = {{"shuffle", &shuffle_gen}}},
                        tg::train::CheckpointOptions{.dir = o.out_dir, .keep_last = 1,
                                                     .keep_best = c.train.keep_best ? 1 : 0, .mode = tg::train::Mode::max});
  }
  Run(const Run&) = delete;  // the schedule refers to this run
  // The training sentences: one set shared by all members, or one per member.
  std::vector<const std::vector<Encoded>*> train_sets() const {
    if (fold_train.empty()) return {&data.train};
    std::vector<const std::vector<Encoded>*> out;
    for (const std::vector<Encoded>& f : fold_train) out.push_back(&f);
    return out;
  }
  // Rollbacks so far, resumed sessions included, and the learning-rate factor they left.
  int64_t rollbacks() const { return earlier_rollbacks + guard->rollbacks(); }
  double lr_scale() const { return earlier_scale * guard->lr_scale(); }
  // What the checkpoint keeps beside the TrainingState.
  RunRecord record() const {
    return {.config = config, .seed = options.seed, .data_fingerprint = fingerprint, .data_path = data.path,
            .epoch = epoch, .step = step, .lr_scale = lr_scale(), .rollbacks = rollbacks(),
            .member_rngs = model.generator_states(), .log = log};
  }
};

// The accuracy on data.val, or with ensemble_data "folds" out-of-fold: each member on the fold it did not
// train on. NaN when there is no validation set.
double validation_accuracy(Run& r) {
  if (r.fold_val.empty()) return accuracy(r.model, r.data.val);
  std::vector<std::vector<int64_t>> pred(r.fold_val.size());
  r.model.for_each_member([&](int64_t k) { pred[size_t(k)] = predict_with(r.model.member(k), r.fold_val[size_t(k)]); });
  int64_t ok = 0, n = 0;
  for (size_t k = 0; k < pred.size(); ++k) {
    const std::vector<Encoded>& val = r.fold_val[k];
    for (size_t i = 0; i < val.size(); ++i) ok += pred[k][i] == val[i].label;
    n += int64_t(val.size());
  }
  return double(ok) / double(n);
}

// Puts the current lr where this run's schedule has it at step r.step (the same lr, unless a resume changed
// the run's length, which stretches the cosine).
void sync_schedule(Run& r) {
  tg::optim::SchedulerState s = r.schedule->state_dict();
  s.at("last_epoch") -= 1;
  r.schedule->load_state_dict(s);
  r.schedule->step();
}

// ValueError unless checkpoint `c` is of this run: the same seed, configuration (the epoch count aside)
// and data. The vocabulary size comes from the data, so it is left to the data check.
void check_resumable(const Run& r, const RunRecord& c) {
  tg::check<tg::ValueError>(c.seed == r.options.seed, "resume: {} was trained with seed {}, not {}", c.path,
                            c.seed, r.options.seed);
  nlohmann::json here = r.config, there = c.config;
  for (nlohmann::json* j : {&here, &there}) (*j)["train"].erase("epochs"), (*j)["model"].erase("vocab_size"), j->erase("files");
  if (here != there) {
    const nlohmann::json diff = nlohmann::json::diff(there, here);
    std::string shown;
    for (size_t i = 0; i < std::min<size_t>(diff.size(), 4); ++i) {
      const nlohmann::json::json_pointer at(diff[i]["path"].get<std::string>());
      shown += fmt::format("; {} is {} there, {} here", at.to_string(), there.contains(at) ? there[at].dump() : "absent",
                           here.contains(at) ? here[at].dump() : "absent");
    }
    if (diff.size() > 4) shown += fmt::format("; and {} more", diff.size() - 4);
    throw tg::ValueError(fmt::format("resume: {} is of another configuration{}", c.path, shown));
  }
  tg::check<tg::ValueError>(c.data_fingerprint == r.fingerprint, "resume: {} was trained on other data (another file, "
                            "split or vocabulary{}): data fingerprint {} there, {} here", c.path,
                            c.data_path.empty() ? "" : "; it read " + c.data_path, c.data_fingerprint, r.fingerprint);
  tg::check<tg::ValueError>(c.member_rngs.size() == r.model.generator_states().size(), "resume: {} holds {} member "
                            "generator states for {} ensemble members", c.path, c.member_rngs.size(),
                            r.model.generator_states().size());
  tg::check<tg::ValueError>(c.epoch <= r.config.train.epochs, "resume: {} has {} epochs done, more than the {} asked for",
                            c.path, c.epoch, r.config.train.epochs);
}

// Whether this process prints and writes: the only one, or rank 0 of an mpirun job.
bool lead(const TrainOptions& o) { return o.parallel == nullptr || o.parallel->rank() == 0; }
// Whether this process prints: verbose, and the lead.
bool speaks(const TrainOptions& o) { return o.verbose && lead(o); }

// This rank's rows of a member's batch under mpirun (shard_of), and its loss weight: its share of the batch
// over an equal share (count * N / B), so that the ranks' mean gradient is the whole batch's. A rank without
// rows (a last batch smaller than the ranks) computes row 0 with weight 0: zero gradients, defined like the
// other ranks' for the allreduce.
struct Share {
  Batch batch;
  int64_t count = 0;  // the rows that count
  double weight = 1;
};
Share share_of(const Batch& b, const examples::Parallel* par) {
  if (par == nullptr) return {b, b.size(), 1};
  const int64_t n = b.size();
  const examples::Shard s = examples::shard_of(n, par->world_size(), par->rank());
  const int64_t begin = s.count > 0 ? s.begin : 0, rows = std::max<int64_t>(s.count, 1);
  auto mine = [begin, rows](const tg::Tensor& t) { return t.defined() ? t.narrow(0, begin, rows) : t; };
  return {{mine(b.tokens), mine(b.pad_mask), mine(b.labels), mine(b.subwords)}, s.count,
          double(s.count * par->world_size()) / double(n)};
}

// Ranks after the first draw their dropout from generators seeded by (seed, rank, step, member): not rank
// 0's masks (each shard's first row would share one), and the same again after a resume (rank 0's
// generators are the checkpointed ones).
void reseed_rank(Run& r, int rank) {
  auto seed = [&r, rank](uint64_t k) {
    return r.options.seed ^ (uint64_t(rank) << 40) ^ (k << 32) ^ (uint64_t(r.step) * 0x9E3779B97F4A7C15ull);
  };
  std::vector<std::string> states = r.model.generator_states();
  if (states.empty()) return tg::manual_seed(seed(0));  // one network draws from the default generator
  for (size_t k = 0; k < states.size(); ++k) states[k] = tg::Generator(seed(k)).get_state();
  r.model.set_generator_states(states);
}

// Per parameter of r.model (parameters()' order): the rows of its embedding tables that this step's batches can
// give a gradient (Network::embedding_rows of member k's whole batch), and std::nullopt (the whole gradient) for
// every other parameter. Every rank holds the whole batches, so the ranks agree on them without a word.
std::vector<std::optional<std::vector<int64_t>>> touched_rows(Run& r, const std::vector<const Batch*>& batches) {
  std::map<std::string, std::vector<int64_t>> rows;
  for (int64_t k = 0; k < r.model.num_members(); ++k) {
    const Batch* b = batches[size_t(k)];
    if (b == nullptr) continue;  // its gradients are undefined, skipped
    const std::string prefix = r.model.num_members() > 1 ? fmt::format("members.{}.", k) : "";
    for (auto& [name, ids] : r.model.member(k).embedding_rows(b->tokens, b->subwords))
      rows[prefix + name] = std::move(ids);
  }
  std::vector<std::optional<std::vector<int64_t>>> out;
  for (const auto& named : r.model.named_parameters()) {
    const auto it = rows.find(named.first);
    out.push_back(it == rows.end() ? std::nullopt : std::optional(std::move(it->second)));
  }
  return out;
}

// The running sums of an epoch's applied steps.
struct EpochSums {
  double loss = 0;  // over sentences
  int64_t correct = 0, seen = 0;
};

// The guard's verdict on a step's mean loss and gradients (tg::train::NonFiniteGuard): true to apply it. Its
// error names where the step was.
bool guard_allows(Run& r, double loss, const std::string& where) {
  try {
    return r.guard->check(loss);
  } catch (const tg::Error& e) {
    const bool stop = r.options.on_nonfinite == OnNonFinite::stop;
    throw tg::Error(fmt::format("train: {}: {}; lower the learning rate{}", where, e.what(),
                                stop ? ", or roll back with --on-nonfinite rollback" : ""));
  }
}

// One training step: member k on batches[k] (nullptr: that member has no batch at this step), the members
// side by side on the threads; under mpirun each on its share of the batch, the gradients then averaged over
// the ranks on this thread, of the embedding tables only the rows the step's whole batches touched (the others
// are 0 on every rank: the same mean at a third of the 7.5 MB of the default configuration). Returns false when
// the guard rolled back instead (the step is not applied): the same on every rank, as it decides on the sums
// over the ranks and the averaged gradients.
bool train_step(Run& r, const std::vector<const Batch*>& batches, const std::string& where, EpochSums& sums) {
  const TrainConfig& t = r.config.train;
  examples::Parallel* par = r.options.parallel;
  int64_t members = 0;
  std::vector<Share> shares(batches.size());
  for (size_t k = 0; k < batches.size(); ++k)
    if (batches[k] != nullptr) ++members, shares[k] = share_of(*batches[k], par);
  if (par != nullptr && par->rank() > 0) reseed_rank(r, par->rank());
  struct MemberStep {
    double loss = 0;  // the member's mean loss over its batch
    int64_t correct = 0;
  };
  std::vector<MemberStep> out(batches.size());
  r.opt->zero_grad();
  // Each member's loss is divided by the members at this step: the gradient of their mean loss, each member
  // trained on its own as if alone. A member's backward touches only its own parameters' gradients.
  r.model.for_each_member([&](int64_t k) {
    if (batches[size_t(k)] == nullptr) return;
    const Share& s = shares[size_t(k)];
    const Batch& b = s.batch;
    tg::Variable logits = r.model.member(k).forward(b.tokens, b.pad_mask, b.subwords);  // (B, C)
    tg::Variable loss = tg::cross_entropy(logits, b.labels, {.label_smoothing = t.label_smoothing});
    out[size_t(k)] = {loss.item(), s.count > 0 ? correct_count(logits.value(), b.labels) : 0};
    if (s.weight != 1.0) loss = loss * s.weight;
    if (std::isfinite(out[size_t(k)].loss)) (members > 1 ? loss / double(members) : loss).backward();
  });
  // Per member with a batch: its loss summed over its sentences, its right answers and its sentences, summed
  // over the ranks. A rank without rows adds its loss times 0: NaN when that is not finite, which stops the
  // step on every rank rather than leaving this rank's gradients undefined for the allreduce.
  std::vector<double> totals;
  for (size_t k = 0; k < batches.size(); ++k)
    if (batches[k] != nullptr)
      totals.insert(totals.end(), {out[k].loss * double(shares[k].count), double(out[k].correct), double(shares[k].count)});
  if (par != nullptr) totals = par->sum(totals);
  double member_loss_sum = 0, mean_loss = 0;  // over sentences; over members (what the step minimises)
  int64_t member_correct = 0, member_seen = 0;
  for (size_t k = 0, i = 0; k < batches.size(); ++k) {
    if (batches[k] == nullptr) continue;
    const double l = par != nullptr ? totals[i] / totals[i + 2] : out[k].loss;  // the member's mean over its batch
    member_loss_sum += totals[i], mean_loss += l / double(members);
    member_correct += int64_t(totals[i + 1]), member_seen += int64_t(totals[i + 2]);
    i += 3;
  }
  if (par != nullptr && std::isfinite(mean_loss))
    par->average_gradients(r.model.parameters(), touched_rows(r, batches));
  if (!guard_allows(r, mean_loss, where)) return false;
  if (t.clip_grad_norm > 0) tg::optim::clip_grad_norm(r.model.parameters(), t.clip_grad_norm);
  r.opt->step();
  r.schedule->step();
  ++r.step;
  sums.loss += member_loss_sum, sums.correct += member_correct, sums.seen += member_seen;
  return true;
}

// After a rollback (the guard put the weights, optimizer and schedule back to the end of the last epoch, with
// a lower learning rate): the step count goes back with them, and the loop goes on with the next batch.
void after_rollback(Run& r, const std::string& where) {
  r.step = r.committed_step;
  if (speaks(r.options))
    fmt::print("train: NaN or inf at {}; rollback {} of {}: back to the end of epoch {}, learning rate scaled by {:.6g}\n",
               where, r.rollbacks(), r.options.max_rollbacks, r.epoch, r.lr_scale());
}

// The next batch of each training set's epoch (undefined past a set's end), the iterators moved on.
std::vector<Batch> next_batches(std::vector<tg::data::DataLoader::Iterator>& sets) {
  std::vector<Batch> now;
  for (tg::data::DataLoader::Iterator& it : sets) {
    now.push_back(it == tg::data::DataLoader::Sentinel{} ? Batch{} : Batch::of(*it));
    if (it != tg::data::DataLoader::Sentinel{}) ++it;
  }
  return now;
}

// Member k's batch of this step among `now` (one set shared by all, or one per member); nullptr when its
// set has no batch left.
std::vector<const Batch*> member_batches(const Run& r, const std::vector<Batch>& now) {
  std::vector<const Batch*> out;
  for (int64_t k = 0; k < r.model.num_members(); ++k) {
    const Batch& b = now[now.size() == 1 ? 0 : size_t(k)];
    out.push_back(b.tokens.defined() ? &b : nullptr);
  }
  return out;
}

// On a terminal, a bar per epoch (tg::train::ProgressBar); elsewhere (a log) only the epoch's summary line.
std::optional<tg::train::ProgressBar> epoch_bar(const Run& r) {
  if (!speaks(r.options) || !isatty(STDERR_FILENO)) return std::nullopt;
  return tg::train::ProgressBar({.total = r.per_epoch, .label = fmt::format("epoch {}/{}", r.epoch + 1, r.config.train.epochs)});
}

// The training steps of epoch r.epoch + 1, and its training metrics (of the steps since the last rollback).
EpochLog train_epoch(Run& r) {
  r.model.train();
  const auto started = std::chrono::steady_clock::now();
  std::optional<tg::train::ProgressBar> bar = epoch_bar(r);
  EpochSums sums;
  double lr = r.opt->lr();  // the last step's
  std::vector<tg::data::DataLoader::Iterator> sets;  // each loader's epoch, the orders drawn in turn
  for (const std::unique_ptr<tg::data::DataLoader>& l : r.loaders) sets.push_back(l->begin());
  for (int64_t batch = 1; batch <= r.per_epoch; ++batch) {
    const std::vector<Batch> now = next_batches(sets);
    lr = r.opt->lr();
    const std::string where = fmt::format("epoch {}, step {} (batch {} of {}, lr {:.6g})", r.epoch + 1, r.step + 1,
                                          batch, r.per_epoch, lr);
    bool applied = false;
    try {
      applied = train_step(r, member_batches(r, now), where, sums);
    } catch (const tg::ValueError& err) {  // AnomalyGuard names the op but not where training was
      if (!r.options.detect_anomaly) throw;
      throw tg::ValueError(fmt::format("train: {}: {}", where, err.what()));
    }
    if (!applied) {
      if (bar) bar->clear();
      after_rollback(r, where);
      sums = {};
      continue;
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (bar)
      bar->update(batch, {{"loss", sums.loss / double(sums.seen)}, {"acc", double(sums.correct) / double(sums.seen)},
                          {"sent/s", double(sums.seen) / std::max(seconds, 1e-9)}});
  }
  if (bar) bar->clear();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const double seen = double(sums.seen);
  return {r.epoch + 1, sums.loss / seen, double(sums.correct) / seen, NAN, lr, seconds, seen / seconds};
}

// An epoch's line of metrics.jsonl (NaN, an absent split's accuracy, is null).
tg::train::Record record(const EpochLog& e) {
  return {{"epoch", double(e.epoch)}, {"train_loss", e.train_loss}, {"train_accuracy", e.train_accuracy},
          {"val_accuracy", e.val_accuracy}, {"lr", e.lr}, {"seconds", e.seconds},
          {"sentences_per_second", e.sentences_per_second}};
}

// Validation, keep-best, the guard's commit, checkpoint, metrics line and summary of a completed epoch.
void finish_epoch(Run& r, std::optional<tg::train::JsonlLogger>& metrics, EpochLog e) {
  e.val_accuracy = validation_accuracy(r);
  r.log.push_back(e);
  r.epoch = e.epoch;
  if (r.config.train.keep_best && e.val_accuracy > r.best_val) {
    r.best_val = e.val_accuracy, r.best_epoch = e.epoch, r.best_model.clear();
    for (const auto& [name, t] : r.model.state_dict()) r.best_model[name] = t.clone();
  }
  r.guard->commit(), r.committed_step = r.step;  // on every rank: the state a rollback returns to
  if (!lead(r.options)) return;
  r.checkpoints->save(r.epoch, r.config.train.keep_best ? e.val_accuracy : NAN, record_metadata(r.record()));
  metrics->log(record(e));
  if (r.options.verbose)
    fmt::print("epoch {:>2}/{}  loss {:.4f}  train acc {:.3f}  val acc {}  {:.1f}s  {:.0f} sent/s\n", e.epoch,
               r.config.train.epochs, e.train_loss, e.train_accuracy,
               std::isnan(e.val_accuracy) ? "  -  " : fmt::format("{:.3f}", e.val_accuracy), e.seconds,
               e.sentences_per_second);
}

// With keep_best, the best epoch so far and its weights: the best checkpoint's ("model." tensors of the
// TrainingState it holds).
void restore_best(Run& r) {
  const std::optional<tg::train::CheckpointInfo> best = r.checkpoints->best();
  if (!r.config.train.keep_best || !best) return;
  r.best_val = best->metric, r.best_epoch = best->step;
  const std::string prefix = "model.";
  for (const auto& [name, t] : tg::load_safetensors(best->path).tensors)
    if (name.starts_with(prefix)) r.best_model[name.substr(prefix.size())] = t;
}

// Continues from the newest checkpoint: its record is checked first (another run's is refused before
// anything changes), then the toolkit restores the TrainingState and the loop takes its own counters.
void resume(Run& r) {
  const RunRecord c = read_record(resume_checkpoint(r.options.out_dir));
  check_resumable(r, c);
  r.checkpoints->load(c.path);
  r.model.set_generator_states(c.member_rngs);
  r.epoch = c.epoch, r.step = c.step, r.log = c.log;
  r.earlier_rollbacks = c.rollbacks, r.earlier_scale = c.lr_scale;
  restore_best(r);
  sync_schedule(r);
  if (speaks(r.options))
    fmt::print("resuming from {}: {} of {} epochs done\n", c.path, r.epoch, r.config.train.epochs);
}

// Starts the run, or continues it (`resume`); then the guard, which commits the state it starts from.
void start(Run& r) {
  if (r.options.resume) resume(r);
  const TrainOptions& o = r.options;
  r.guard.emplace(tg::train::TrainingState{.model = &r.model, .optimizer = r.opt.get(), .scheduler = r.schedule.get()},
                  tg::train::NonFiniteGuardOptions{.action = o.on_nonfinite, .factor = o.rollback_factor,
                                                   .max_rollbacks = std::max<int64_t>(o.max_rollbacks - r.earlier_rollbacks, 0)});
  r.committed_step = r.step;
}

// The model directory of a finished run, and the test metrics of its final (or best) weights. config.json is
// removed first and written last, so its presence means the files beside it are this run's: a retrain over a
// model directory that fails part-way (a full disk) leaves one that load_model refuses as having no
// config.json, not new weights beside the old config. The removal reaches the disk with the folder's fsync in
// the first write_file_atomic after it. Under mpirun rank 0 alone writes; every rank computes the same metrics.
TrainResult finish(Run& r) {
  const fs::path out(r.options.out_dir);
  if (r.config.train.keep_best && !r.best_model.empty()) r.model.load_state_dict(r.best_model);  // none: no val
  if (lead(r.options)) {
    examples::remove_previous((out / "config.json").string(), "train");
    r.model.save((out / "model.safetensors").string());
    r.data.vocab.save((out / "vocab.txt").string());
    if (r.config.model.lexicon_weight > 0) r.data.lexicon.save((out / "lexicon.tsv").string());
    tg::write_file_atomic((out / "config.json").string(), {nlohmann::json(r.config).dump(2) + "\n"}, "train");
    tg::write_file_atomic((out / "learning_curve.svg").string(),
                          {learning_curve_svg(r.log, "sentiment: " + r.config.name)}, "train");
  }
  std::vector<int64_t> truth;
  for (const Encoded& e : r.data.test) truth.push_back(e.label);
  return {r.log, compute_metrics(predict_labels(r.model, r.data.test), truth, r.config.model.num_classes),
          validation_accuracy(r), r.rollbacks(), r.lr_scale()};
}

// ValueError for a run train cannot make, checked before the first epoch (not when the test metrics are
// computed after the last one).
void check_inputs(const Config& config, const Data& data, const TrainOptions& options) {
  tg::check<tg::ValueError>(!options.out_dir.empty(), "train: no output directory given");
  check_config(config);
  const TrainConfig& t = config.train;
  tg::check<tg::ValueError>(!data.train.empty() && !data.test.empty(), "train: {} training and {} test sentences; "
                            "need at least one of each (the test split holds every 5th sentence of each source)",
                            data.train.size(), data.test.size());
  tg::check<tg::ValueError>(data.vocab.size() > 2, "train: the vocabulary holds only <pad> and <unk>: no training "
                            "token occurs min_freq = {} times", t.min_freq);
  if (t.ensemble_data == EnsembleData::folds) {
    const int64_t k = config.model.ensemble;
    tg::check<tg::ValueError>(t.val_fraction == 0 && data.val.empty(), "train: ensemble_data 'folds' validates each "
                              "member on its own fold; val_fraction must be 0, got {} ({} validation sentences)",
                              t.val_fraction, data.val.size());
    tg::check<tg::ValueError>(int64_t(data.train.size()) >= k, "train: {} training sentences cannot make {} folds",
                              data.train.size(), k);
  }
}

// Rank 0's model directory, and its metrics.jsonl rewritten from the run's log: a resume drops the lines past
// its checkpoint. Each line is flushed and checked (a full disk is an error, never a short log).
void open_model_dir(const Run& r, std::optional<tg::train::JsonlLogger>& metrics) {
  if (!lead(r.options)) return;
  try {
    fs::create_directories(r.options.out_dir);
  } catch (const fs::filesystem_error& e) {
    throw tg::Error(fmt::format("train: cannot create the output directory '{}': {}", r.options.out_dir,
                                e.code().message()));
  }
  metrics.emplace((fs::path(r.options.out_dir) / "metrics.jsonl").string());
  for (const EpochLog& e : r.log) metrics->log(record(e));
}

}  // namespace

// The loop as in PyTorch: the data (prepare_data) in loaders, the model and its optimizer (Run); then per
// epoch the steps (train_epoch), validation, checkpoint and metrics (finish_epoch); then the model directory.
TrainResult train(Config config, const Data& data, const TrainOptions& options) {
  check_inputs(config, data, options);
  tg::manual_seed(options.seed);
  config.model.vocab_size = data.vocab.size();
  config.files = {data.file, config.model.lexicon_weight > 0 ? stamp_of(data.lexicon.text()) : FileStamp{}};
  tg::AnomalyGuard anomaly(options.detect_anomaly || tg::anomaly_mode_enabled());
  Run r(config, data, options);  // model, optimizer, schedule, loaders, checkpoint manager
  start(r);                      // resumed (refused before out_dir is made: it may be a file); the guard
  std::optional<tg::train::JsonlLogger> metrics;
  open_model_dir(r, metrics);
  while (r.epoch < config.train.epochs) {
    finish_epoch(r, metrics, train_epoch(r));
    if (options.on_epoch_end && !options.on_epoch_end(r.log.back())) break;
  }
  return finish(r);
}

namespace {

// lexicon.tsv, refused unless it is the file saved with the model (config.json's files.lexicon; not checked for
// models from before it was kept).
Lexicon load_lexicon(const fs::path& d, const std::string& dir, const FileStamp& saved) {
  tg::check<tg::ValueError>(fs::exists(d / "lexicon.tsv"), "model directory '{}' has no lexicon.tsv, which its "
                            "config.json asks for (model.lexicon_weight)", dir);
  const std::string path = (d / "lexicon.tsv").string();
  const std::string text = tg::read_file(path, Lexicon::kMaxBytes, "load_model");
  const FileStamp here = stamp_of(text);
  tg::check<tg::ValueError>(saved == FileStamp{} || here == saved, "model directory '{}': lexicon.tsv is not the one "
                            "saved with the model (truncated or replaced?): {} here, {} in config.json", dir, here.str(),
                            saved.str());
  return Lexicon::parse(text, path);
}

// model.safetensors, read and checked against the config before the model is built: a config of absurd sizes
// (num_layers 1000 with two layers' weights) allocates nothing. The file may hold f64 weights, hence 8 bytes each.
tg::Safetensors load_weights(const fs::path& d, const std::string& dir, const ModelConfig& c) {
  const int64_t expected = int64_t(parameter_count(c));  // <= kMaxParameters: check_model_config passed
  tg::Safetensors file;
  try {
    file = tg::load_safetensors((d / "model.safetensors").string(), expected * 8 + (int64_t(1) << 20));
  } catch (const tg::Error& e) {
    throw tg::ValueError(fmt::format("model directory '{}': cannot load model.safetensors: {}", dir, e.what()));
  }
  int64_t held = 0;
  for (const auto& [name, t] : file.tensors) held += t.numel();
  tg::check<tg::ValueError>(held == expected, "model directory '{}': model.safetensors holds {} parameters, but the "
                            "model of config.json has {} (d_model {}, num_layers {}, dim_feedforward {}, ensemble {})",
                            dir, held, expected, c.d_model, c.num_layers, c.dim_feedforward, c.ensemble);
  return file;
}

}  // namespace

LoadedModel load_model(const std::string& path) {
  const fs::path d(path);
  const std::string dir = tg::escape_bytes(path, path.size());  // for messages: binary bytes escaped, in full
  tg::check<tg::ValueError>(fs::is_directory(d), "model directory '{}' does not exist or is not a directory (train "
                            "one with `sentiment train --out {}`)", dir, dir);
  tg::check<tg::ValueError>(fs::exists(d / "vocab.txt") || !fs::exists(d / "vocab.json"), "model directory '{}' holds "
                            "a GPT (vocab.json, no vocab.txt), not a sentiment classifier: use the `gpt` program for it",
                            dir);
  for (const char* f : {"config.json", "vocab.txt", "model.safetensors"}) {
    tg::check<tg::ValueError>(fs::exists(d / f), "model directory '{}' has no {} (train one with `sentiment train "
                              "--out {}`)", dir, f, dir);
    tg::check<tg::ValueError>(!fs::is_directory(d / f), "model directory '{}': {} is a directory, expected a file",
                              dir, f);
  }
  LoadedModel m;
  try {
    const std::string text = tg::read_file((d / "config.json").string(), examples::kMaxConfigBytes, "load_model");
    m.config = nlohmann::json::parse(text).get<Config>();
    check_model_config(m.config.model);
  } catch (const nlohmann::json::exception& e) {
    throw tg::ValueError(fmt::format("model directory '{}': config.json is not valid JSON: {}", dir,
                                     tg::escape_bytes(e.what())));
  } catch (const tg::ValueError& e) {  // unreadable, or valid JSON with a field missing, mistyped or out of range
    throw tg::ValueError(fmt::format("model directory '{}': config.json: {}", dir, e.what()));
  }
  m.vocab = Vocab::load((d / "vocab.txt").string());
  tg::check<tg::ValueError>(m.vocab.size() == m.config.model.vocab_size,
                            "model directory '{}': vocab.txt has {} tokens but config.json says {}", dir, m.vocab.size(),
                            m.config.model.vocab_size);
  if (m.config.model.lexicon_weight > 0) m.lexicon = load_lexicon(d, dir, m.config.files.lexicon);
  const tg::Safetensors weights = load_weights(d, dir, m.config.model);
  m.model = std::make_unique<Classifier>(m.config.model);
  try {  // the layer's errors name the tensor and both shapes, but not the file
    m.model->load_state_dict(weights.tensors, true);
  } catch (const tg::Error& e) {
    throw tg::ValueError(fmt::format("model directory '{}': cannot load model.safetensors: {}", dir, e.what()));
  }
  // A NaN or inf weight makes every prediction NaN (or an arbitrary class): refused here rather than
  // reported as a confident "negative".
  for (const auto& [name, t] : m.model->state_dict())
    tg::check<tg::ValueError>(tg::all_finite(t), "model directory '{}': "
                              "model.safetensors holds NaN or inf in '{}' {}", dir, name, t.shape());
  m.model->eval();
  return m;
}

}  // namespace sentiment
