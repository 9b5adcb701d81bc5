// `sentiment export --model DIR --out model.onnx [--cases cases.json --data FILE]`: the classifier as an ONNX
// model with inputs tokens (B, S) i64, pad_mask (B, S) bool and, with sub-words, subwords (B, S, N) i64, and
// output logits (B, num_classes); B, S and N are dynamic. Network::forward (model.cpp) written in ONNX ops with
// tg::onnx's layer emitters (an lstm or gru network as ONNX's LSTM or GRU over each sentence's length); --cases adds the test split in batches of several sizes with our logits, for
// tools/onnx_check.sh to compare onnxruntime's with.
#include "export_onnx.h"

#include <cmath>

#include <fmt/ranges.h>

#include "train.h"

#ifdef SENTIMENT_ONNX
#include <tensorgrad/onnx/cases.h>
#include <tensorgrad/onnx/export.h>
#include <tensorgrad/onnx/layers.h>
#endif

namespace sentiment {

CLI::App* add_export_command(CLI::App& app, ExportArgs& args) {
  CLI::App* cmd = app.add_subcommand("export", "write a model directory as an ONNX model (opset 17) for onnxruntime");
  cmd->add_option("--model", args.model, "model directory")->required();
  cmd->add_option("--out", args.out, "ONNX file to write")->capture_default_str();
  cmd->add_option("--cases", args.cases, "also write the test split's batches and our logits as JSON, for "
                  "tools/onnx_check.sh");
  args.data = SENTIMENT_DEFAULT_DATA;
  cmd->add_option("--data", args.data, "TSV/CSV whose test split --cases writes")->capture_default_str();
  return cmd;
}

#ifndef SENTIMENT_ONNX
int run_export(const ExportArgs&) {
  throw tg::Error("export: this build has no ONNX export (install libonnx-dev and libprotobuf-dev, and reconfigure)");
}
#else
namespace {

namespace ox = tg::onnx;
using ox::GraphBuilder;

struct Inputs {
  std::string tokens, pad_mask, subwords;
};

// embed(): token rows, plus the sub-word bag (embedding_bag without the padding bucket 0) and its mean, plus
// the position rows, then the embedding LayerNorm.
std::string embed(GraphBuilder& g, Network& net, const ModelConfig& c, const std::string& prefix, const Inputs& in) {
  std::string x = ox::emit_embedding(g, ox::sublayer_as<tg::nn::Embedding>(net, "token_embedding"),
                                     prefix + "token_embedding.", in.tokens);           // (B, S, D)
  if (c.subword_buckets > 0) {
    auto& sub = ox::sublayer_as<tg::nn::Embedding>(net, "subword_embedding");
    std::string real = g.op("Not", {g.op("Equal", {in.subwords, g.scalar(0, tg::i64)})});
    real = g.op("Cast", {real}, {{"to", int64_t(ox::element_type(g.float_dtype()))}});  // (B, S, N)
    std::string rows = ox::emit_embedding(g, sub, prefix + "subword_embedding.", in.subwords);  // (B, S, N, D)
    x = g.op("Add", {x, ox::reduce_sum(g, g.op("Mul", {rows, ox::unsqueeze(g, real, {3})}), {2}, false)});
    if (c.subword_combine == SubwordCombine::mean)
      x = g.op("Div", {x, g.op("Add", {ox::reduce_sum(g, real, {2}, true), g.scalar(1, g.float_dtype())})});
  }
  if (c.positional == Positional::learned) {
    std::string rows = ox::emit_embedding(g, ox::sublayer_as<tg::nn::Embedding>(net, "position_embedding"),
                                          prefix + "position_embedding.", ox::positions(g, in.tokens, 1));  // (S, D)
    x = g.op("Add", {x, rows});
  }
  if (!c.embedding_norm) return x;
  return ox::emit_layer_norm(g, ox::sublayer_as<tg::nn::LayerNorm>(net, "embedding_norm"), prefix + "embedding_norm.", x);
}

// pool(): the mean and/or the max over the real tokens, (B, S, D) -> (B, D) or (B, 2D).
std::string pool(GraphBuilder& g, const ModelConfig& c, const std::string& h, const std::string& pad_mask) {
  const std::string pad = ox::unsqueeze(g, pad_mask, {2});  // (B, S, 1)
  std::string max = g.op("ReduceMax", {g.op("Where", {pad, g.scalar(-1e9, g.float_dtype()), h})},
                         {{"axes", std::vector<int64_t>{1}}, {"keepdims", int64_t(0)}});
  if (c.pooling == Pooling::max) return max;
  std::string keep = g.op("Cast", {g.op("Not", {pad})}, {{"to", int64_t(ox::element_type(g.float_dtype()))}});
  std::string mean = g.op("Div", {ox::reduce_sum(g, g.op("Mul", {h, keep}), {1}, false),
                                  ox::reduce_sum(g, keep, {1}, false)});
  return c.pooling == Pooling::mean_max ? g.op("Concat", {mean, max}, {{"axis", int64_t(1)}}) : mean;
}

// Each sentence's length (B) i32, its real tokens: the pad mask is true after them.
std::string lengths(GraphBuilder& g, const std::string& pad_mask) {
  std::string real = g.op("Cast", {g.op("Not", {pad_mask})}, {{"to", int64_t(ox::element_type(tg::i64))}});
  return g.op("Cast", {ox::reduce_sum(g, real, {1}, false)}, {{"to", int64_t(::onnx::TensorProto_DataType_INT32)}});
}

std::string network(GraphBuilder& g, Network& net, const ModelConfig& c, const std::string& prefix, const Inputs& in) {
  const std::string x = embed(g, net, c, prefix, in);  // (B, S, D)
  std::string h = c.architecture == Architecture::transformer
                      ? ox::emit_encoder(g, ox::sublayer_as<tg::nn::Encoder>(net, "encoder"), prefix + "encoder.", x,
                                         {.key_padding_mask = in.pad_mask})
                      : ox::emit_rnn(g, ox::sublayer_as<tg::nn::RNNBase>(net, "rnn"), prefix + "rnn.", x,
                                     lengths(g, in.pad_mask));
  return ox::emit_dense(g, ox::sublayer_as<tg::nn::Dense>(net, "classifier"), prefix + "classifier.",
                        pool(g, c, h, in.pad_mask));
}

// Classifier::combine: log(mean_k softmax(logits_k)) = logsumexp_k(log_softmax(logits_k)) - log K.
std::string classifier(GraphBuilder& g, Classifier& model, const Inputs& in) {
  const int64_t K = model.num_members();
  if (K == 1) return network(g, model.member(0), model.config(), "", in);
  std::vector<std::string> log_probs;
  for (int64_t k = 0; k < K; ++k) {
    std::string logits = network(g, model.member(k), model.config(), fmt::format("members.{}.", k), in);
    log_probs.push_back(ox::unsqueeze(g, g.op("LogSoftmax", {logits}, {{"axis", int64_t(1)}}), {0}));
  }
  std::string lse = g.op("ReduceLogSumExp", {g.op("Concat", log_probs, {{"axis", int64_t(0)}})},
                         {{"axes", std::vector<int64_t>{0}}, {"keepdims", int64_t(0)}});
  return g.op("Sub", {lse, g.scalar(std::log(double(K)), g.float_dtype())});
}

std::vector<tg::Tensor> batch_inputs(const Batch& b, bool subwords) {
  if (!subwords) return {b.tokens, b.pad_mask};
  return {b.tokens, b.pad_mask, b.subwords};
}

std::vector<Encoded> encode_for(const LoadedModel& m, const std::vector<Example>& examples) {
  return encode_all(examples, m.vocab, m.config.model.max_len, m.config.model.subword_buckets,
                    m.config.model.lexicon_weight > 0 ? &m.lexicon : nullptr, m.config.model.lexicon_weight);
}

// The test split in batches of 1, 2, 5, 16 and 32 sentences in turn (each padded to its longest), with our logits.
std::vector<ox::CheckCase> test_cases(LoadedModel& m, const std::string& data, bool subwords) {
  const std::vector<Encoded> test = encode_for(m, split_reference(read_examples(data)).test);
  tg::check<tg::ValueError>(!test.empty(), "export: '{}' holds no test sentences", data);
  tg::NoGradGuard no_grad;
  m.model->eval();
  std::vector<ox::CheckCase> cases;
  const int64_t sizes[] = {1, 2, 5, 16, 32};
  for (int64_t start = 0, i = 0; start < int64_t(test.size()); ++i) {
    std::vector<int64_t> rows;
    for (int64_t r = start; r < std::min<int64_t>(start + sizes[i % 5], int64_t(test.size())); ++r) rows.push_back(r);
    start += int64_t(rows.size());
    Batch b = make_batch(test, rows);
    cases.push_back({batch_inputs(b, subwords), {m.model->forward(b.tokens, b.pad_mask, b.subwords).value()}});
  }
  return cases;
}

}  // namespace

int run_export(const ExportArgs& args) {
  LoadedModel m = load_model(args.model);
  const bool subwords = m.config.model.subword_buckets > 0;
  ox::ExportOptions options{.input_names = {"tokens", "pad_mask"}, .output_names = {"logits"},
                            .dynamic_axes = {{"tokens", {{0, "batch"}, {1, "sequence"}}},
                                             {"pad_mask", {{0, "batch"}, {1, "sequence"}}},
                                             {"logits", {{0, "batch"}}}}};
  if (subwords) {
    options.input_names.push_back("subwords");
    options.dynamic_axes["subwords"] = {{0, "batch"}, {1, "sequence"}, {2, "subwords"}};
  }
  // The example: two sentences of different lengths, so the pad mask is not all false.
  const Batch example = make_batch(encode_for(m, {{"a fine film", 1, ""}, {"not good at all , sadly", 0, ""}}), {0, 1});
  ox::ModelFunctions fns{
      .forward = [&](const std::vector<tg::Tensor>& in) {
        return std::vector<tg::Tensor>{m.model->forward(in[0], in[1], subwords ? in[2] : tg::Tensor()).value()};
      },
      .graph = [&](GraphBuilder& g, const std::vector<std::string>& in) {
        return std::vector<std::string>{classifier(g, *m.model, {in[0], in[1], subwords ? in[2] : ""})};
      }};
  ox::export_model(*m.model, batch_inputs(example, subwords), args.out, options, fns);
  fmt::print("{} written (opset {}, inputs {}, output logits (batch, {}))\n", args.out, options.opset,
             fmt::join(options.input_names, ", "), m.config.model.num_classes);
  if (args.cases.empty()) return 0;
  const std::vector<ox::CheckCase> cases = test_cases(m, args.data, subwords);
  ox::write_cases(args.cases, options.input_names, options.output_names, cases);
  fmt::print("{} batches of the test split of {} with our logits written to {}\n", cases.size(), args.data, args.cases);
  return 0;
}
#endif

}  // namespace sentiment
