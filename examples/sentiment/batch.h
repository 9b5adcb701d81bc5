#pragma once
// Sentences to padded tensor batches for the sentiment classifier.
#include <cstdint>
#include <vector>

#include <tensorgrad/tensorgrad.h>

#include "dataset.h"
#include "text.h"

namespace sentiment {

/// One sentence as token ids (never empty: a sentence without tokens becomes one <unk>) and its label.
struct Encoded {
  std::vector<int64_t> ids;
  int64_t label = 0;
};

/// A padded batch. tokens (B, S) i64 with <pad> = 0 after each sentence; pad_mask (B, S) bool, true at
/// padding (PyTorch's key_padding_mask convention); labels (B) i64. S is the batch's longest sentence.
struct Batch {
  tg::Tensor tokens, pad_mask, labels;
  int64_t size() const { return tokens.size(0); }
};

/// Tokenizes and encodes every example, truncating to max_len tokens.
std::vector<Encoded> encode_all(const std::vector<Example>& examples, const Vocab& vocab, int64_t max_len);

/// The batch of rows `rows` of `data`.
Batch make_batch(const std::vector<Encoded>& data, const std::vector<int64_t>& rows);

/// Consecutive batches of batch_size (the last may be smaller), in a random order drawn from `gen` when
/// shuffle is set. ValueError for batch_size < 1 or empty data.
std::vector<Batch> make_batches(const std::vector<Encoded>& data, int64_t batch_size, bool shuffle, tg::Generator* gen);

}  // namespace sentiment
