// `gpt`: train a byte-level GPT on the fortunes corpus, sample from it (streaming, with the KV cache) and
// measure its bits per byte. Flags, model directory, checkpoints and exit codes follow the sentiment
// program's: 0 on success, 1 with "error: ..." for bad input found at run time or a failed write (to stdout
// too), CLI11's codes (105 for a bad flag value) for a bad command line.
#include <CLI/CLI.hpp>
#include <fmt/ranges.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <numbers>
#include <thread>

#include "cli.h"
#include "export_onnx.h"
#include "files.h"
#include "train.h"

using namespace gpt;
namespace fs = std::filesystem;

namespace {

constexpr int64_t kMaxTokens = 100'000;  // more is a mistake, not a sample to read

Config load_config(const std::string& name_or_path) {
  return examples::load_config<Config>(name_or_path, config_by_name);
}

// splits.txt beside the corpus, unless given.
std::string splits_for(const std::string& corpus, const std::string& splits) {
  return splits.empty() ? (fs::path(corpus).parent_path() / "splits.txt").string() : splits;
}

struct TrainInputs {
  std::string data, splits, config;
  int64_t steps = 0;  // 0: the configuration's max_steps
  uint64_t seed = 0;
  bool data_given = false, config_given = false, seed_given = false;
};

int run_train(TrainInputs in, TrainOptions o) {
  Config config;
  if (o.resume) {  // what was not given is the checkpoint's; the checkpoint refuses anything else
    check_model_dir(o.out_dir);
    RunRecord r = read_run_record(o.out_dir);
    config = in.config_given ? load_config(in.config) : r.config;
    if (!in.data_given) in.data = r.corpus_path, in.splits = r.splits_path;
    if (!in.seed_given) in.seed = r.seed;
  } else {
    config = load_config(in.config);
  }
  if (in.steps > 0) config.train.max_steps = in.steps;
  check_config(config);  // before the data is read
  o.seed = in.seed;
  const bool lead = o.parallel == nullptr || o.parallel->rank() == 0;  // rank 0 alone prints
  tg::check_blas();  // refuses a BLAS core that computes wrong products; warns of a slow one
  if (const tg::BlasInfo b = tg::blas_info(); !b.warning.empty() && lead) fmt::print(stderr, "warning: {}\n", b.warning);
  const Data d = prepare_data(in.data, splits_for(in.data, in.splits));
  if (!lead) {
    train(config, d, o);
    return 0;
  }
  if (o.parallel)
    fmt::print("data-parallel: {} ranks (mpirun), each a share of the {}-window batch\n", o.parallel->world_size(),
               config.train.batch_size);
  fmt::print("data {}: {} training, {} validation, {} test bytes; vocabulary {} bytes\n", d.corpus_path, d.train.size(),
             d.valid.size(), d.test.size(), d.vocab.size());
  const ModelConfig& m = config.model;
  const TrainConfig& t = config.train;
  fmt::print("config '{}': block {}, d_model {}, {} heads, {} layers, {} steps of {} x {} bytes, {}, seed {}\n",
             config.name, m.block_size, m.d_model, m.num_heads, m.num_layers, t.max_steps, t.batch_size, m.block_size,
             t.muon_lr > 0 ? fmt::format("Muon (lr {}) and AdamW (lr {})", t.muon_lr, t.lr)
                           : fmt::format("AdamW (lr {})", t.lr), o.seed);
  TrainResult r = train(config, d, o);
  std::vector<std::string> checkpoints;
  for (const fs::path& f : checkpoint_files(o.out_dir)) checkpoints.push_back(f.filename().string());
  fmt::print("best validation: {:.4f} bits per byte at step {}\nmodel written to {}/ (model.safetensors, vocab.json, "
             "config.json, metrics.jsonl, learning_curve.svg, {})\n", r.best_valid_bpc, r.best_step, o.out_dir,
             fmt::join(checkpoints, ", "));
  return 0;
}

// run_train under mpirun when launched by it: an error on one rank is printed with its rank, then ends the
// whole job (the others would wait for it in a collective).
int train_command(const TrainInputs& in, TrainOptions o) {
  const std::unique_ptr<Parallel> parallel = start_parallel();
  if (parallel == nullptr) return run_train(in, o);
  o.parallel = parallel.get();
  const int status = examples::run_checked([&] {
    try {
      return run_train(in, o);
    } catch (const std::exception& e) {
      throw tg::Error(fmt::format("rank {} of {}: {}", parallel->rank(), parallel->world_size(), e.what()));
    }
  });
  if (status != 0) parallel->abort(status);
  return status;
}

// The logits of the first (up to) 4 non-overlapping windows of the separator + stream, with their tokens,
// as JSON {"tokens": [[...]], "logits": [[[...]]]} (f32 values, exact in JSON's doubles): for torch_check.py.
void write_logits(Gpt& model, const Data& d, const std::vector<int64_t>& stream, const std::string& path) {
  std::vector<int64_t> ctx = d.separator;
  ctx.insert(ctx.end(), stream.begin(), stream.end());
  const int64_t T = std::min(model.config().block_size, int64_t(ctx.size())), B = std::min<int64_t>(4, int64_t(ctx.size()) / T);
  const std::vector<int64_t> tokens(ctx.begin(), ctx.begin() + B * T);
  tg::NoGradGuard no_grad;
  const tg::Tensor logits = model.forward(tg::index_tensor(tokens, {B, T})).value();  // (B, T, V)
  nlohmann::json j = {{"tokens", nlohmann::json::array()}, {"logits", nlohmann::json::array()}};
  const std::vector<float> v = logits.to_vector<float>();
  const int64_t V = logits.size(2);
  for (int64_t b = 0; b < B; ++b) {
    j["tokens"].push_back(std::vector<int64_t>(tokens.begin() + b * T, tokens.begin() + (b + 1) * T));
    nlohmann::json rows = nlohmann::json::array();
    for (int64_t t = 0; t < T; ++t) rows.push_back(std::vector<float>(v.begin() + (b * T + t) * V, v.begin() + (b * T + t + 1) * V));
    j["logits"].push_back(rows);
  }
  write_text(path, j.dump() + "\n");
  fmt::print("logits of {} windows of {} bytes written to {}\n", B, T, path);
}

int run_eval(const std::string& dir, std::string data, std::string splits, const std::string& split,
             const std::string& logits_path) {
  LoadedModel m = load_model(dir);
  if (data.empty()) {  // the corpus the model was trained on, else the bundled one
    try {
      RunRecord r = read_run_record(dir);
      data = r.corpus_path, splits = r.splits_path;
    } catch (const tg::Error& e) {
      data = GPT_DEFAULT_DATA;
      fmt::print(stderr, "warning: {}; evaluating on {}\n", e.what(), data);
    }
  }
  const Data d = prepare_data(data, splits_for(data, splits), m.vocab);
  const std::vector<int64_t>& stream = split == "test" ? d.test : d.valid;
  tg::check<tg::ValueError>(!stream.empty(), "eval: corpus '{}' has no {} documents", data, split);
  const int64_t stride = m.config.train.eval_stride;
  const double bpc = bits_per_byte(*m.model, d, stream, stride);
  fmt::print("{} ({} split, {} bytes): {:.4f} bits per byte (loss {:.4f} nats per byte); each byte predicted from at "
             "least {} bytes of context\n", d.corpus_path, split, stream.size(), bpc, bpc * std::numbers::ln2,
             m.config.model.block_size - stride);
  if (!logits_path.empty()) write_logits(*m.model, d, stream, logits_path);
  return 0;
}

struct SampleOptions {
  std::string prompt;
  int64_t tokens = 400;
  uint64_t seed = 0;
  tg::nn::SamplingOptions sampling{.temperature = 0.8};
};

// The next-token logits for generate(): runs the tokens not yet in the KV cache; when they would not fit
// in the context, starts the cache again from the last half context (the prompt: its last block_size bytes).
tg::nn::NextLogits cached_logits(Gpt& model, std::vector<tg::nn::KVCache>& cache) {
  auto fed = std::make_shared<int64_t>(0);  // tokens whose keys are in the cache
  return [&model, &cache, fed](std::span<const int64_t> tokens, int64_t) {
    const int64_t n = int64_t(tokens.size()), block = model.config().block_size;
    int64_t in_cache = cache.front().length();
    if (in_cache + n - *fed > block) {
      for (tg::nn::KVCache& c : cache) c.clear();
      *fed = n - std::min(n, in_cache == 0 ? block : std::max<int64_t>(block / 2, 1)), in_cache = 0;
    }
    const std::vector<int64_t> todo(tokens.begin() + *fed, tokens.end());
    tg::Tensor logits = model.forward(tg::index_tensor(todo, {1, int64_t(todo.size())}), in_cache, cache).value();
    *fed = n;
    return logits.select(0, 0).select(0, int64_t(todo.size()) - 1);  // (V)
  };
}

int run_sample(const std::string& dir, const SampleOptions& o) {
  LoadedModel m = load_model(dir);
  tg::check<tg::ValueError>(o.sampling.top_k <= m.vocab.size(), "sample: --top-k {} is more than the vocabulary's {} "
                            "bytes (0 keeps all)", o.sampling.top_k, m.vocab.size());
  // The model reads a new document: the separator first (what precedes every document), then the prompt.
  std::vector<int64_t> tokens = m.vocab.encode(kSeparator, "separator");
  const std::vector<int64_t> prompt = m.vocab.encode(o.prompt, "sample: --prompt");
  tokens.insert(tokens.end(), prompt.begin(), prompt.end());
  std::vector<tg::nn::KVCache> cache(size_t(m.config.model.num_layers));
  tg::Generator gen(o.seed);
  fmt::print("{}", o.prompt);
  examples::flush_stdout();  // each byte as it comes; a failed write (a full disk, a closed pipe) stops here
  tg::nn::generate(cached_logits(*m.model, cache), tokens, {.max_new_tokens = o.tokens, .sampling = o.sampling}, gen,
                   [&](int64_t id) {
                     fmt::print("{}", m.vocab.decode(id));
                     examples::flush_stdout();
                   });
  fmt::print("\n");
  return 0;
}

// More threads than cores is allowed (as torch.set_num_threads allows it) but only slows the kernels down.
void set_threads(int n) {
  tg::set_num_threads(n);
  const unsigned cores = std::thread::hardware_concurrency();  // 0 when unknown
  if (cores > 0 && unsigned(n) > cores)
    fmt::print(stderr, "warning: --threads {} is more than the {} cores of this machine: slower, not faster\n", n, cores);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Train a byte-level GPT on the fortunes corpus and sample from it (tensorgrad example)"};
  app.require_subcommand(1);
  TrainInputs in{.data = GPT_DEFAULT_DATA, .config = "default"};
  TrainOptions topt;
  std::string out = "runs/gpt", resume_dir, on_nonfinite = "stop", model, eval_data, eval_splits, split = "test";
  SampleOptions sopt;
  int threads = 0;
  auto* train = app.add_subcommand("train", "train a GPT and write a model directory");
  train->add_option("--data", in.data, "the corpus: documents each followed by a line '%' (UTF-8 text)")
      ->capture_default_str();
  train->add_option("--splits", in.splits, "one line per document: train, valid or test (default: splits.txt beside "
                    "--data)");
  train->add_option("--config", in.config, "default | path to a config.json")->capture_default_str();
  train->add_option("--steps", in.steps, "override the configuration's max_steps (the schedule stays the "
                    "configuration's)")->check(number_in<int64_t>(1, kMaxSteps));
  train->add_option("--seed", in.seed, "random seed (weights, dropout, batches)")
      ->check(number_in<uint64_t>(0, UINT64_MAX))->capture_default_str();
  auto* out_opt = train->add_option("--out", out, "model directory to write")->capture_default_str();
  train->add_option("--resume", resume_dir, "continue the run in this model directory from its newest checkpoint "
                    "(written at every eval interval); --data, --config and --seed default to the checkpoint's and "
                    "must match it, --steps may extend the run")->excludes(out_opt);
  train->add_option("--on-nonfinite", on_nonfinite, "when a step's loss or gradient is NaN or inf: stop, or rollback "
                    "to the last evaluation's state with a lower learning rate")
      ->check(CLI::IsMember({"stop", "rollback"}))->capture_default_str();
  train->add_option("--rollback-factor", topt.rollback_factor, "the learning rate's factor per rollback")
      ->check(number_in<double>(0, 1, true, true))->capture_default_str();
  train->add_option("--max-rollbacks", topt.max_rollbacks, "rollbacks before giving up")
      ->check(number_in<int64_t>(0, 1000))->capture_default_str();
  train->add_flag("--detect-anomaly", topt.detect_anomaly, "stop at the first op giving NaN or inf, naming it (slower)");
  auto* sample = app.add_subcommand("sample", "generate text after a prompt, printed as it is generated");
  sample->add_option("--model", model, "model directory")->required();
  sample->add_option("--prompt", sopt.prompt, "the text to continue (default: none, a new document); characters "
                     "outside the model's vocabulary are refused, naming them");
  sample->add_option("--tokens", sopt.tokens, "bytes to generate")->check(number_in<int64_t>(1, kMaxTokens))
      ->capture_default_str();
  sample->add_option("--temperature", sopt.sampling.temperature, "logits / T before sampling; below 1 is more "
                     "conservative (--top-k 1 is greedy)")->check(number_in<double>(0, 100, true))->capture_default_str();
  sample->add_option("--top-k", sopt.sampling.top_k, "sample among the K most likely bytes (0: all)")
      ->check(number_in<int64_t>(0, 256))->capture_default_str();
  sample->add_option("--top-p", sopt.sampling.top_p, "sample among the most likely bytes of total probability P "
                     "(nucleus sampling; 1: all)")->check(number_in<double>(0, 1, true))->capture_default_str();
  sample->add_option("--seed", sopt.seed, "random seed: the same seed gives the same text")
      ->check(number_in<uint64_t>(0, UINT64_MAX))->capture_default_str();
  auto* eval = app.add_subcommand("eval", "bits per byte on the test split (every byte of it predicted once)");
  eval->add_option("--model", model, "model directory")->required();
  eval->add_option("--data", eval_data, "the corpus (default: the one the model was trained on, as its checkpoint "
                   "records it, else the bundled one)");
  eval->add_option("--splits", eval_splits, "its splits file (default: splits.txt beside the corpus)");
  std::string logits;
  eval->add_option("--logits", logits, "also write the logits of the split's first 4 windows as JSON (torch_check.py)");
  eval->add_option("--split", split, "the part to score")->check(CLI::IsMember({"test", "valid"}))->capture_default_str();
  ExportArgs export_args;
  CLI::App* export_onnx = add_export_command(app, export_args);
  for (CLI::App* a : {&app, train, sample, eval, export_onnx})
    a->add_option("--threads", threads, fmt::format("threads for kernels and BLAS, at most {} (default: all cores)",
                  tg::kMaxThreads))->check(number_in<int>(1, tg::kMaxThreads));
  CLI11_PARSE(app, argc, argv);
  return examples::run_checked([&] {
    if (threads > 0) set_threads(threads);
    if (*train) {
      topt.out_dir = resume_dir.empty() ? out : resume_dir, topt.resume = !resume_dir.empty();
      topt.on_nonfinite = on_nonfinite == "rollback" ? tg::train::OnNonFinite::rollback : tg::train::OnNonFinite::stop;
      in.data_given = train->count("--data") > 0, in.config_given = train->count("--config") > 0;
      in.seed_given = train->count("--seed") > 0;
      return train_command(in, topt);
    }
    if (*sample) return run_sample(model, sopt);
    if (*export_onnx) return run_export(export_args);
    return run_eval(model, eval_data, eval_splits, split, logits);
  });
}
