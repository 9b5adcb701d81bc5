#pragma once
// Sentences to padded tensor batches for the sentiment classifier.
#include <cstdint>
#include <memory>
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

/// A padded batch as the model reads it. tokens (B, S) i64 with <pad> = 0 after each sentence; pad_mask
/// (B, S) bool, true at padding (PyTorch's key_padding_mask convention); labels (B) i64. S is the batch's
/// longest sentence. subwords (B, S, N) i64: each token's n-gram buckets padded with 0 to the batch's most,
/// N >= 1; an undefined tensor when the data has no sub-words.
struct Batch {
  tg::Tensor tokens, pad_mask, labels, subwords;
  int64_t size() const { return tokens.size(0); }
  /// The fields of a batch of an EncodedDataset collated by pad_collate (make_loader's).
  static Batch of(const tg::data::Batch& b);
};

/// Encoded sentences as a tg::data::Dataset, without copying them (`data` must outlive it). Example i is
/// {ids (S) i64, label () i64}, and when the data has sub-words also {subwords (S, N) i64}: each token's
/// buckets padded with 0 to the sentence's most, N >= 1.
class EncodedDataset : public tg::data::Dataset {
 public:
  explicit EncodedDataset(const std::vector<Encoded>& data);
  int64_t size() const override { return int64_t(data_->size()); }
  /// IndexError for an index outside [0, size()).
  tg::data::Example get(int64_t index) const override;

 private:
  const std::vector<Encoded>* data_;
  bool subwords_;  // whether any sentence has sub-words
};

/// A new random order every epoch drawn with tg::randperm from a generator it shares (which must outlive
/// it): an ensemble's K fold loaders draw their orders one after the other from the run's shuffling
/// generator, whose state the run's checkpoint keeps (so state() is "", as for no generator).
class SharedRandomSampler : public tg::data::Sampler {
 public:
  /// ValueError for n < 0.
  SharedRandomSampler(int64_t n, tg::Generator& generator);
  int64_t size() const override { return n_; }
  std::vector<int64_t> indices() override;

 private:
  int64_t n_;
  tg::Generator* generator_;
};

/// A DataLoader of `data` (EncodedDataset, pad_collate with <pad>) in batches of batch_size (the last may be
/// smaller), in the order `sampler` gives; null: the data's order. ValueError for batch_size < 1 or empty data.
std::unique_ptr<tg::data::DataLoader> make_loader(const std::vector<Encoded>& data, int64_t batch_size,
                                                  std::shared_ptr<tg::data::Sampler> sampler = nullptr);

/// Tokenizes and encodes every example, truncating to max_len tokens; with subword_buckets > 0 (the
/// model's), also each kept token's n-gram buckets, and with a lexicon (null: none) then lexicon_weight times
/// the bucket of lexicon_feature(valence) for a token the lexicon rates. ValueError for a lexicon without
/// sub-word buckets or with lexicon_weight < 1.
std::vector<Encoded> encode_all(const std::vector<Example>& examples, const Vocab& vocab, int64_t max_len,
                                int64_t subword_buckets = 0, const Lexicon* lexicon = nullptr,
                                int64_t lexicon_weight = 1);

/// The batch of rows `rows` of `data`, collated as make_loader's.
Batch make_batch(const std::vector<Encoded>& data, const std::vector<int64_t>& rows);

}  // namespace sentiment
