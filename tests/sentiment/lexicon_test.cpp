// Tests for the sentiment lexicon: reading (and every malformed line refused with file and line), writing,
// lookup, the bundled AFINN-165 file, and its valences joining the sub-word bags in encode_all.
#include <doctest/doctest.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "batch.h"
#include "core/error.h"
#include "lexicon.h"
#include "subword.h"
#include "temp_dir.h"

using namespace sentiment;
using sentiment_test::TempDir;
using Ids = std::vector<int64_t>;

TEST_CASE("Lexicon::load reads word<TAB>valence lines; save writes them back sorted; valence looks words up") {
  TempDir dir;
  Lexicon lex = Lexicon::load(dir.write("l.tsv", "superb\t5\nawful\t-3\r\ndon't\t0\n"));
  CHECK(lex.size() == 3);
  CHECK(lex.valence("superb") == 5);
  CHECK(lex.valence("awful") == -3);  // CRLF tolerated
  CHECK(lex.valence("don't") == 0);
  CHECK_FALSE(lex.valence("film").has_value());
  CHECK_FALSE(lex.valence("Superb").has_value());  // tokens are lowercase: no case folding here
  lex.save(dir.str() + "/out.tsv");
  Lexicon back = Lexicon::load(dir.str() + "/out.tsv");
  CHECK(back.size() == 3);
  CHECK(back.valence("awful") == -3);
  std::ifstream in(dir.path / "out.tsv");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text == "awful\t-3\ndon't\t0\nsuperb\t5\n");
}

TEST_CASE("Lexicon::load names the file and line of a malformed entry") {
  TempDir dir;
  const auto fails = [&](const std::string& contents, const std::string& message) {
    const std::string path = dir.write("bad.tsv", contents);
    CHECK_THROWS_WITH_AS(Lexicon::load(path), doctest::Contains(message.c_str()), tg::ValueError);
  };
  fails("good\t3\nbad -3\n", "bad.tsv:2: expected 'word<TAB>valence', got 'bad -3'");
  fails("fed up\t-2\n", "bad.tsv:1: 'fed up' is not one lowercase token");
  fails("Good\t3\n", "'Good' is not one lowercase token");
  fails("cover-up\t-3\n", "'cover-up' is not one lowercase token");
  fails("\t3\n", "bad.tsv:1: '' is not one lowercase token");
  fails("good\t6\n", "bad.tsv:1: valence of 'good' must be an integer in [-5, 5], got '6'");
  fails("good\t2.5\n", "got '2.5'");
  fails("good\t\n", "got ''");
  fails("good\t3\nnice\t2\ngood\t1\n", "bad.tsv:3: 'good' is listed twice");
  fails("", "holds no entry");
  CHECK_THROWS_WITH_AS(Lexicon::load(dir.str() + "/missing.tsv"), doctest::Contains("cannot open"), tg::ValueError);
}

TEST_CASE("the bundled AFINN-165 lexicon: 3325 single-token words rated -5..5") {
  Lexicon lex = Lexicon::load(SENTIMENT_DATA_DIR "/afinn.tsv");
  CHECK(lex.size() == 3325);
  CHECK(lex.valence("abhorrent") == -3);
  CHECK(lex.valence("superb") == 5);
  CHECK(lex.valence("can't") == std::nullopt);  // AFINN rates "can't stand", a phrase the converter drops
}

TEST_CASE("lexicon_feature names the valence; it cannot equal a character n-gram") {
  CHECK(lexicon_feature(-3) == "<afinn-3>");
  CHECK(lexicon_feature(2) == "<afinn2>");
  CHECK(lexicon_feature(0) == "<afinn0>");
  CHECK(subword_bucket("<afinn2>", 4096) == 1 + int64_t(fnv1a_32("<afinn2>") % 4096));
}

TEST_CASE("encode_all with a lexicon appends a rated token's valence bucket (weight times) to its n-gram bag, unknown words too") {
  TempDir dir;
  Lexicon lex = Lexicon::load(dir.write("l.tsv", "superb\t5\nawful\t-3\n"));
  Vocab v = Vocab::build({{"film"}});
  std::vector<Encoded> e = encode_all({{"Superb film, awful", 1, ""}}, v, 48, 4096, &lex);
  REQUIRE(e[0].subwords.size() == 3);
  Ids superb = subword_ids("superb", 4096), awful = subword_ids("awful", 4096);
  superb.push_back(subword_bucket("<afinn5>", 4096)), awful.push_back(subword_bucket("<afinn-3>", 4096));
  CHECK(e[0].ids == Ids{Vocab::kUnk, v.id("film"), Vocab::kUnk});
  CHECK(e[0].subwords[0] == superb);  // an unknown word still carries its valence
  CHECK(e[0].subwords[1] == subword_ids("film", 4096));
  CHECK(e[0].subwords[2] == awful);
  CHECK(encode_all({{"superb", 1, ""}}, v, 48, 4096)[0].subwords[0] == subword_ids("superb", 4096));  // no lexicon
  superb.push_back(superb.back()), superb.push_back(superb.back());
  CHECK(encode_all({{"superb", 1, ""}}, v, 48, 4096, &lex, 3)[0].subwords[0] == superb);  // weight 3: three times
  CHECK_THROWS_WITH_AS(encode_all({{"superb", 1, ""}}, v, 48, 4096, &lex, 0),
                       doctest::Contains("encode_all: lexicon_weight must be >= 1, got 0"), tg::ValueError);
  CHECK_THROWS_WITH_AS(encode_all({{"superb", 1, ""}}, v, 48, 0, &lex),
                       doctest::Contains("encode_all: a lexicon's valences go into the sub-word buckets, but "
                                         "subword_buckets is 0"), tg::ValueError);
}
