// Reading the corpus and the byte vocabulary. A corpus is refused early and by name when it cannot be one:
// an empty file, or a binary one (a NUL byte, or a byte sequence that is not UTF-8), so that a wrong --data
// does not train a model on noise.
#include "text.h"

#include <sstream>
#include <utility>

#include <nlohmann/json.hpp>
#include <tensorgrad/tensorgrad.h>

namespace gpt {
namespace {

// The length of the UTF-8 sequence at text[i], or 0 when it is not one (RFC 3629: no overlong forms,
// surrogates or code points above U+10FFFF).
size_t utf8_length(const std::string& text, size_t i) {
  const auto b = [&](size_t k) { return k < text.size() ? uint8_t(text[k]) : 0; };
  const uint8_t c = b(i);
  const auto cont = [&](size_t k) { return (b(k) & 0xC0) == 0x80; };
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return cont(i + 1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    const uint8_t lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    return b(i + 1) >= lo && b(i + 1) <= hi && cont(i + 2) ? 3 : 0;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    const uint8_t lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    return b(i + 1) >= lo && b(i + 1) <= hi && cont(i + 2) && cont(i + 3) ? 4 : 0;
  }
  return 0;
}

void check_text(const std::string& text, const std::string& path) {
  tg::check<tg::ValueError>(!text.empty(), "corpus '{}' is empty", path);
  for (size_t i = 0; i < text.size();) {
    tg::check<tg::ValueError>(text[i] != '\0', "corpus '{}' is not text: a NUL byte at offset {} (a binary file?)",
                              path, i);
    const size_t n = utf8_length(text, i);
    tg::check<tg::ValueError>(n > 0, "corpus '{}' is not text: byte 0x{:02x} at offset {} is not UTF-8 (a binary "
                              "file?)", path, uint8_t(text[i]), i);
    i += n;
  }
}

}  // namespace

Corpus parse_corpus(std::string text, std::string_view splits_text, const std::string& corpus_path,
                    const std::string& splits_path) {
  Corpus c;
  c.all = std::move(text);
  check_text(c.all, corpus_path);
  tg::check<tg::ValueError>(c.all.ends_with(kSeparator), "corpus '{}' does not end with a line '%' (the fortune "
                            "format: every document is followed by a line holding only '%')", corpus_path);
  std::istringstream splits{std::string(splits_text)};
  size_t start = 0, doc = 0;
  for (std::string part; std::getline(splits, part); ++doc) {
    const size_t end = c.all.find(kSeparator, start);
    tg::check<tg::ValueError>(end != std::string::npos, "splits file '{}' has more lines than corpus '{}' has "
                              "documents ({})", splits_path, corpus_path, doc);
    std::string* to = part == "train" ? &c.train : part == "valid" ? &c.valid : part == "test" ? &c.test : nullptr;
    tg::check<tg::ValueError>(to != nullptr, "splits file '{}', line {}: expected train, valid or test, got '{}'",
                              splits_path, doc + 1, tg::escape_bytes(part));
    to->append(c.all, start, end + 3 - start);
    start = end + 3;
  }
  tg::check<tg::ValueError>(start == c.all.size(), "splits file '{}' has {} lines, fewer than corpus '{}' has "
                            "documents", splits_path, doc, corpus_path);
  return c;
}

Corpus read_corpus(const std::string& corpus_path, const std::string& splits_path) {
  std::string text = tg::read_file(corpus_path, kMaxCorpusBytes, "corpus");
  return parse_corpus(std::move(text), tg::read_file(splits_path, kMaxSplitsBytes, "splits file"), corpus_path,
                      splits_path);
}

ByteVocab ByteVocab::of(const std::string& text) {
  tg::check<tg::ValueError>(!text.empty(), "vocabulary: no text to take the bytes from");
  std::array<bool, 256> seen{};
  for (char ch : text) seen[uint8_t(ch)] = true;
  ByteVocab v;
  for (int b = 0; b < 256; ++b)
    if (seen[size_t(b)]) v.id_[size_t(b)] = int16_t(v.bytes_.size()), v.bytes_.push_back(uint8_t(b));
  return v;
}

ByteVocab ByteVocab::load(const std::string& path) {
  const std::string text = tg::read_file(path, kMaxVocabBytes, "vocabulary");
  std::vector<int64_t> bytes;
  try {
    bytes = nlohmann::json::parse(text).at("bytes").get<std::vector<int64_t>>();
  } catch (const nlohmann::json::exception& e) {
    throw tg::ValueError(fmt::format("vocabulary '{}': expected {{\"bytes\": [increasing byte values]}}: {}", path,
                                     tg::escape_bytes(e.what())));
  }
  std::string all;
  for (size_t i = 0; i < bytes.size(); ++i) {
    tg::check<tg::ValueError>(bytes[i] >= 0 && bytes[i] < 256 && (i == 0 || bytes[i] > bytes[i - 1]),
                              "vocabulary '{}': entry {} is {}; expected increasing byte values in [0, 255]", path, i,
                              bytes[i]);
    all += char(bytes[i]);
  }
  tg::check<tg::ValueError>(!all.empty(), "vocabulary '{}' is empty", path);
  return of(all);
}

void ByteVocab::save(const std::string& path) const {
  tg::write_file_atomic(path, {nlohmann::json{{"bytes", bytes_}}.dump() + "\n"}, "gpt: cannot write");
}

std::vector<int64_t> ByteVocab::encode(const std::string& text, const std::string& what) const {
  std::vector<int64_t> ids;
  ids.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const size_t n = std::max<size_t>(utf8_length(text, i), 1);  // a stray byte on its own
    for (size_t k = i; k < i + n; ++k)
      if (!contains(uint8_t(text[k]))) {
        std::string hex;
        for (size_t j = i; j < i + n; ++j) hex += fmt::format("{}{:02x}", hex.empty() ? "" : " ", uint8_t(text[j]));
        const bool printable = utf8_length(text, i) > 0 && uint8_t(text[i]) >= 0x20 && text[i] != 0x7f;
        const std::string shown = printable ? "'" + text.substr(i, n) + "' " : "";
        throw tg::ValueError(fmt::format("{}: the character {}(bytes {}) at byte offset {} is not in the model's "
                                         "vocabulary of {} bytes", what, shown, hex, i, size()));
      }
    for (size_t k = i; k < i + n; ++k) ids.push_back(id_[uint8_t(text[k])]);
    i += n;
  }
  return ids;
}

}  // namespace gpt
