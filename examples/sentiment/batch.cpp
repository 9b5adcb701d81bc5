// Encoding and batching: sentences become id lists once; a DataLoader regroups them each epoch into padded
// batches with masks (pad_collate), shuffled from the run's generator, so a seed fixes the order.
#include "batch.h"

#include <algorithm>

#include "subword.h"

namespace sentiment {

std::vector<Encoded> encode_all(const std::vector<Example>& examples, const Vocab& vocab, int64_t max_len,
                                int64_t subword_buckets, const Lexicon* lexicon, int64_t lexicon_weight) {
  tg::check<tg::ValueError>(!lexicon || subword_buckets > 0, "encode_all: a lexicon's valences go into the sub-word "
                            "buckets, but subword_buckets is {}", subword_buckets);
  tg::check<tg::ValueError>(!lexicon || lexicon_weight >= 1, "encode_all: lexicon_weight must be >= 1, got {}",
                            lexicon_weight);
  std::vector<Encoded> out;
  out.reserve(examples.size());
  for (const Example& e : examples) {
    const std::vector<std::string> tokens = tokenize(e.text);
    Encoded enc{vocab.encode(tokens, max_len), e.label, {}};
    if (subword_buckets > 0)
      for (size_t i = 0; i < enc.ids.size(); ++i) {
        enc.subwords.push_back(subword_ids(tokens[i], subword_buckets));
        if (std::optional<int> v = lexicon ? lexicon->valence(tokens[i]) : std::nullopt)
          enc.subwords.back().insert(enc.subwords.back().end(), size_t(lexicon_weight),
                                     subword_bucket(lexicon_feature(*v), subword_buckets));
      }
    if (enc.ids.empty()) {  // keeps every row attendable and poolable
      enc.ids.push_back(Vocab::kUnk);
      if (subword_buckets > 0) enc.subwords.emplace_back();
    }
    out.push_back(std::move(enc));
  }
  return out;
}

Batch Batch::of(const tg::data::Batch& b) {
  return {b[0], b.masks.at(0), b[1], b.fields.size() > 2 ? b[2] : tg::Tensor()};
}

EncodedDataset::EncodedDataset(const std::vector<Encoded>& data)
    : data_(&data), subwords_(std::any_of(data.begin(), data.end(), [](const Encoded& e) { return !e.subwords.empty(); })) {}

tg::data::Example EncodedDataset::get(int64_t index) const {
  tg::check<tg::IndexError>(index >= 0 && index < size(), "EncodedDataset: index {} outside [0, {})", index, size());
  const Encoded& e = (*data_)[size_t(index)];
  const int64_t S = int64_t(e.ids.size());
  tg::data::Example out = {tg::index_tensor(e.ids, {S}), tg::scalar_tensor(double(e.label), tg::i64)};
  if (!subwords_) return out;
  int64_t N = 1;  // a batch of tokens without n-grams still gets one (zero) column
  for (const std::vector<int64_t>& g : e.subwords) N = std::max<int64_t>(N, int64_t(g.size()));
  std::vector<int64_t> ids(size_t(S * N), 0);
  for (size_t s = 0; s < e.subwords.size(); ++s)
    std::copy(e.subwords[s].begin(), e.subwords[s].end(), ids.begin() + int64_t(s) * N);
  out.push_back(tg::index_tensor(ids, {S, N}));
  return out;
}

SharedRandomSampler::SharedRandomSampler(int64_t n, tg::Generator& generator) : n_(n), generator_(&generator) {
  tg::check<tg::ValueError>(n >= 0, "SharedRandomSampler: size must be >= 0, got {}", n);
}

std::vector<int64_t> SharedRandomSampler::indices() { return tg::randperm(n_, generator_).to_vector<int64_t>(); }

std::unique_ptr<tg::data::DataLoader> make_loader(const std::vector<Encoded>& data, int64_t batch_size,
                                                  std::shared_ptr<tg::data::Sampler> sampler) {
  tg::check<tg::ValueError>(batch_size >= 1, "make_loader: batch_size must be >= 1, got {}", batch_size);
  tg::check<tg::ValueError>(!data.empty(), "make_loader: no examples to batch");
  return std::make_unique<tg::data::DataLoader>(
      std::make_shared<EncodedDataset>(data),
      tg::data::DataLoaderOptions{.batch_size = batch_size, .collate = tg::data::pad_collate({.padding_value = Vocab::kPad}),
                                  .sampler = std::move(sampler)});
}

Batch make_batch(const std::vector<Encoded>& data, const std::vector<int64_t>& rows) {
  const EncodedDataset dataset(data);
  std::vector<tg::data::Example> examples;
  for (int64_t r : rows) examples.push_back(dataset.get(r));
  return Batch::of(tg::data::pad_collate({.padding_value = Vocab::kPad})(examples));
}

}  // namespace sentiment
