#pragma once
// The sentiment classifier: token embedding + learned position embedding -> dropout -> Transformer
// encoder (with the key padding mask), or an LSTM or GRU over each sentence's real tokens -> pooling over
// real tokens -> Dense to class logits; optionally an ensemble of several such networks.
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <tensorgrad/tensorgrad.h>

#include "config.h"
#include "text.h"

namespace sentiment {

/// One network: the layers above, with PyTorch-style parameter names ("token_embedding.weight", ...). With
/// subword_buckets > 0, a token's input vector is the mean of its word embedding and the embeddings
/// ("subword_embedding.weight", row 0 = padding) of its n-gram buckets (fastText, Bojanowski et al. 2017).
class Network : public tg::nn::Layer {
 public:
  /// ValueError for a config check_model_config refuses (naming the field), or a vocab_size the token
  /// Embedding refuses (< 1).
  explicit Network(const ModelConfig& config);
  /// tokens (B, S) i64, pad_mask (B, S) bool (true at padding), and with sub-words subwords (B, S, N) i64
  /// (Batch::subwords; ValueError when missing or of another shape, ignored without sub-words)
  /// -> logits (B, num_classes).
  tg::Variable forward(const tg::Tensor& tokens, const tg::Tensor& pad_mask, const tg::Tensor& subwords = {});
  /// The attention weights of every layer, each (B, H, S, S), for the same inputs. ValueError for an
  /// lstm or gru network, which has none.
  std::vector<tg::Variable> attention(const tg::Tensor& tokens, const tg::Tensor& pad_mask,
                                      const tg::Tensor& subwords = {});
  /// The rows of the embedding tables whose gradient a training forward on these inputs (a batch, or the
  /// union of the ranks' shares of it) can make non-zero: the token ids present with <pad> and <unk> (word
  /// dropout), the sub-word buckets present with row 0; each ascending. Keyed by parameter name
  /// ("token_embedding.weight", "subword_embedding.weight" with sub-words); the small position embedding is
  /// left out (averaged whole, as the other parameters). ValueError for an id outside its table.
  std::map<std::string, std::vector<int64_t>> embedding_rows(const tg::Tensor& tokens,
                                                             const tg::Tensor& subwords = {}) const;
  std::string type_name() const override { return "SentimentNetwork"; }

 private:
  using Layer::forward;  // the unary one, which throws: hidden on purpose (clang's -Woverloaded-virtual)
  tg::Variable embed(tg::Tensor tokens, tg::Tensor subwords);                 // (B, S, d_model)
  tg::Variable pool(const tg::Variable& h, const tg::Tensor& pad_mask) const;  // (B, W) or (B, 2W)

  ModelConfig config_;
  tg::nn::Embedding token_embedding_, position_embedding_;
  std::unique_ptr<tg::nn::Embedding> subword_embedding_;  // (subword_buckets + 1, d_model), or null
  std::unique_ptr<tg::nn::LayerNorm> embedding_norm_;      // over d_model, or null
  tg::nn::Dropout dropout_;
  // Exactly one of the two, by config.architecture; made here in the encoder's place among the layers, so
  // that the Transformer's random draws (and weights) are as before.
  std::unique_ptr<tg::nn::Encoder> encoder_;
  std::unique_ptr<tg::nn::RNNBase> rnn_;  // tg::nn::LSTM or GRU, batch_first, registered as "rnn"
  tg::nn::Dense classifier_;
};

/// The model of a ModelConfig: one Network, or with `ensemble` = K > 1, K networks initialised one after
/// the other ("members.0.token_embedding.weight", ...), each trained on its own loss, whose class
/// probabilities are averaged (a deep ensemble: Lakshminarayanan et al., NeurIPS 2017). The members of an
/// ensemble run side by side on the threads (for_each_member), each drawing its dropout from its own
/// generator, seeded from the default generator after initialisation; one network draws from the default
/// generator itself.
class Classifier : public tg::nn::Layer {
 public:
  /// ValueError as Network's (ensemble < 1 included).
  explicit Classifier(const ModelConfig& config);
  /// tokens (B, S) i64, pad_mask (B, S) bool (true at padding), subwords as Network's -> logits
  /// (B, num_classes): one network's, or for an ensemble log(mean_k softmax(logits_k)), whose softmax is
  /// the members' mean probability.
  tg::Variable forward(const tg::Tensor& tokens, const tg::Tensor& pad_mask, const tg::Tensor& subwords = {});
  int64_t num_members() const { return int64_t(members_.size()); }
  /// Member k (0 <= k < num_members(); std::out_of_range otherwise): training gives each its own loss.
  Network& member(int64_t k) { return *members_.at(size_t(k)); }
  /// Runs f(k) for every member k, up to tg::get_num_threads() members at once (tg::parallel_tasks), each
  /// with the calling thread's grad and anomaly modes and, in an ensemble, member k's generator as the
  /// default generator: the same results whatever the thread count. f must touch member k's state only.
  void for_each_member(const std::function<void(int64_t)>& f);
  /// The states of the members' own generators (none for one network), for checkpoints; and their
  /// restoration: ValueError when the count is not the members' or a state is not a generator state.
  std::vector<std::string> generator_states() const;
  void set_generator_states(const std::vector<std::string>& states);
  /// Each member's logits (B, num_classes), K of them, for the same inputs (computed by for_each_member).
  std::vector<tg::Variable> member_logits(const tg::Tensor& tokens, const tg::Tensor& pad_mask,
                                          const tg::Tensor& subwords = {});
  /// The ensemble's logits (as forward) from the members' logits.
  static tg::Variable combine(const std::vector<tg::Variable>& member_logits);
  /// The attention weights of every layer, each (B, H, S, S), for the same inputs; member by member.
  /// ValueError for an lstm or gru model.
  std::vector<tg::Variable> attention(const tg::Tensor& tokens, const tg::Tensor& pad_mask,
                                      const tg::Tensor& subwords = {});
  std::string type_name() const override { return "SentimentClassifier"; }
  const ModelConfig& config() const { return config_; }

 private:
  using Layer::forward;  // the unary one, which throws: hidden on purpose (clang's -Woverloaded-virtual)
  ModelConfig config_;
  std::vector<std::unique_ptr<Network>> members_;
  std::vector<tg::Generator> generators_;  // member k's dropout and word dropout; empty for one network
  tg::nn::LayerList member_list_;  // registered as "members" when there are several
};

}  // namespace sentiment
