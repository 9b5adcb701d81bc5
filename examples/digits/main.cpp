// `digits`: train a small convolutional network on the UCI handwritten digits (8×8 pixels), then evaluate
// it and classify the images of a CSV file. Exit status: 0 done, 1 an error (one line on stderr naming
// the file or value at fault; a failed write, to stdout too), CLI11's codes (105, 106, ...) for a malformed command line.
#include <CLI/CLI.hpp>

#include <filesystem>
#include <limits>

#include "cli.h"
#include "files.h"
#include "report.h"
#include "train.h"

using namespace digits;
namespace fs = std::filesystem;

namespace {

// What train reads, and which of it came from the command line.
struct TrainArgs {
  std::string data = DIGITS_DEFAULT_DATA, config = "default", out = "runs/digits", resume;
  int64_t epochs = 0, seed = 0;  // epochs 0: the configuration's
  bool data_given = false;
};

void print_pictures(const std::vector<std::string>& paths) {
  fmt::print("pictures: {} (first-layer filters), {} (misclassified digits)\n", paths.at(0), paths.at(1));
}

int run_train(const TrainArgs& a) {
  TrainOptions o{.out_dir = a.resume.empty() ? a.out : a.resume, .resume = !a.resume.empty(), .seed = uint64_t(a.seed)};
  Config config;
  std::string data = a.data;
  if (o.resume) {  // the configuration, seed and data the run started with (config.json), checked against the checkpoint
    RunInfo info = load_run_info(o.out_dir);
    config = info.config, o.seed = info.seed;
    if (!a.data_given) data = info.data;
  } else {
    config = load_config(a.config);
  }
  if (a.epochs > 0) config.train.epochs = a.epochs;
  check_config(config);  // before the data is read
  const Split split = read_split(data);
  fmt::print("data {}: {} training, {} validation, {} test images\n", split.dir, split.train.size(), split.valid.size(),
             split.test.size());
  const ModelConfig& m = config.model;
  const TrainConfig& t = config.train;
  fmt::print("config '{}': filters {} and {}, dropout {}; {} epochs of batches of {}, AdamW lr {} ({}), weight decay {}; "
             "seed {}\n", config.name, m.channels1, m.channels2, m.dropout, t.epochs, t.batch_size, t.lr, t.schedule,
             t.weight_decay, o.seed);
  TrainResult r = train(config, split, o);
  const Evaluation e = evaluate(*r.model, split.test);
  fmt::print("\ntest set ({} images): {}", split.test.size(), format_evaluation(e));
  print_pictures(write_pictures(*r.model, split.test, e, o.out_dir, config.name));
  fmt::print("model written to {}/ (config.json, model.safetensors, metrics.csv, learning_curve.svg, "
             "checkpoint-{}.safetensors)\n", o.out_dir, t.epochs);
  return 0;
}

int run_eval(const std::string& dir, const std::string& csv, const std::string& draw_dir) {
  auto [model, info] = load_model(dir);
  const std::string path = csv.empty() ? (fs::path(info.data) / "test.csv").string() : csv;
  if (csv.empty()) fmt::print("data: {}, the test split of the data the model was trained on (--csv overrides)\n", path);
  const Images images = read_images(path, Labels::required);
  const Evaluation e = evaluate(*model, images);
  fmt::print("{} ({} images): {}", path, images.size(), format_evaluation(e));
  if (!draw_dir.empty()) print_pictures(write_pictures(*model, images, e, draw_dir, info.config.name));
  return 0;
}

// One line per image, in file order: its row, the most probable digit and its probability, and the label
// when the file has them.
int run_predict(const std::string& dir, const std::string& csv) {
  auto [model, info] = load_model(dir);
  const Images images = read_images(csv, Labels::optional);
  const tg::Tensor proba = predict_proba(*model, images.pixels);  // (N, 10)
  const std::vector<int64_t> best = tg::argmax(proba, 1).to_vector<int64_t>();
  const std::vector<double> p = proba.to_vector<double>();
  const bool labelled = images.labels.defined();
  const std::vector<int64_t> labels = labelled ? images.labels.to_vector<int64_t>() : std::vector<int64_t>();
  fmt::print("row  digit  probability{}\n", labelled ? "  label" : "");
  for (size_t i = 0; i < best.size(); ++i)
    fmt::print("{:>3}  {:>5}  {:>11.4f}{}\n", i + 1, best[i], p[i * kClasses + size_t(best[i])],
               labelled ? fmt::format("  {:>5}{}", labels[i], labels[i] == best[i] ? "" : "  wrong") : "");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Train and use a convolutional network on the UCI handwritten digits (tensorgrad example)"};
  app.require_subcommand(1);
  TrainArgs t;
  std::string model, csv, draw_dir;
  int threads = 0;
  auto* train = app.add_subcommand("train", "train a network and write a model directory");
  auto* data_opt = train->add_option("--data", t.data, "directory holding train.csv, valid.csv and test.csv")
      ->capture_default_str();
  auto* config_opt = train->add_option("--config", t.config, "default | tiny | path to a JSON file")->capture_default_str();
  train->add_option("--epochs", t.epochs, "override the configuration's epoch count")->check(number_in<int64_t>(1, 1000000));
  auto* seed_opt = train->add_option("--seed", t.seed, "random seed (weights, dropout, batch order)")
      ->check(number_in<int64_t>(0, std::numeric_limits<int64_t>::max()))->capture_default_str();
  auto* out_opt = train->add_option("--out", t.out, "model directory to write")->capture_default_str();
  train->add_option("--resume", t.resume, "continue the run in this model directory from its newest checkpoint "
                    "(written after every epoch): its configuration and seed, and its data unless --data is given "
                    "(the same data); --epochs may extend the run")
      ->excludes(out_opt)->excludes(config_opt)->excludes(seed_opt);
  auto* eval = app.add_subcommand("eval", "accuracy and confusion matrix on labelled images");
  eval->add_option("--model", model, "model directory")->required();
  eval->add_option("--csv", csv, "labelled CSV file (default: test.csv of the data the model was trained on)");
  eval->add_option("--draw", draw_dir, "also write filters.svg and misclassified.svg into this directory");
  auto* predict = app.add_subcommand("predict", "the digit and its probability for each image of a CSV file");
  predict->add_option("--model", model, "model directory")->required();
  predict->add_option("csv", csv, "CSV file: 64 pixels (0..16) per line, optionally a label")->required();
  for (CLI::App* a : {&app, train, eval, predict})  // before or after the subcommand
    a->add_option("--threads", threads, "threads for the kernels (default: all cores)")
        ->check(number_in<int64_t>(1, tg::kMaxThreads));
  CLI11_PARSE(app, argc, argv);
  return examples::run_checked([&] {
    if (threads > 0) tg::set_num_threads(threads);
    if (*train) {
      t.data_given = data_opt->count() > 0;
      return run_train(t);
    }
    if (*eval) return run_eval(model, csv, draw_dir);
    return run_predict(model, csv);
  });
}
