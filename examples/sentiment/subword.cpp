// Character n-grams and their hashed bucket ids (subword.h). Byte-based like the tokenizer, whose tokens
// hold only [a-z0-9'], so that a token's buckets are the same on every platform.
#include "subword.h"

#include "core/error.h"

namespace sentiment {

uint32_t fnv1a_32(std::string_view bytes) {
  uint32_t h = 2166136261u;
  for (char c : bytes) h = (h ^ uint32_t(uint8_t(c))) * 16777619u;  // unsigned: wraps mod 2^32
  return h;
}

std::vector<std::string> char_ngrams(std::string_view token) {
  const std::string word = "<" + std::string(token) + ">";
  std::vector<std::string> out;
  for (int64_t n = kSubwordMinN; n <= kSubwordMaxN; ++n)
    for (int64_t at = 0; at + n <= int64_t(word.size()) && int64_t(out.size()) < kMaxSubwords; ++at)
      out.push_back(word.substr(size_t(at), size_t(n)));
  return out;
}

std::vector<int64_t> subword_ids(std::string_view token, int64_t buckets) {
  tg::check<tg::ValueError>(buckets >= 1, "subword_ids: buckets must be >= 1, got {}", buckets);
  std::vector<int64_t> ids;
  for (const std::string& g : char_ngrams(token)) ids.push_back(subword_bucket(g, buckets));
  return ids;
}

}  // namespace sentiment
