// Tests for the sentiment example's data layer: tokenizer, vocabulary, TSV/CSV reader and splits.
// Needs the compile definition SENTIMENT_DATA_DIR = path of examples/sentiment/data (the bundled TSV).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "core/error.h"
#include "dataset.h"
#include "text.h"

#ifndef SENTIMENT_DATA_DIR
#error "define SENTIMENT_DATA_DIR as the path of examples/sentiment/data"
#endif

using namespace sentiment;
namespace fs = std::filesystem;
using Strings = std::vector<std::string>;

namespace {

// A fresh directory under the system temp dir, removed with everything in it at scope exit.
struct TempDir {
  fs::path path;
  TempDir() {
    std::random_device rd;
    path = fs::temp_directory_path() / ("sentiment_data_test_" + std::to_string(rd()) + std::to_string(rd()));
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  // Writes `contents` byte for byte to `name` in this dir and returns its path.
  std::string write(const std::string& name, const std::string& contents) const {
    std::ofstream(path / name, std::ios::binary) << contents;
    return (path / name).string();
  }
};

const std::string kBundled = std::string(SENTIMENT_DATA_DIR) + "/sentences.tsv";

}  // namespace

// ---------------------------------------------------------------------------------------------- tokenize

TEST_CASE("tokenize keeps apostrophes inside tokens") {
  CHECK(tokenize("Don't stop, 'tis rock 'n' roll") == Strings{"don't", "stop", "'tis", "rock", "'n'", "roll"});
}

TEST_CASE("tokenize keeps digits and splits at every other character") {
  CHECK(tokenize("10/10, 2nd-best $5.99") == Strings{"10", "10", "2nd", "best", "5", "99"});
  CHECK(tokenize("great!!!the\tbest\nphone") == Strings{"great", "the", "best", "phone"});
}

TEST_CASE("tokenize lowercases ASCII only; non-ASCII bytes separate") {
  CHECK(tokenize("WORTHWHILE Great") == Strings{"worthwhile", "great"});
  CHECK(tokenize("Crema Caf\xC3\xA9 rocks") == Strings{"crema", "caf", "rocks"});  // "Café"
}

TEST_CASE("tokenize of empty or separator-only text is empty") {
  CHECK(tokenize("").empty());
  CHECK(tokenize(" .,!? -- ").empty());
}

// ---------------------------------------------------------------------------------------------- Vocab

TEST_CASE("Vocab puts <pad>, <unk> first, then descending frequency with ties alphabetical") {
  Vocab v = Vocab::build({{"b", "a", "c", "a"}, {"c", "d", "e", "e"}, {"e"}});
  // counts: e 3, a 2, c 2, b 1, d 1
  REQUIRE(v.size() == 7);
  CHECK(Strings{v.token(0), v.token(1), v.token(2), v.token(3), v.token(4), v.token(5), v.token(6)} ==
        Strings{"<pad>", "<unk>", "e", "a", "c", "b", "d"});
  CHECK(v.id("a") == 3);
  CHECK(v.id("<pad>") == Vocab::kPad);
  CHECK(v.id("zzz") == Vocab::kUnk);
  CHECK_THROWS_WITH_AS(v.token(7), doctest::Contains("id 7 out of range [0, 7)"), tg::IndexError);
  CHECK_THROWS_AS(v.token(-1), tg::IndexError);
}

TEST_CASE("Vocab min_freq drops rare tokens and max_size caps the size including specials") {
  std::vector<Strings> sentences = {{"b", "a", "c", "a"}, {"c", "d", "e", "e"}, {"e"}};
  Vocab rare = Vocab::build(sentences, {.min_freq = 2});
  CHECK(rare.size() == 5);  // <pad> <unk> e a c
  CHECK(rare.id("b") == Vocab::kUnk);
  Vocab capped = Vocab::build(sentences, {.max_size = 4});
  CHECK(capped.size() == 4);  // <pad> <unk> e a
  CHECK(capped.token(3) == "a");
  CHECK(Vocab::build({}).size() == 2);
  CHECK_THROWS_WITH_AS(Vocab::build(sentences, {.min_freq = 0}), doctest::Contains("min_freq"), tg::ValueError);
  CHECK_THROWS_WITH_AS(Vocab::build(sentences, {.max_size = 1}), doctest::Contains("max_size"), tg::ValueError);
}

TEST_CASE("Vocab::encode maps unknown tokens to <unk> and truncates to max_len") {
  Vocab v = Vocab::build({{"good", "good", "bad"}});  // good 2, bad 3
  Strings tokens = {"good", "movie", "bad", "good"};
  CHECK(v.encode(tokens) == std::vector<int64_t>{2, 1, 3, 2});
  CHECK(v.encode(tokens, 2) == std::vector<int64_t>{2, 1});
  CHECK(v.encode(tokens, 10).size() == 4);  // shorter than max_len: not padded
  CHECK(v.encode({}, 3).empty());
  CHECK_THROWS_AS(v.encode(tokens, -1), tg::ValueError);
}

TEST_CASE("Vocab save/load roundtrips") {
  TempDir dir;
  Vocab v = Vocab::build({tokenize("the movie was good, the end"), tokenize("don't watch the movie")});
  std::string path = (dir.path / "vocab.txt").string();
  v.save(path);
  Vocab w = Vocab::load(path);
  REQUIRE(w.size() == v.size());
  for (int64_t i = 0; i < v.size(); ++i) CHECK(w.token(i) == v.token(i));
  CHECK(w.id("don't") == v.id("don't"));
  CHECK(w.id("unseen") == Vocab::kUnk);
}

TEST_CASE("Vocab::load names the file and line of each problem") {
  TempDir dir;
  std::string empty = dir.write("empty.txt", "");
  CHECK_THROWS_WITH_AS(Vocab::load(empty), doctest::Contains("empty.txt:1: empty file"), tg::ValueError);
  std::string no_pad = dir.write("no_pad.txt", "<unk>\n<pad>\nthe\n");
  CHECK_THROWS_WITH_AS(Vocab::load(no_pad), doctest::Contains("no_pad.txt:1: expected '<pad>', got '<unk>'"),
                       tg::ValueError);
  std::string no_unk = dir.write("no_unk.txt", "<pad>\nthe\n<unk>\n");
  CHECK_THROWS_WITH_AS(Vocab::load(no_unk), doctest::Contains("no_unk.txt:2: expected '<unk>', got 'the'"),
                       tg::ValueError);
  std::string only_pad = dir.write("only_pad.txt", "<pad>\n");
  CHECK_THROWS_WITH_AS(Vocab::load(only_pad), doctest::Contains("only_pad.txt:2: missing '<unk>'"), tg::ValueError);
  std::string dup = dir.write("dup.txt", "<pad>\n<unk>\nthe\na\nthe\n");
  CHECK_THROWS_WITH_AS(Vocab::load(dup), doctest::Contains("dup.txt:5: duplicate token 'the' (first on line 3)"),
                       tg::ValueError);
  std::string blank = dir.write("blank.txt", "<pad>\n<unk>\n\nthe\n");
  CHECK_THROWS_WITH_AS(Vocab::load(blank), doctest::Contains("blank.txt:3: empty token"), tg::ValueError);
  std::string missing = (dir.path / "missing.txt").string();
  CHECK_THROWS_WITH_AS(Vocab::load(missing), doctest::Contains(missing.c_str()), tg::ValueError);
}

// ---------------------------------------------------------------------------------------------- bundled data

TEST_CASE("the bundled TSV holds all 1000 sentences of each source, repeats included") {
  std::vector<Example> all = read_examples(kBundled);
  REQUIRE(all.size() == 3000);
  std::map<std::string, int64_t> per_source;
  for (const Example& e : all) {
    ++per_source[e.source];
    CHECK((e.label == 0 || e.label == 1));
    CHECK(!tokenize(e.text).empty());
  }
  CHECK(per_source == std::map<std::string, int64_t>{{"amazon", 1000}, {"imdb", 1000}, {"yelp", 1000}});
  CHECK(all.front().text == "So there is no way for me to plug it in here in the US unless I go by a converter.");
  CHECK(all.front().source == "amazon");
  CHECK(all.back().source == "yelp");
}

TEST_CASE("split_reference makes every 5th sentence per source the test set") {
  std::vector<Example> all = read_examples(kBundled);
  Split split = split_reference(all);
  CHECK(split.test.size() == 600);  // 1000/5 per source: the fixed split, comparable with other frameworks
  CHECK(split.train.size() == 2400);
  std::map<std::string, int64_t> test_per_source;
  for (const Example& e : split.test) ++test_per_source[e.source];
  CHECK(test_per_source == std::map<std::string, int64_t>{{"amazon", 200}, {"imdb", 200}, {"yelp", 200}});
  // Recompute independently from the row order of the file.
  std::map<std::string, int64_t> index;
  std::vector<const Example*> expected_test, expected_train;
  for (const Example& e : all) (index[e.source]++ % 5 == 4 ? expected_test : expected_train).push_back(&e);
  REQUIRE(expected_test.size() == split.test.size());
  for (size_t i = 0; i < split.test.size(); ++i) {
    CHECK(split.test[i].text == expected_test[i]->text);
    CHECK(split.test[i].source == expected_test[i]->source);
  }
  CHECK(split.train.back().text == expected_train.back()->text);
  CHECK(split.test.front().text == all[4].text);
}

TEST_CASE("split_reference counts each source separately") {
  std::vector<Example> rows;
  for (int i = 0; i < 7; ++i) rows.push_back({"a" + std::to_string(i), 0, "a"});
  for (int i = 0; i < 6; ++i) rows.push_back({"b" + std::to_string(i), 1, "b"});
  Split split = split_reference(rows);
  REQUIRE(split.test.size() == 2);
  CHECK(split.test[0].text == "a4");
  CHECK(split.test[1].text == "b4");
  CHECK(split.train.size() == 11);
}

// ---------------------------------------------------------------------------------------------- split_validation

TEST_CASE("split_validation is deterministic, disjoint, order-preserving and sized round(fraction * n)") {
  std::vector<Example> train;
  for (int i = 0; i < 101; ++i) train.push_back({std::to_string(i), i % 2, "s"});
  auto [rest, val] = split_validation(train, 0.1, 42);
  CHECK(val.size() == 10);
  CHECK(rest.size() == 91);
  std::set<std::string> seen;
  for (const auto* part : {&rest, &val}) {
    for (size_t i = 0; i < part->size(); ++i) {
      seen.insert((*part)[i].text);
      if (i > 0) CHECK(std::stoi((*part)[i - 1].text) < std::stoi((*part)[i].text));
    }
  }
  CHECK(seen.size() == 101);
  auto [rest2, val2] = split_validation(train, 0.1, 42);
  auto [rest3, val3] = split_validation(train, 0.1, 43);
  auto texts = [](const std::vector<Example>& v) {
    Strings t;
    for (const Example& e : v) t.push_back(e.text);
    return t;
  };
  CHECK(texts(val2) == texts(val));
  CHECK(texts(val3) != texts(val));
  CHECK(split_validation(train, 0.0, 1).second.empty());
  CHECK(split_validation(train, 1.0, 1).first.empty());
  CHECK_THROWS_WITH_AS(split_validation(train, 1.5, 1), doctest::Contains("fraction"), tg::ValueError);
}

TEST_CASE("assign_folds is deterministic per seed and balances fold sizes within one") {
  const std::vector<int64_t> fold = assign_folds(101, 3, 42);
  REQUIRE(fold.size() == 101);
  std::vector<int64_t> size(3, 0);
  for (int64_t f : fold) {
    REQUIRE(f >= 0);
    REQUIRE(f < 3);
    ++size[size_t(f)];
  }
  CHECK(size == std::vector<int64_t>{34, 34, 33});
  CHECK(assign_folds(101, 3, 42) == fold);
  CHECK(assign_folds(101, 3, 43) != fold);
  CHECK(assign_folds(5, 5, 1).size() == 5);
  CHECK_THROWS_WITH_AS(assign_folds(4, 5, 1), doctest::Contains("k = 5 for n = 4"), tg::ValueError);
  CHECK_THROWS_WITH_AS(assign_folds(4, 0, 1), doctest::Contains("k = 0"), tg::ValueError);
}

// ---------------------------------------------------------------------------------------------- read_examples

TEST_CASE("read_examples reads RFC 4180 CSV with quoted commas, quotes and newlines") {
  TempDir dir;
  std::string path = dir.write("reviews.csv",
                               "id,label,text\r\n"
                               "1,1,\"Great, really great\"\r\n"
                               "2,0,\"He said \"\"meh\"\", I agree\"\r\n"
                               "3,1,\"two\nlines\"\r\n"
                               "\r\n"
                               "4,0,plain 5\" screen\r\n");
  std::vector<Example> rows = read_examples(path);
  REQUIRE(rows.size() == 4);
  CHECK(rows[0].text == "Great, really great");
  CHECK(rows[0].label == 1);
  CHECK(rows[0].source.empty());  // no source column
  CHECK(rows[1].text == "He said \"meh\", I agree");
  CHECK(rows[2].text == "two\nlines");
  CHECK(rows[3].text == "plain 5\" screen");  // a quote inside an unquoted field is literal
}

TEST_CASE("read_examples reads TSV literally and sniffs the format of other extensions") {
  TempDir dir;
  std::string tsv = "source\ttext\tlabel\nimdb\t\"Quoted\" start, and comma\t1\n";
  std::vector<Example> rows = read_examples(dir.write("a.tsv", tsv));
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].text == "\"Quoted\" start, and comma");
  CHECK(rows[0].source == "imdb");
  CHECK(read_examples(dir.write("a.txt", tsv)).at(0).text == rows[0].text);
  CHECK(read_examples(dir.write("b.data", "text,label\n\"x, y\",0\n")).at(0).text == "x, y");
}

TEST_CASE("read_examples accepts labels up to num_classes - 1") {
  TempDir dir;
  std::string path = dir.write("three.csv", "text,label\na,0\nb,2\n");
  CHECK(read_examples(path, {.num_classes = 3}).at(1).label == 2);
  CHECK_THROWS_WITH_AS(read_examples(path), doctest::Contains("three.csv:3: label 2 is not in [0, 2)"),
                       tg::ValueError);
}

TEST_CASE("read_examples names file and line of each malformed row") {
  TempDir dir;
  struct Case {
    const char* name;
    const char* contents;
    const char* message;
  };
  const Case cases[] = {
      {"columns.csv", "text,label\nok,1\ntoo,many,1\n", "columns.csv:3: expected 2 columns as in the header, got 3"},
      {"tab.tsv", "text\tlabel\nok\t1\na\ttab\t1\n", "tab.tsv:3: expected 2 columns as in the header, got 3"},
      {"word.csv", "text,label\nok,1\nbad,positive\n", "word.csv:3: label 'positive' is not an integer"},
      {"float.csv", "text,label\nok,1.0\n", "float.csv:2: label '1.0' is not an integer"},
      {"range.csv", "text,label\nok,-1\n", "range.csv:2: label -1 is not in [0, 2)"},
      {"empty.csv", "text,label\nok,1\n \t ,0\n", "empty.csv:3: empty text"},
      {"open.csv", "text,label\nok,1\n\"never closed,1\nnext,0\n", "open.csv:3: unterminated quoted field"},
      {"after.csv", "text,label\n\"a\"b,1\n", "after.csv:2: unexpected 'b' after closing quote"},
      {"multi.csv", "text,label\n\"two\nlines\",1\nx,y\n", "multi.csv:4: label 'y' is not an integer"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    std::string path = dir.write(c.name, c.contents);
    CHECK_THROWS_WITH_AS(read_examples(path), doctest::Contains(c.message), tg::ValueError);
  }
}

TEST_CASE("read_examples rejects a missing file, an empty file and a header without text or label") {
  TempDir dir;
  std::string missing = (dir.path / "nope.tsv").string();
  CHECK_THROWS_WITH_AS(read_examples(missing), doctest::Contains(missing.c_str()), tg::ValueError);
  CHECK_THROWS_WITH_AS(read_examples(dir.write("e.csv", "")), doctest::Contains("e.csv:1: empty file"),
                       tg::ValueError);
  CHECK_THROWS_WITH_AS(read_examples(dir.write("h.csv", "sentence,label\nhi,1\n")),
                       doctest::Contains("h.csv:1: header: no 'text' column"), tg::ValueError);
  CHECK_THROWS_WITH_AS(read_examples(dir.write("l.tsv", "text\tclass\nhi\t1\n")),
                       doctest::Contains("l.tsv:1: header: no 'label' column"), tg::ValueError);
  CHECK_THROWS_WITH_AS(read_examples(dir.write("d.csv", "text,label,text\nhi,1,x\n")),
                       doctest::Contains("d.csv:1: header: duplicate column 'text'"), tg::ValueError);
  CHECK_THROWS_WITH_AS(read_examples(dir.write("n.csv", "text,label\n"), {.num_classes = 1}),
                       doctest::Contains("num_classes"), tg::ValueError);
}

TEST_CASE("read_examples with skip_malformed skips bad rows, counts them and reads on") {
  TempDir dir;
  std::string path = dir.write("messy.csv",
                               "text,label\n"
                               "good one,1\n"
                               "no label\n"
                               "bad label,2\n"
                               ",0\n"
                               "\"unterminated,1\n"
                               "last good,0\n");
  int64_t skipped = -1;
  std::vector<Example> rows = read_examples(path, {.skip_malformed = true}, &skipped);
  CHECK(skipped == 4);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].text == "good one");
  CHECK(rows[1].text == "last good");  // reading resumes on the line after an unterminated quote
  CHECK(read_examples(path, {.skip_malformed = true}).size() == 2);  // the count is optional
  read_examples(kBundled, {.skip_malformed = true}, &skipped);
  CHECK(skipped == 0);
}
