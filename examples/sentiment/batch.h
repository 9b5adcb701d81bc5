#pragma once
// Sentences to padded tensor batches for the sentiment classifier.
#include <cstdint>
#include <vector>

#include <tensorgrad/tensorgrad.h>

#include "dataset.h"
#include "lexicon.h"
#include "text.h"

namespace sentiment {

/// One sentence as token ids (never empty: a sentence without tokens becomes one <unk>) and its label;
/// with sub-words, each token's n-gram bucket ids (subword_ids; none for that <unk>), else empty.
struct Encoded {
  std::vector<int64_t> ids;
  int64_t label = 0;
  std::vector<std::vector<int64_t>> subwords;  // one list per id, or empty
};

/// A padded batch. tokens (B, S) i64 with <pad> = 0 after each sentence; pad_mask (B, S) bool, true at
/// padding (PyTorch's key_padding_mask convention); labels (B) i64. S is the batch's longest sentence.
/// subwords (B, S, N) i64: each token's n-gram buckets padded with 0 to the batch's most, N >= 1; an
/// undefined tensor when the data has no sub-words.
struct Batch {
  tg::Tensor tokens, pad_mask, labels, subwords;
  int64_t size() const { return tokens.size(0); }
};

/// Tokenizes and encodes every example, truncating to max_len tokens; with subword_buckets > 0 (the
/// model's), also each kept token's n-gram buckets, and with a lexicon (null: none) then lexicon_weight times
/// the bucket of lexicon_feature(valence) for a token the lexicon rates. ValueError for a lexicon without
/// sub-word buckets or with lexicon_weight < 1.
std::vector<Encoded> encode_all(const std::vector<Example>& examples, const Vocab& vocab, int64_t max_len,
                                int64_t subword_buckets = 0, const Lexicon* lexicon = nullptr,
                                int64_t lexicon_weight = 1);

/// The batch of rows `rows` of `data`.
Batch make_batch(const std::vector<Encoded>& data, const std::vector<int64_t>& rows);

/// Consecutive batches of batch_size (the last may be smaller), in a random order drawn from `gen` when
/// shuffle is set. ValueError for batch_size < 1 or empty data.
std::vector<Batch> make_batches(const std::vector<Encoded>& data, int64_t batch_size, bool shuffle, tg::Generator* gen);

}  // namespace sentiment
