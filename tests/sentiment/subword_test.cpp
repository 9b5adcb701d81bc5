// Tests for the sentiment example's sub-word features: the FNV-1a hash against its published test
// vectors, the character n-grams of a token (order, boundaries, the cap), and their bucket ids.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "subword.h"
#include "core/error.h"

using namespace sentiment;
using Strings = std::vector<std::string>;

TEST_CASE("fnv1a_32 gives the published FNV-1a test vectors") {
  // From the FNV reference test suite (Fowler/Noll/Vo, isthe.com/chongo/tech/comp/fnv).
  CHECK(fnv1a_32("") == 0x811c9dc5u);
  CHECK(fnv1a_32("a") == 0xe40c292cu);
  CHECK(fnv1a_32("foobar") == 0xbf9cf968u);
}

TEST_CASE("char_ngrams gives the 3-, 4- and 5-grams of <token>, shortest first, left to right") {
  CHECK(char_ngrams("cat") == Strings{"<ca", "cat", "at>", "<cat", "cat>", "<cat>"});
  CHECK(char_ngrams("a") == Strings{"<a>"});  // "<a>" has no 4- or 5-grams
  CHECK(char_ngrams("no") == Strings{"<no", "no>", "<no>"});
  CHECK(char_ngrams("don't").size() == 12);  // 3·5 − 3: the apostrophe is a token character
  CHECK(char_ngrams("don't")[2] == "on'");
}

TEST_CASE("char_ngrams keeps at most kMaxSubwords n-grams: a long token loses its last 5-grams") {
  const std::string t17(17, 'x'), t30 = "abcdefghijklmnopqrstuvwxyz0123";
  CHECK(char_ngrams(t17).size() == 48);  // 17 + 16 + 15: all of them
  const Strings g = char_ngrams(t30);    // 30 + 29 + 28 = 87 n-grams of which the first 48 stay
  REQUIRE(g.size() == size_t(kMaxSubwords));
  CHECK(g[0] == "<ab");
  CHECK(g[29] == "23>");    // the last 3-gram
  CHECK(g[30] == "<abc");   // then the 4-grams
  CHECK(g[47] == "qrst");   // the 18th 4-gram
}

TEST_CASE("subword_ids are 1 + fnv1a_32(ngram) % buckets, in [1, buckets]") {
  // fnv1a_32("<ca") = 0x3f97db8b = 1066916747 = 65119 · 16384 + 7051, so 7052; and so on (pytorch_check.py agrees).
  CHECK(subword_ids("cat", 16384) == std::vector<int64_t>{7052, 7176, 11651, 4718, 11708, 6314});
  CHECK(subword_ids("cat", 1) == std::vector<int64_t>(6, 1));
  for (int64_t id : subword_ids("disappointing", 7)) CHECK((id >= 1 && id <= 7));
  CHECK_THROWS_WITH_AS(subword_ids("cat", 0), doctest::Contains("buckets must be >= 1, got 0"), tg::ValueError);
}
