// The classifier's forward pass. Shapes: B sentences, S tokens (the batch's longest), D = d_model.
#include "model.h"

#include <cmath>

namespace sentiment {
namespace {

// The config, checked before any layer is built from it: a bad value is named by its field (max_len 0 was
// reported by the position Embedding).
const ModelConfig& checked(const ModelConfig& c) {
  check_model_config(c);
  return c;
}

tg::nn::EncoderOptions encoder_options(const ModelConfig& c) {
  return {.layer = {.d_model = c.d_model, .num_heads = c.num_heads, .dim_feedforward = c.dim_feedforward,
                    .dropout = c.dropout,
                    .activation = c.activation == Activation::gelu ? tg::nn::Activation::gelu : tg::nn::Activation::relu,
                    .norm_first = c.norm_first},
          .num_layers = c.num_layers,
          .final_norm = c.norm_first};  // a pre-norm stack needs a final norm, as in PyTorch practice
}

std::unique_ptr<tg::nn::Encoder> make_encoder(const ModelConfig& c) {
  if (c.architecture != Architecture::transformer) return nullptr;
  return std::make_unique<tg::nn::Encoder>(encoder_options(c));
}

// PyTorch's nn.LSTM / nn.GRU(d_model, hidden_size, num_layers, batch_first=True, dropout, bidirectional).
std::unique_ptr<tg::nn::RNNBase> make_rnn(const ModelConfig& c) {
  const tg::nn::RNNOptions o{.input_size = c.d_model, .hidden_size = c.hidden_size, .num_layers = c.num_layers,
                             .batch_first = true, .dropout = c.dropout, .bidirectional = c.bidirectional};
  if (c.architecture == Architecture::lstm) return std::make_unique<tg::nn::LSTM>(o);
  if (c.architecture == Architecture::gru) return std::make_unique<tg::nn::GRU>(o);
  return nullptr;
}

}  // namespace

Network::Network(const ModelConfig& c)
    : config_(checked(c)),
      token_embedding_({.num_embeddings = c.vocab_size, .embedding_dim = c.d_model, .padding_idx = 0}),
      position_embedding_({.num_embeddings = c.max_len, .embedding_dim = c.d_model}),
      dropout_(c.dropout),
      encoder_(make_encoder(c)),
      rnn_(make_rnn(c)),
      classifier_({.in_features = (c.pooling == Pooling::mean_max ? 2 : 1) * encoded_width(c), .out_features = c.num_classes}) {
  // Made after every other layer, so that without sub-words the random draws (and weights) are as before.
  if (c.subword_buckets > 0)
    subword_embedding_ = std::make_unique<tg::nn::Embedding>(
        tg::nn::EmbeddingOptions{.num_embeddings = c.subword_buckets + 1, .embedding_dim = c.d_model, .padding_idx = 0});
  if (c.embedding_norm)
    embedding_norm_ = std::make_unique<tg::nn::LayerNorm>(tg::nn::LayerNormOptions{.normalized_shape = {c.d_model}});
  if (c.embedding_std != 1.0)
    for (tg::nn::Embedding* e : {&token_embedding_, &position_embedding_, subword_embedding_.get()}) {
      if (!e) continue;
      tg::Tensor w = e->weight().value();  // shares the parameter's storage
      w.mul_(c.embedding_std);
    }
  // Sharper initial attention: q·k scales with the square of this factor (ModelConfig::qk_init_scale).
  if (encoder_ && c.qk_init_scale != 1.0)
    for (int64_t l = 0; l < encoder_->num_layers(); ++l) {
      tg::Tensor qk = encoder_->layer(l).self_attn().in_proj_weight().value().slice(0, 0, 2 * c.d_model);  // (2D, D)
      qk.mul_(c.qk_init_scale);
    }
  register_layer("token_embedding", token_embedding_);
  if (subword_embedding_) register_layer("subword_embedding", *subword_embedding_);
  if (c.positional == Positional::learned) register_layer("position_embedding", position_embedding_);
  if (embedding_norm_) register_layer("embedding_norm", *embedding_norm_);
  register_layer("dropout", dropout_);  // no parameters, but it must follow train()/eval()
  if (encoder_) register_layer("encoder", *encoder_);
  if (rnn_) register_layer("rnn", *rnn_);
  register_layer("classifier", classifier_);
}

tg::Variable Network::embed(tg::Tensor tokens, tg::Tensor subwords) {
  const int64_t S = tokens.size(1);
  tg::check<tg::ValueError>(S <= config_.max_len, "model: {} tokens exceed max_len {}", S, config_.max_len);
  if (subword_embedding_)
    tg::check<tg::ValueError>(subwords.defined() && subwords.dim() == 3 && subwords.size(0) == tokens.size(0) &&
                                  subwords.size(1) == S,
                              "model: a model with sub-words needs subwords (B, S, N) for tokens {}, got {}",
                              tokens.shape(), subwords.defined() ? fmt::format("{}", subwords.shape()) : "none");
  // Word dropout: the model must not lean on single words. It follows dropout_'s mode, which train()/eval()
  // reach also when a one-network Classifier registers this network's layers as its own. A dropped word's
  // n-grams go with it, or they would still spell it out.
  if (dropout_.is_training() && config_.token_dropout > 0) {
    tg::Tensor drop = tg::logical_and(tg::bernoulli(tokens.shape(), config_.token_dropout, tg::boolean),
                                      tg::ne(tokens, double(Vocab::kPad)));
    tokens = tg::where(drop, tg::scalar_tensor(double(Vocab::kUnk), tg::i64), tokens);
    if (subword_embedding_) subwords = tg::where(drop.unsqueeze(2), tg::scalar_tensor(0, tg::i64), subwords);
  }
  tg::Variable x = token_embedding_.forward(tokens);  // (B, S, D)
  if (subword_embedding_) {
    // fastText's word vector: the mean of the word's own vector and its n-grams' (or their sum). A bag sum,
    // not embedding + sum: the (B, S, N, D) rows would be the largest activation, and a new size every batch.
    x = x + tg::embedding_bag(subword_embedding_->weight(), subwords, 0);
    if (config_.subword_combine == SubwordCombine::mean)
      x = x / tg::Variable(tg::sum(tg::ne(subwords, 0.0).to(x.dtype()), {2}, true) + 1.0);  // count (B, S, 1)
  }
  if (config_.positional == Positional::learned) x = x + position_embedding_.forward(tg::arange(0, double(S), 1, tg::i64));
  if (embedding_norm_) x = embedding_norm_->forward(x);
  return dropout_(x);
}

tg::Variable Network::pool(const tg::Variable& h, const tg::Tensor& pad_mask) const {
  tg::Tensor keep = tg::logical_not(pad_mask).unsqueeze(2);  // (B, S, 1)
  auto max = [&] { return tg::amax(tg::masked_fill(h, tg::logical_not(keep), -1e9), {1}); };
  if (config_.pooling == Pooling::max) return max();
  tg::Tensor count = tg::sum(keep.to(h.dtype()), {1});      // (B, 1), >= 1: no sentence is empty
  tg::Variable mean = tg::sum(h * tg::Variable(keep.to(h.dtype())), {1}) / tg::Variable(count);
  return config_.pooling == Pooling::mean_max ? tg::cat({mean, max()}, 1) : mean;  // (B, 2W) or (B, W)
}

tg::Variable Network::forward(const tg::Tensor& tokens, const tg::Tensor& pad_mask, const tg::Tensor& subwords) {
  tg::check<tg::ShapeError>(tokens.dim() == 2 && pad_mask.shape() == tokens.shape(),
                            "model: tokens {} and pad_mask {} must both be (B, S)", tokens.shape(), pad_mask.shape());
  const tg::Variable x = embed(tokens, subwords);  // (B, S, D)
  // (B, S, W); the RNN skips the padding (its state stays, its output there is 0), so padding never enters it.
  const tg::Variable h = encoder_ ? encoder_->forward(x, {.key_padding_mask = pad_mask})
                                  : rnn_->forward(x, {.padding_mask = pad_mask}).output;
  return classifier_(pool(h, pad_mask));  // (B, C)
}

std::vector<tg::Variable> Network::attention(const tg::Tensor& tokens, const tg::Tensor& pad_mask,
                                             const tg::Tensor& subwords) {
  tg::check<tg::ValueError>(encoder_ != nullptr, "model: a network of architecture {} has no attention "
                            "weights (only a transformer has)", name_of(config_.architecture));
  return encoder_->forward_with_attention(embed(tokens, subwords), {.key_padding_mask = pad_mask}).attention;
}

namespace {

// The distinct values of an i64 tensor of ids in [0, rows) together with `extra`, ascending (a mark per row:
// linear, where sorting the ~10^4 sub-word ids of a batch took longer).
std::vector<int64_t> distinct_ids(const tg::Tensor& ids, int64_t rows, std::initializer_list<int64_t> extra) {
  std::vector<char> seen(size_t(rows), 0);
  const tg::Tensor c = ids.contiguous();
  const int64_t* p = c.data<int64_t>();
  for (int64_t i = 0; i < c.numel(); ++i) {
    tg::check<tg::ValueError>(p[i] >= 0 && p[i] < rows, "model: id {} outside an embedding table of {} rows", p[i], rows);
    seen[size_t(p[i])] = 1;
  }
  for (int64_t e : extra)
    if (e < rows) seen[size_t(e)] = 1;
  std::vector<int64_t> out;
  for (int64_t r = 0; r < rows; ++r)
    if (seen[size_t(r)]) out.push_back(r);
  return out;
}

}  // namespace

std::map<std::string, std::vector<int64_t>> Network::embedding_rows(const tg::Tensor& tokens,
                                                                    const tg::Tensor& subwords) const {
  std::map<std::string, std::vector<int64_t>> out;
  out["token_embedding.weight"] = distinct_ids(tokens, config_.vocab_size, {Vocab::kPad, Vocab::kUnk});
  if (subword_embedding_) out["subword_embedding.weight"] = distinct_ids(subwords, config_.subword_buckets + 1, {0});
  return out;
}

Classifier::Classifier(const ModelConfig& c) : config_(checked(c)) {
  for (int64_t k = 0; k < c.ensemble; ++k) members_.push_back(std::make_unique<Network>(c));
  if (c.ensemble > 1) {
    // Seeds drawn after every member is initialised, so that the initial weights are as before.
    for (int64_t k = 0; k < c.ensemble; ++k) generators_.emplace_back(tg::default_generator().next());
    for (auto& m : members_) member_list_.append(*m);
    register_layer("members", member_list_);
    return;
  }
  // One network keeps its plain parameter names (as in PyTorch, and in model directories from before ensembles).
  for (const auto& [name, child] : members_[0]->named_children()) register_layer(name, *child);
}

void Classifier::for_each_member(const std::function<void(int64_t)>& f) {
  // The modes are per thread: a pool thread records a graph unless told otherwise.
  const bool grad = tg::grad_mode_enabled(), anomaly = tg::anomaly_mode_enabled();
  tg::parallel_tasks(num_members(), [&](int64_t k) {
    tg::GradModeGuard grad_mode(grad);
    tg::AnomalyGuard anomaly_mode(anomaly);
    if (generators_.empty()) return f(k);
    tg::DefaultGeneratorGuard generator(generators_[size_t(k)]);
    f(k);
  });
}

std::vector<std::string> Classifier::generator_states() const {
  std::vector<std::string> out;
  for (const tg::Generator& g : generators_) out.push_back(g.get_state());
  return out;
}

void Classifier::set_generator_states(const std::vector<std::string>& states) {
  tg::check<tg::ValueError>(states.size() == generators_.size(), "Classifier: {} generator states for {} member "
                            "generators", states.size(), generators_.size());
  std::vector<tg::Generator> restored = generators_;  // all or nothing: set_state throws for a bad state
  for (size_t k = 0; k < states.size(); ++k) restored[k].set_state(states[k]);
  generators_ = std::move(restored);
}

std::vector<tg::Variable> Classifier::member_logits(const tg::Tensor& tokens, const tg::Tensor& pad_mask,
                                                   const tg::Tensor& subwords) {
  std::vector<tg::Variable> out(members_.size());
  for_each_member([&](int64_t k) { out[size_t(k)] = members_[size_t(k)]->forward(tokens, pad_mask, subwords); });
  return out;
}

tg::Variable Classifier::combine(const std::vector<tg::Variable>& member_logits) {
  if (member_logits.size() == 1) return member_logits[0];
  std::vector<tg::Variable> log_probs;
  for (const tg::Variable& l : member_logits) log_probs.push_back(tg::log_softmax(l, 1));  // (B, C) each
  // log(mean_k p_k) = logsumexp_k(log p_k) - log K, stable where a p_k underflows.
  return tg::logsumexp(tg::stack(log_probs, 0), {0}) - std::log(double(member_logits.size()));
}

tg::Variable Classifier::forward(const tg::Tensor& tokens, const tg::Tensor& pad_mask, const tg::Tensor& subwords) {
  return combine(member_logits(tokens, pad_mask, subwords));
}

std::vector<tg::Variable> Classifier::attention(const tg::Tensor& tokens, const tg::Tensor& pad_mask,
                                                const tg::Tensor& subwords) {
  std::vector<tg::Variable> out;
  for (auto& m : members_) {
    std::vector<tg::Variable> a = m->attention(tokens, pad_mask, subwords);
    out.insert(out.end(), a.begin(), a.end());
  }
  return out;
}

}  // namespace sentiment
