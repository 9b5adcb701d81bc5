// `gpt export --model DIR --out model.onnx [--cases cases.json --data CORPUS]`: the GPT as an ONNX model with
// input tokens (B, T) i64 and output logits (B, T, V), B and T dynamic (T up to block_size: the position table
// has no more rows), without a KV cache: Gpt::forward (model.cpp) at start 0, written with tg::onnx's emitters.
// --cases adds windows of the validation split with our logits, for tools/onnx_check.sh.
#include "export_onnx.h"

#include <algorithm>
#include <filesystem>

#include "train.h"

#ifdef GPT_ONNX
#include <tensorgrad/onnx/cases.h>
#include <tensorgrad/onnx/export.h>
#include <tensorgrad/onnx/layers.h>
#endif

namespace gpt {

CLI::App* add_export_command(CLI::App& app, ExportArgs& args) {
  CLI::App* cmd = app.add_subcommand("export", "write a model directory as an ONNX model (opset 17) for onnxruntime");
  cmd->add_option("--model", args.model, "model directory")->required();
  cmd->add_option("--out", args.out, "ONNX file to write")->capture_default_str();
  cmd->add_option("--cases", args.cases, "also write windows of the validation split and our logits as JSON, for "
                  "tools/onnx_check.sh");
  args.data = GPT_DEFAULT_DATA;
  cmd->add_option("--data", args.data, "the corpus whose validation split --cases reads (its splits.txt beside it)")
      ->capture_default_str();
  return cmd;
}

#ifndef GPT_ONNX
int run_export(const ExportArgs&) {
  throw tg::Error("export: this build has no ONNX export (install libonnx-dev and libprotobuf-dev, and reconfigure)");
}
#else
namespace {

namespace ox = tg::onnx;

// Gpt::forward: token rows + position rows, the causal decoder, logits through the tied token embedding.
std::string gpt_graph(ox::GraphBuilder& g, Gpt& model, const std::string& tokens) {
  auto& embedding = ox::sublayer_as<tg::nn::Embedding>(model, "token_embedding");
  auto& position = ox::sublayer_as<tg::nn::LearnedPositionalEncoding>(model, "position");
  std::string x = ox::emit_embedding(g, embedding, "token_embedding.", tokens);                       // (B, T, E)
  std::string rows = g.op("Gather", {g.weight("position.weight", position.weight().value()),
                                     ox::positions(g, tokens, 1)}, {{"axis", int64_t(0)}});          // (T, E)
  x = ox::emit_decoder(g, ox::sublayer_as<tg::nn::Decoder>(model, "decoder"), "decoder.", g.op("Add", {x, rows}),
                       {.is_causal = true});
  std::string w = g.weight("token_embedding.weight", embedding.weight().value());  // the same initializer
  return g.op("MatMul", {x, g.op("Transpose", {w}, {{"perm", std::vector<int64_t>{1, 0}}})});  // (B, T, V)
}

// Batches of 1, 3 and 8 windows of the validation stream, of block_size, block_size / 2 + 1 and 5 bytes.
std::vector<ox::CheckCase> valid_cases(LoadedModel& m, const std::string& corpus) {
  const Data d = prepare_data(corpus, (std::filesystem::path(corpus).parent_path() / "splits.txt").string(), m.vocab);
  const int64_t block = m.config.model.block_size;
  tg::NoGradGuard no_grad;
  std::vector<ox::CheckCase> cases;
  int64_t at = 0;
  for (int64_t B : {1, 3, 8})
    for (int64_t T : {block, block / 2 + 1, std::min<int64_t>(5, block)}) {
      tg::check<tg::ValueError>(int64_t(d.valid.size()) >= B * T, "export: the validation split of '{}' has {} "
                                "bytes, fewer than {} windows of {}", corpus, d.valid.size(), B, T);
      std::vector<int64_t> ids;
      for (int64_t i = 0; i < B * T; ++i) ids.push_back(d.valid[size_t((at + i) % int64_t(d.valid.size()))]);
      at += B * T;
      tg::Tensor tokens = tg::index_tensor(ids, {B, T});
      cases.push_back({{tokens}, {m.model->forward(tokens).value()}});
    }
  return cases;
}

}  // namespace

int run_export(const ExportArgs& args) {
  LoadedModel m = load_model(args.model);
  const ox::ExportOptions options{.input_names = {"tokens"}, .output_names = {"logits"},
                                  .dynamic_axes = {{"tokens", {{0, "batch"}, {1, "sequence"}}},
                                                   {"logits", {{0, "batch"}, {1, "sequence"}}}}};
  ox::ModelFunctions fns{
      .forward = [&](const std::vector<tg::Tensor>& in) {
        return std::vector<tg::Tensor>{m.model->forward(in[0]).value()};
      },
      .graph = [&](ox::GraphBuilder& g, const std::vector<std::string>& in) {
        return std::vector<std::string>{gpt_graph(g, *m.model, in[0])};
      }};
  const int64_t V = m.config.model.vocab_size;
  const tg::Tensor example = tg::index_tensor({0, 1 % V, 2 % V, 1 % V, 0, 2 % V}, {2, 3});
  ox::export_model(*m.model, {example}, args.out, options, fns);
  fmt::print("{} written (opset {}, input tokens (batch, sequence <= {}), output logits (batch, sequence, {}))\n",
             args.out, options.opset, m.config.model.block_size, m.config.model.vocab_size);
  if (args.cases.empty()) return 0;
  m.model->eval();
  const std::vector<ox::CheckCase> cases = valid_cases(m, args.data);
  ox::write_cases(args.cases, options.input_names, options.output_names, cases);
  fmt::print("{} batches of the validation split of {} with our logits written to {}\n", cases.size(), args.data,
             args.cases);
  return 0;
}
#endif

}  // namespace gpt
