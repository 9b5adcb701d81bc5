// Tests for the sentiment example's batching: encoding (<unk> for empty sentences, truncation, sub-words),
// padded batches with their masks, labels and sub-words, and the loaders' epoch orders.
#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <numeric>
#include <vector>

#include "batch.h"
#include "subword.h"

using namespace sentiment;
using Ids = std::vector<int64_t>;

namespace {

// Three sentences of lengths 3, 1, 2; ids >= 2 (never <pad> or <unk>), labels 1, 0, 1.
std::vector<Encoded> three_sentences() { return {{{5, 6, 7}, 1}, {{8}, 0}, {{9, 10}, 1}}; }

// n sentences where row i is the single token i + 2 with label i, so a batch's labels name its rows.
std::vector<Encoded> numbered(int64_t n) {
  std::vector<Encoded> out;
  for (int64_t i = 0; i < n; ++i) out.push_back({{i + 2}, i});
  return out;
}

// The rows (labels) of one epoch of `loader`, concatenated in batch order; the batch sizes in `sizes`.
Ids epoch_rows(tg::data::DataLoader& loader, Ids* sizes = nullptr) {
  Ids out;
  for (const tg::data::Batch& batch : loader) {
    const Batch b = Batch::of(batch);
    if (sizes) sizes->push_back(b.size());
    Ids l = b.labels.to_vector<int64_t>();
    out.insert(out.end(), l.begin(), l.end());
  }
  return out;
}

Ids iota(int64_t n) {
  Ids out(static_cast<size_t>(n));
  std::iota(out.begin(), out.end(), 0);
  return out;
}

}  // namespace

TEST_CASE("make_batch pads to the longest sentence with <pad> and keeps the labels") {
  Batch b = make_batch(three_sentences(), {0, 1, 2});
  REQUIRE(b.size() == 3);
  CHECK(b.tokens.shape() == tg::Shape{3, 3});
  CHECK(b.tokens.dtype() == tg::i64);
  CHECK(b.tokens.to_vector<int64_t>() == Ids{5, 6, 7, 8, 0, 0, 9, 10, 0});
  CHECK(b.labels.shape() == tg::Shape{3});
  CHECK(b.labels.to_vector<int64_t>() == Ids{1, 0, 1});
}

TEST_CASE("make_batch pad_mask is true exactly at the padding") {
  Batch b = make_batch(three_sentences(), {0, 1, 2});
  CHECK(b.pad_mask.dtype() == tg::boolean);
  CHECK(b.pad_mask.shape() == tg::Shape{3, 3});
  CHECK(b.pad_mask.to(tg::i64).to_vector<int64_t>() == Ids{0, 0, 0, 0, 1, 1, 0, 0, 1});
}

TEST_CASE("make_batch of a subset pads to that subset's longest, in the order of the rows given") {
  Batch b = make_batch(three_sentences(), {2, 1});
  CHECK(b.tokens.shape() == tg::Shape{2, 2});
  CHECK(b.tokens.to_vector<int64_t>() == Ids{9, 10, 8, 0});
  CHECK(b.pad_mask.to(tg::i64).to_vector<int64_t>() == Ids{0, 0, 0, 1});
  CHECK(b.labels.to_vector<int64_t>() == Ids{1, 0});
  Batch one = make_batch(three_sentences(), {1});
  CHECK(one.tokens.shape() == tg::Shape{1, 1});
  CHECK(one.pad_mask.to(tg::i64).to_vector<int64_t>() == Ids{0});
}

TEST_CASE("encode_all turns a sentence without tokens into one <unk>") {
  Vocab v = Vocab::build({{"good", "movie"}});
  std::vector<Encoded> e = encode_all({{"?!... --", 1, ""}, {"", 0, ""}, {"Good movie", 1, ""}}, v, 48);
  REQUIRE(e.size() == 3);
  CHECK(e[0].ids == Ids{Vocab::kUnk});
  CHECK(e[0].label == 1);
  CHECK(e[1].ids == Ids{Vocab::kUnk});
  CHECK(e[2].ids == Ids{v.id("good"), v.id("movie")});
  // The <unk> row is a real token: not masked, so attention and pooling always have a position.
  Batch b = make_batch(e, {0, 2});
  CHECK(b.tokens.to_vector<int64_t>() == Ids{Vocab::kUnk, 0, v.id("good"), v.id("movie")});
  CHECK(b.pad_mask.to(tg::i64).to_vector<int64_t>() == Ids{0, 1, 0, 0});
}

TEST_CASE("encode_all maps unknown words to <unk> and truncates to max_len tokens") {
  Vocab v = Vocab::build({{"a", "b", "c", "d", "e", "f"}});
  std::vector<Encoded> e = encode_all({{"a b zzz c d e f", 0, ""}, {"a b", 1, ""}}, v, 4);
  CHECK(e[0].ids == Ids{v.id("a"), v.id("b"), Vocab::kUnk, v.id("c")});
  CHECK(e[1].ids == Ids{v.id("a"), v.id("b")});
  CHECK(make_batch(e, {0, 1}).tokens.shape() == tg::Shape{2, 4});
}

TEST_CASE("encode_all with sub-word buckets lists each kept token's n-gram buckets; none for an empty sentence") {
  Vocab v = Vocab::build({{"good"}});
  std::vector<Encoded> e = encode_all({{"Good cat, good", 1, ""}, {"?!", 0, ""}}, v, 2, 16384);
  REQUIRE(e.size() == 2);
  CHECK(e[0].ids == Ids{v.id("good"), Vocab::kUnk});  // truncated to 2 tokens
  REQUIRE(e[0].subwords.size() == 2);
  CHECK(e[0].subwords[0] == subword_ids("good", 16384));
  CHECK(e[0].subwords[1] == Ids{7052, 7176, 11651, 4718, 11708, 6314});  // "cat": subword_test.cpp
  CHECK(e[1].ids == Ids{Vocab::kUnk});
  CHECK(e[1].subwords == std::vector<Ids>{Ids{}});
  CHECK(encode_all({{"good cat", 1, ""}}, v, 48)[0].subwords.empty());  // no buckets, no sub-words
}

TEST_CASE("make_batch pads sub-words with 0 to (B, S, N), N the batch's token with most n-grams") {
  Vocab v = Vocab::build({{"a"}});
  std::vector<Encoded> e = encode_all({{"cat a", 1, ""}, {"a", 0, ""}}, v, 48, 16384);
  Batch b = make_batch(e, {0, 1});
  REQUIRE(b.subwords.shape() == tg::Shape{2, 2, 6});
  const Ids a = subword_ids("a", 16384);  // one: "<a>"
  REQUIRE(a.size() == 1);
  CHECK(b.subwords.to_vector<int64_t>() == Ids{7052, 7176, 11651, 4718, 11708, 6314,  // "cat"
                                               a[0], 0, 0, 0, 0, 0,                   // "a"
                                               a[0], 0, 0, 0, 0, 0,                   // "a"
                                               0, 0, 0, 0, 0, 0});                    // <pad>
  CHECK(make_batch(e, {1}).subwords.shape() == tg::Shape{1, 1, 1});
  CHECK_FALSE(make_batch(three_sentences(), {0, 1}).subwords.defined());  // data without sub-words
}

TEST_CASE("make_loader without a sampler keeps the data order; the last batch holds the rest") {
  const std::vector<Encoded> data = numbered(10);
  std::unique_ptr<tg::data::DataLoader> loader = make_loader(data, 3);
  REQUIRE(loader->size() == 4);
  Ids sizes;
  CHECK(epoch_rows(*loader, &sizes) == iota(10));
  CHECK(sizes == Ids{3, 3, 3, 1});
  CHECK(epoch_rows(*loader) == iota(10));  // every epoch
}

TEST_CASE("make_loader's batches are make_batch's of the same rows: padded tokens, mask, sub-words") {
  Vocab v = Vocab::build({{"a"}});
  const std::vector<Encoded> e = encode_all({{"cat a", 1, ""}, {"a", 0, ""}, {"", 1, ""}}, v, 48, 16384);
  std::unique_ptr<tg::data::DataLoader> loader = make_loader(e, 3);
  const Batch b = Batch::of(*loader->begin()), expected = make_batch(e, {0, 1, 2});
  CHECK(b.tokens.to_vector<int64_t>() == Ids{v.id("cat"), v.id("a"), v.id("a"), 0, Vocab::kUnk, 0});
  CHECK(b.pad_mask.to(tg::i64).to_vector<int64_t>() == Ids{0, 0, 0, 1, 0, 1});
  CHECK(b.subwords.shape() == tg::Shape{3, 2, 6});
  CHECK(b.subwords.to_vector<int64_t>() == expected.subwords.to_vector<int64_t>());
  CHECK(b.labels.to_vector<int64_t>() == Ids{1, 0, 1});
}

TEST_CASE("SharedRandomSampler: every row once per epoch; loaders sharing a generator draw their orders in turn") {
  const std::vector<Encoded> a = numbered(37), b = numbered(20);
  tg::Generator gen(7), replay(7);
  std::unique_ptr<tg::data::DataLoader> first = make_loader(a, 8, std::make_shared<SharedRandomSampler>(37, gen));
  std::unique_ptr<tg::data::DataLoader> second = make_loader(b, 8, std::make_shared<SharedRandomSampler>(20, gen));
  for (int epoch = 0; epoch < 3; ++epoch) {
    CAPTURE(epoch);
    Ids rows_a = epoch_rows(*first), rows_b = epoch_rows(*second);
    // The orders are randperm's from the one generator: the first loader's, then the second's.
    CHECK(rows_a == tg::randperm(37, &replay).to_vector<int64_t>());
    CHECK(rows_b == tg::randperm(20, &replay).to_vector<int64_t>());
    std::sort(rows_a.begin(), rows_a.end());
    CHECK(rows_a == iota(37));
  }
  CHECK_THROWS_WITH_AS(SharedRandomSampler(-1, gen), "SharedRandomSampler: size must be >= 0, got -1", tg::ValueError);
}

TEST_CASE("make_loader rejects batch_size < 1 and empty data; EncodedDataset an index out of range") {
  const std::vector<Encoded> data = numbered(3), none;
  CHECK_THROWS_WITH_AS(make_loader(data, 0), "make_loader: batch_size must be >= 1, got 0", tg::ValueError);
  CHECK_THROWS_WITH_AS(make_loader(none, 4), "make_loader: no examples to batch", tg::ValueError);
  CHECK_THROWS_WITH_AS(EncodedDataset(data).get(3), "EncodedDataset: index 3 outside [0, 3)", tg::IndexError);
}
