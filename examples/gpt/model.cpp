// The GPT and its evaluation over a byte stream. The body is the library's Decoder without cross-attention
// (the GPT block); this file adds the embeddings, the tied output projection and the sliding-window score.
#include "model.h"

#include <algorithm>

namespace gpt {
namespace {

tg::nn::DecoderOptions decoder_options(const ModelConfig& c) {
  return {.layer = {.d_model = c.d_model, .num_heads = c.num_heads, .dim_feedforward = c.dim_feedforward,
                    .dropout = c.dropout, .activation = tg::nn::Activation::gelu, .norm_first = true,
                    .cross_attention = false},
          .num_layers = c.num_layers, .final_norm = true};
}

const ModelConfig& checked(const ModelConfig& m) {
  check_config({.model = m, .train = {.eval_stride = 1}});
  tg::check<tg::ValueError>(m.vocab_size >= 1, "model: vocab_size must be >= 1, got {}", m.vocab_size);
  return m;
}

}  // namespace

Gpt::Gpt(const ModelConfig& config)
    : config_(checked(config)),
      token_embedding_({.num_embeddings = config.vocab_size, .embedding_dim = config.d_model}),
      position_({.d_model = config.d_model, .max_len = config.block_size, .std = 0.02}),
      dropout_(config.dropout),
      decoder_(decoder_options(config)) {
  tg::Tensor w = token_embedding_.weight().value();  // shares the parameter's storage: N(0, 1) -> N(0, 0.02²)
  w.mul_(0.02);
  register_layer("token_embedding", token_embedding_);
  register_layer("position", position_);
  register_layer("dropout", dropout_);  // no parameters, but it must follow train()/eval()
  register_layer("decoder", decoder_);
}

tg::Variable Gpt::forward(const tg::Tensor& tokens, int64_t start, std::span<tg::nn::KVCache> cache) {
  tg::Variable x = dropout_(position_.forward(token_embedding_(tokens), start));  // (B, T, E)
  x = decoder_.forward(x, {}, {.tgt_is_causal = true, .cache = cache});           // (B, T, E)
  return token_embedding_.attend(x);                                               // (B, T, V)
}

double stream_nats(Gpt& model, const std::vector<int64_t>& separator, const std::vector<int64_t>& stream,
                   int64_t stride, int64_t batch_size) {
  tg::check<tg::ValueError>(!stream.empty(), "evaluation: the stream is empty");
  std::vector<int64_t> ctx = separator;
  ctx.insert(ctx.end(), stream.begin(), stream.end());
  const int64_t L = int64_t(ctx.size()), W = std::min(model.config().block_size, L - 1);
  // Windows (s, first): inputs ctx[s, s + W), targets ctx[s + 1, s + W], scoring target positions >= first.
  std::vector<std::pair<int64_t, int64_t>> windows;
  for (int64_t next = int64_t(separator.size()); next < L;) {
    const int64_t end = windows.empty() ? W : std::min(next + stride - 1, L - 1);  // the last target scored
    windows.emplace_back(end - W, next);
    next = end + 1;
  }
  tg::NoGradGuard no_grad;
  const bool was_training = model.is_training();
  model.eval();
  double nats = 0;
  for (size_t b0 = 0; b0 < windows.size(); b0 += size_t(batch_size)) {
    const size_t B = std::min(windows.size() - b0, size_t(batch_size));
    std::vector<int64_t> inputs, targets;
    for (size_t b = b0; b < b0 + B; ++b) {
      const auto [s, first] = windows[b];
      for (int64_t t = 0; t < W; ++t) {
        inputs.push_back(ctx[size_t(s + t)]);
        targets.push_back(s + t + 1 >= first ? ctx[size_t(s + t + 1)] : -100);  // -100: ignored
      }
    }
    tg::Variable logits = model.forward(tg::index_tensor(inputs, {int64_t(B), W}));  // (B, W, V)
    nats += tg::cross_entropy(logits.reshape({int64_t(B) * W, model.config().vocab_size}),
                              tg::index_tensor(targets, {int64_t(B) * W}), {.reduction = tg::Reduction::sum})
                .item();
  }
  model.train(was_training);
  return nats;
}

}  // namespace gpt
