#pragma once
// Sampling from a language model: the next token from logits (greedy, temperature, top-k, top-p) and the
// autoregressive loop around a model's next-token logits, with a seeded generator.
#include <functional>
#include <span>
#include <vector>

#include "core/random.h"
#include "core/tensor.h"

namespace tg::nn {

/// How the next token is chosen, with Hugging Face's names and order: temperature, then top-k, then top-p.
struct SamplingOptions {
  double temperature = 1.0;  ///< logits / temperature; 0 = greedy (the argmax, the lowest id on ties)
  int64_t top_k = 0;         ///< keep only the k most likely tokens; 0 = all
  /// Nucleus sampling (Holtzman et al. 2019): keep the smallest set of most likely tokens whose probability
  /// sums to at least top_p (always at least one); 1 = all.
  double top_p = 1.0;
};

/// The distribution sample_token draws from, (V) f64: softmax(logits / temperature) restricted to the top_k
/// most likely tokens, then to the top_p nucleus of those, renormalised; zeros elsewhere. Greedy (temperature
/// 0) puts 1 on the argmax. logits: (V), f32 or f64. ShapeError for logits that are not (V) with V > 0;
/// ValueError for NaN logits, no finite logit, temperature < 0 (or NaN), top_k outside [0, V], top_p outside
/// (0, 1].
Tensor sampling_distribution(const Tensor& logits, const SamplingOptions& options = {});

/// One token id from logits (V): greedy takes the argmax and draws nothing; otherwise one gen.uniform() u
/// picks the first token, in order of decreasing probability (lower id first on ties), at which the
/// cumulative probability of sampling_distribution exceeds u. Throws as sampling_distribution.
int64_t sample_token(const Tensor& logits, const SamplingOptions& options, Generator& gen);

/// The logits (V) of the token after `tokens`, of which the first `cached` were given in earlier calls (0 on
/// the first): a model with a KV cache runs tokens[cached:] from position `cached` on, one without runs all.
using NextLogits = std::function<Tensor(std::span<const int64_t> tokens, int64_t cached)>;

/// generate's options.
struct GenerateOptions {
  int64_t max_new_tokens = 0;  ///< stop after this many new tokens (> 0)
  int64_t stop_token = -1;     ///< stop after emitting this id (it is returned too); -1 = none
  SamplingOptions sampling;    ///< how each token is drawn from the logits
};

/// Autoregressive generation (Radford et al. 2019): samples tokens one at a time after `prompt`, each from
/// next_logits of all tokens so far, until stop_token or max_new_tokens; returns the new tokens and calls
/// on_token(id) after each (for streaming). Runs under NoGradGuard. ValueError for an empty prompt,
/// max_new_tokens <= 0 or stop_token < -1, and as sample_token.
std::vector<int64_t> generate(const NextLogits& next_logits, const std::vector<int64_t>& prompt,
                              const GenerateOptions& options, Generator& gen,
                              const std::function<void(int64_t)>& on_token = {});

}  // namespace tg::nn
