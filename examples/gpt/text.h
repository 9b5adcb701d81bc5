#pragma once
// The GPT example's data layer: the corpus (documents and their split), and the byte vocabulary that turns
// text into token ids. Independent of the tensor library.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpt {

/// The three byte streams of a corpus (data/README.md): each part's documents in file order, each followed
/// by the separator "\n%\n", as in the file.
struct Corpus {
  std::string train, valid, test;
  std::string all;  ///< the whole file (the vocabulary is taken from it)
};

inline constexpr const char* kSeparator = "\n%\n";

/// The most bytes read from a corpus: 64 MiB (the bundled one has 2.1 MB); from its splits file: 16 MiB;
/// from a vocab.json: 64 KiB (256 byte values need 1.2 KB).
inline constexpr int64_t kMaxCorpusBytes = int64_t(1) << 26, kMaxSplitsBytes = int64_t(1) << 24,
                         kMaxVocabBytes = int64_t(1) << 16;

/// The corpus of a fortune-format text `text` (documents each followed by a line "%") and its splits file's
/// contents `splits` (one line per document: train, valid or test), read from the paths named in messages.
/// ValueError naming the file for an empty or binary corpus (a NUL byte, or bytes that are not UTF-8: naming
/// the offset), one that does not end with the separator, or a splits file whose line count or words do not fit.
Corpus parse_corpus(std::string text, std::string_view splits, const std::string& corpus_path,
                    const std::string& splits_path);
/// Reads a corpus and its splits file (tg::read_file within kMaxCorpusBytes and kMaxSplitsBytes), then
/// parse_corpus. ValueError naming the file for one that is missing, unreadable or larger than its limit
/// (/dev/zero), and parse_corpus's.
Corpus read_corpus(const std::string& corpus_path, const std::string& splits_path);

/// The bytes a model knows, in increasing order; token id i is bytes()[i].
class ByteVocab {
 public:
  ByteVocab() { id_.fill(-1); }
  /// The distinct bytes of `text`. ValueError for empty text.
  static ByteVocab of(const std::string& text);
  /// Reads vocab.json ({"bytes": [9, 10, 32, ...]}); ValueError naming the file for a missing or malformed one,
  /// or one larger than kMaxVocabBytes.
  static ByteVocab load(const std::string& path);
  /// Writes vocab.json atomically (tg::write_file_atomic); tg::Error naming the file when a write fails.
  void save(const std::string& path) const;

  int64_t size() const { return int64_t(bytes_.size()); }
  const std::vector<uint8_t>& bytes() const { return bytes_; }
  bool contains(uint8_t byte) const { return id_[byte] >= 0; }
  /// Token ids of `text`. ValueError naming the first character whose bytes are not all in the vocabulary
  /// (as text and as hex bytes) and its byte offset; `what` starts the message ("prompt", "corpus").
  std::vector<int64_t> encode(const std::string& text, const std::string& what) const;
  std::string decode(int64_t id) const { return std::string(1, char(bytes_.at(size_t(id)))); }

 private:
  std::vector<uint8_t> bytes_;
  std::array<int16_t, 256> id_;  // byte -> id, -1 when absent
};

}  // namespace gpt
