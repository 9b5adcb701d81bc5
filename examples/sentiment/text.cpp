// Tokenizer and vocabulary for the sentiment example. Both are deliberately simple and byte-based (no
// Unicode tables) so a sentence tokenizes the same on every platform and the saved vocab is plain text.
#include "text.h"

#include <algorithm>
#include <sstream>
#include <map>
#include <utility>

#include "core/error.h"
#include "core/atomic_file.h"
#include "core/read_file.h"

namespace sentiment {

namespace {

const std::string kPadToken = "<pad>";
const std::string kUnkToken = "<unk>";

// Maps a byte to its token character ('A' -> 'a'), or 0 when it separates tokens. Not std::tolower: that
// depends on the locale and is undefined for negative chars (UTF-8 bytes).
char token_char(char c) {
  if (c >= 'A' && c <= 'Z') return static_cast<char>(c - 'A' + 'a');
  if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '\'') return c;
  return 0;
}

}  // namespace

std::vector<std::string> tokenize(std::string_view text) {
  std::vector<std::string> tokens;
  std::string current;
  for (char c : text) {
    if (char t = token_char(c)) {
      current += t;
    } else if (!current.empty()) {
      tokens.push_back(std::move(current));
      current.clear();
    }
  }
  if (!current.empty()) tokens.push_back(std::move(current));
  return tokens;
}

Vocab::Vocab() {
  add(kPadToken);
  add(kUnkToken);
}

void Vocab::add(const std::string& token) {
  ids_.emplace(token, size());
  tokens_.push_back(token);
}

Vocab Vocab::build(const std::vector<std::vector<std::string>>& sentences, const VocabOptions& options) {
  tg::check<tg::ValueError>(options.min_freq >= 1, "Vocab::build: min_freq must be >= 1, got {}",
                            options.min_freq);
  tg::check<tg::ValueError>(options.max_size == 0 || options.max_size >= 2,
                            "Vocab::build: max_size must be 0 (unlimited) or >= 2 for <pad> and <unk>, got {}",
                            options.max_size);
  std::map<std::string, int64_t> counts;  // ordered, so equal counts come out alphabetical below
  for (const auto& sentence : sentences)
    for (const auto& token : sentence)
      if (token != kPadToken && token != kUnkToken) ++counts[token];

  std::vector<std::pair<std::string, int64_t>> ranked(counts.begin(), counts.end());
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.second > b.second; });

  Vocab vocab;
  for (const auto& [token, count] : ranked) {
    if (count < options.min_freq) break;  // ranked by count, so the rest are rarer
    if (options.max_size != 0 && vocab.size() >= options.max_size) break;
    vocab.add(token);
  }
  return vocab;
}

std::vector<int64_t> Vocab::encode(const std::vector<std::string>& tokens, int64_t max_len) const {
  tg::check<tg::ValueError>(max_len >= 0, "Vocab::encode: max_len must be >= 0 (0 = no limit), got {}", max_len);
  size_t n = tokens.size();
  if (max_len > 0) n = std::min(n, static_cast<size_t>(max_len));
  std::vector<int64_t> ids(n);
  for (size_t i = 0; i < n; ++i) ids[i] = id(tokens[i]);
  return ids;
}

const std::string& Vocab::token(int64_t id) const {
  tg::check<tg::IndexError>(id >= 0 && id < size(), "Vocab::token: id {} out of range [0, {})", id, size());
  return tokens_[static_cast<size_t>(id)];
}

int64_t Vocab::id(const std::string& token) const {
  auto it = ids_.find(token);
  return it == ids_.end() ? kUnk : it->second;
}

void Vocab::save(const std::string& path) const {
  std::string text;
  for (const auto& token : tokens_) text += token + '\n';
  tg::write_file_atomic(path, {text}, "Vocab::save");
}

Vocab Vocab::load(const std::string& path) {
  std::istringstream in(tg::read_file(path, kMaxBytes, "Vocab::load"));
  Vocab vocab;
  vocab.tokens_.clear();
  vocab.ids_.clear();
  const std::string expected[2] = {kPadToken, kUnkToken};
  std::string line;
  int64_t lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.pop_back();  // tolerate CRLF files
    if (lineno <= 2)
      tg::check<tg::ValueError>(line == expected[lineno - 1], "Vocab::load: {}:{}: expected '{}', got '{}'", path,
                                lineno, expected[lineno - 1], tg::escape_bytes(line));
    tg::check<tg::ValueError>(!line.empty(), "Vocab::load: {}:{}: empty token", path, lineno);
    auto it = vocab.ids_.find(line);
    tg::check<tg::ValueError>(it == vocab.ids_.end(), "Vocab::load: {}:{}: duplicate token '{}' (first on line {})",
                              path, lineno, tg::escape_bytes(line), it == vocab.ids_.end() ? 0 : it->second + 1);
    vocab.add(line);
  }
  tg::check<tg::ValueError>(lineno > 0, "Vocab::load: {}:1: empty file, expected '{}' and '{}'", path, kPadToken,
                            kUnkToken);
  tg::check<tg::ValueError>(lineno > 1, "Vocab::load: {}:2: missing '{}' after '{}'", path, kUnkToken, kPadToken);
  return vocab;
}

}  // namespace sentiment
