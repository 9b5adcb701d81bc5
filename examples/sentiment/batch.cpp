// Encoding and batching: sentences become id lists once, and each epoch regroups them into padded
// batches with masks (shuffled from the run's generator, so a seed fixes the order).
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

namespace {

// The (B, S, N) sub-word tensor of rows `rows` (S their longest sentence, N their token with most n-grams,
// at least 1), 0 at padding; undefined when the data has no sub-words.
tg::Tensor subword_tensor(const std::vector<Encoded>& data, const std::vector<int64_t>& rows, int64_t S) {
  if (std::none_of(rows.begin(), rows.end(), [&](int64_t r) { return !data[size_t(r)].subwords.empty(); })) return {};
  const int64_t B = int64_t(rows.size());
  int64_t N = 1;
  for (int64_t r : rows)
    for (const std::vector<int64_t>& g : data[size_t(r)].subwords) N = std::max<int64_t>(N, int64_t(g.size()));
  std::vector<int64_t> ids(size_t(B * S * N), 0);
  for (int64_t b = 0; b < B; ++b) {
    const std::vector<std::vector<int64_t>>& sub = data[size_t(rows[size_t(b)])].subwords;
    for (size_t s = 0; s < sub.size(); ++s) std::copy(sub[s].begin(), sub[s].end(), ids.begin() + (b * S + int64_t(s)) * N);
  }
  return tg::index_tensor(ids, {B, S, N});
}

}  // namespace

Batch make_batch(const std::vector<Encoded>& data, const std::vector<int64_t>& rows) {
  const int64_t B = int64_t(rows.size());
  int64_t S = 1;
  for (int64_t r : rows) S = std::max<int64_t>(S, int64_t(data.at(size_t(r)).ids.size()));
  std::vector<int64_t> tokens(size_t(B * S), Vocab::kPad);
  std::vector<int64_t> labels(static_cast<size_t>(B));
  for (int64_t b = 0; b < B; ++b) {
    const Encoded& e = data[size_t(rows[size_t(b)])];
    std::copy(e.ids.begin(), e.ids.end(), tokens.begin() + b * S);
    labels[size_t(b)] = e.label;
  }
  tg::Tensor t = tg::index_tensor(tokens, {B, S});
  return {t, tg::eq(t, double(Vocab::kPad)), tg::index_tensor(labels, {B}), subword_tensor(data, rows, S)};
}

std::vector<Batch> make_batches(const std::vector<Encoded>& data, int64_t batch_size, bool shuffle, tg::Generator* gen) {
  tg::check<tg::ValueError>(batch_size >= 1, "make_batches: batch_size must be >= 1, got {}", batch_size);
  tg::check<tg::ValueError>(!data.empty(), "make_batches: no examples to batch");
  std::vector<int64_t> order = shuffle ? tg::randperm(int64_t(data.size()), gen).to_vector<int64_t>()
                                       : tg::arange(0, double(data.size()), 1, tg::i64).to_vector<int64_t>();
  std::vector<Batch> batches;
  for (size_t at = 0; at < order.size(); at += size_t(batch_size)) {
    size_t end = std::min(order.size(), at + size_t(batch_size));
    batches.push_back(make_batch(data, std::vector<int64_t>(order.begin() + at, order.begin() + end)));
  }
  return batches;
}

}  // namespace sentiment
