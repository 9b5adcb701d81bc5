// Encoding and batching: sentences become id lists once, and each epoch regroups them into padded
// batches with masks (shuffled from the run's generator, so a seed fixes the order).
#include "batch.h"

#include <algorithm>

namespace sentiment {

std::vector<Encoded> encode_all(const std::vector<Example>& examples, const Vocab& vocab, int64_t max_len) {
  std::vector<Encoded> out;
  out.reserve(examples.size());
  for (const Example& e : examples) {
    Encoded enc{vocab.encode(tokenize(e.text), max_len), e.label};
    if (enc.ids.empty()) enc.ids.push_back(Vocab::kUnk);  // keeps every row attendable and poolable
    out.push_back(std::move(enc));
  }
  return out;
}

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
  return {t, tg::eq(t, double(Vocab::kPad)), tg::index_tensor(labels, {B})};
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
