#pragma once
// Sub-word features for the sentiment example (fastText: Bojanowski et al., "Enriching Word Vectors with
// Subword Information", TACL 2017): a token's character n-grams, hashed into a fixed number of buckets, so
// that rare and unseen words ("disappointing" next to "disappointed") share vectors with words seen in
// training. The hash is part of a saved model's meaning: it must never change.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sentiment {

/// Shortest and longest n-gram, and the most n-grams kept per token (a token of 17 bytes has 48; longer
/// tokens keep their first 48, 3-grams first). fastText's defaults are 3 and 6.
inline constexpr int64_t kSubwordMinN = 3, kSubwordMaxN = 5, kMaxSubwords = 48;

/// 32-bit FNV-1a (Fowler, Noll, Vo): h = 2166136261; for each byte b: h = (h xor b) * 16777619 mod 2^32.
/// fnv1a_32("") = 0x811c9dc5, fnv1a_32("a") = 0xe40c292c.
uint32_t fnv1a_32(std::string_view bytes);

/// The n-grams of "<token>" for n = kSubwordMinN..kSubwordMaxN, all 3-grams left to right, then the
/// 4-grams, then the 5-grams: "cat" -> {"<ca", "cat", "at>", "<cat", "cat>", "<cat>"}. At most kMaxSubwords.
std::vector<std::string> char_ngrams(std::string_view token);

/// The bucket of one n-gram (or pseudo n-gram, lexicon.h): 1 + fnv1a_32(gram) % buckets, in [1, buckets].
/// buckets must be >= 1 (unchecked: subword_ids and encode_all check it).
inline int64_t subword_bucket(std::string_view gram, int64_t buckets) {
  return 1 + int64_t(fnv1a_32(gram) % uint64_t(buckets));
}

/// The bucket ids of char_ngrams(token): 1 + fnv1a_32(ngram) % buckets, in [1, buckets] (0 is left for
/// padding). ValueError for buckets < 1.
std::vector<int64_t> subword_ids(std::string_view token, int64_t buckets);

}  // namespace sentiment
