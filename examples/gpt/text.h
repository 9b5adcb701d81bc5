#pragma once
// The GPT example's data layer: the corpus (documents and their split), and the byte vocabulary that turns
// text into token ids. Independent of the tensor library.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace gpt {

/// The three byte streams of a corpus (data/README.md): each part's documents in file order, each followed
/// by the separator "\n%\n", as in the file.
struct Corpus {
  std::string train, valid, test;
  std::string all;  ///< the whole file (the vocabulary is taken from it)
};

inline constexpr const char* kSeparator = "\n%\n";

/// Reads a fortune-format corpus (documents each followed by a line "%") and its splits file (one line
/// per document: train, valid or test). ValueError naming the file for a missing, empty or binary corpus
/// (a NUL byte, or bytes that are not UTF-8: naming the offset), one that does not end with the separator,
/// or a splits file whose line count or words do not fit.
Corpus read_corpus(const std::string& corpus_path, const std::string& splits_path);

/// The bytes a model knows, in increasing order; token id i is bytes()[i].
class ByteVocab {
 public:
  ByteVocab() { id_.fill(-1); }
  /// The distinct bytes of `text`. ValueError for empty text.
  static ByteVocab of(const std::string& text);
  /// Reads vocab.json ({"bytes": [9, 10, 32, ...]}); ValueError naming the file for a missing or malformed one.
  static ByteVocab load(const std::string& path);
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
