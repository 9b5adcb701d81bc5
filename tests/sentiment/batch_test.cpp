// Tests for the sentiment example's batching: encoding (<unk> for empty sentences, truncation, sub-words),
// padded batches with their masks, labels and sub-words, and the shuffled epoch order.
#include <doctest/doctest.h>

#include <algorithm>
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

// The rows (labels) of every batch, concatenated in batch order.
Ids rows_of(const std::vector<Batch>& batches) {
  Ids out;
  for (const Batch& b : batches) {
    Ids l = b.labels.to_vector<int64_t>();
    out.insert(out.end(), l.begin(), l.end());
  }
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

TEST_CASE("make_batches without shuffle keeps the data order; the last batch holds the rest") {
  std::vector<Batch> batches = make_batches(numbered(10), 3, false, nullptr);
  REQUIRE(batches.size() == 4);
  CHECK(batches[0].size() == 3);
  CHECK(batches[3].size() == 1);
  Ids expected(10);
  std::iota(expected.begin(), expected.end(), 0);
  CHECK(rows_of(batches) == expected);
}

TEST_CASE("make_batches with shuffle covers every row exactly once") {
  tg::Generator gen(7);
  for (int epoch = 0; epoch < 3; ++epoch) {
    std::vector<Batch> batches = make_batches(numbered(37), 8, true, &gen);
    CHECK(batches.size() == 5);
    Ids rows = rows_of(batches);
    std::sort(rows.begin(), rows.end());
    Ids expected(37);
    std::iota(expected.begin(), expected.end(), 0);
    CHECK(rows == expected);
  }
}

TEST_CASE("make_batches shuffle order is fixed by the generator's seed") {
  tg::Generator a(3), b(3), c(4);
  Ids first = rows_of(make_batches(numbered(50), 8, true, &a));
  CHECK(first == rows_of(make_batches(numbered(50), 8, true, &b)));  // same seed, same order
  CHECK(first != rows_of(make_batches(numbered(50), 8, true, &c)));  // another seed, another order
  Ids second = rows_of(make_batches(numbered(50), 8, true, &a));    // the stream moves on per epoch
  CHECK(second != first);
  CHECK(second == rows_of(make_batches(numbered(50), 8, true, &b)));
}

TEST_CASE("make_batches rejects batch_size < 1 and empty data") {
  CHECK_THROWS_WITH_AS(make_batches(numbered(3), 0, false, nullptr),
                       doctest::Contains("batch_size must be >= 1, got 0"), tg::ValueError);
  CHECK_THROWS_WITH_AS(make_batches({}, 4, false, nullptr), doctest::Contains("no examples"), tg::ValueError);
}
