// Reading, writing and looking up the sentiment lexicon.
#include "lexicon.h"

#include <charconv>
#include <sstream>
#include <vector>

#include "core/error.h"
#include "core/atomic_file.h"
#include "core/read_file.h"
#include "text.h"

namespace sentiment {

Lexicon Lexicon::load(const std::string& path) { return parse(tg::read_file(path, kMaxBytes, "Lexicon::load"), path); }

Lexicon Lexicon::parse(const std::string& text, const std::string& path) {
  std::istringstream in(text);
  Lexicon lex;
  std::string line;
  int64_t lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.pop_back();  // tolerate CRLF files
    const size_t tab = line.find('\t');
    tg::check<tg::ValueError>(tab != std::string::npos, "Lexicon::load: {}:{}: expected 'word<TAB>valence', got '{}'",
                              path, lineno, tg::escape_bytes(line));
    const std::string word = line.substr(0, tab), number = line.substr(tab + 1);
    const std::vector<std::string> tokens = tokenize(word);
    tg::check<tg::ValueError>(tokens.size() == 1 && tokens[0] == word,
                              "Lexicon::load: {}:{}: '{}' is not one lowercase token of [a-z0-9']", path, lineno,
                              tg::escape_bytes(word));
    int v = 0;
    auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), v);
    tg::check<tg::ValueError>(ec == std::errc() && end == number.data() + number.size() && v >= -5 && v <= 5,
                              "Lexicon::load: {}:{}: valence of '{}' must be an integer in [-5, 5], got '{}'", path,
                              lineno, word, tg::escape_bytes(number));
    tg::check<tg::ValueError>(lex.words_.emplace(word, v).second, "Lexicon::load: {}:{}: '{}' is listed twice", path,
                              lineno, word);
  }
  tg::check<tg::ValueError>(!lex.words_.empty(), "Lexicon::load: '{}' holds no entry", path);
  return lex;
}

std::string Lexicon::text() const {
  std::string out;
  for (const auto& [word, v] : words_) out += fmt::format("{}\t{}\n", word, v);
  return out;
}

void Lexicon::save(const std::string& path) const { tg::write_file_atomic(path, {text()}, "Lexicon::save"); }

std::optional<int> Lexicon::valence(std::string_view word) const {
  auto it = words_.find(word);
  if (it == words_.end()) return std::nullopt;
  return it->second;
}

std::string lexicon_feature(int valence) { return "<afinn" + std::to_string(valence) + ">"; }

}  // namespace sentiment
