#pragma once
// Text to token ids for the sentiment example: a tokenizer and a frequency-ordered vocabulary.
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace sentiment {

/// Lowercases ASCII and returns the maximal runs of [a-z0-9']; every other byte (incl. UTF-8) separates.
/// "Don't BUY it, 10/10!" -> {"don't", "buy", "it", "10", "10"}.
std::vector<std::string> tokenize(std::string_view text);

/// How `Vocab::build` filters tokens. max_size caps size() including <pad> and <unk>; 0 = unlimited.
struct VocabOptions {
  int64_t min_freq = 1;
  int64_t max_size = 0;
};

/// Token <-> id map: 0 = <pad>, 1 = <unk>, then tokens by descending training frequency, ties alphabetical.
class Vocab {
 public:
  static constexpr int64_t kPad = 0;
  static constexpr int64_t kUnk = 1;

  /// Only <pad> and <unk>.
  Vocab();
  /// Counts tokens over tokenized training sentences; throws ValueError for min_freq < 1 or max_size 1.
  static Vocab build(const std::vector<std::vector<std::string>>& sentences, const VocabOptions& options = {});
  /// The most bytes load() reads: 256 MiB.
  static constexpr int64_t kMaxBytes = int64_t(1) << 28;
  /// Reads a file written by save(): one token per line, <pad> and <unk> first, no duplicates or blanks.
  /// Throws ValueError naming the file and line, or the file when it cannot be read or exceeds kMaxBytes.
  static Vocab load(const std::string& path);
  /// Writes one token per line, in id order, atomically (tg::write_file_atomic); tg::Error naming the file
  /// when a write fails.
  void save(const std::string& path) const;

  /// Ids of `tokens`, unknown ones as kUnk, truncated to max_len (0 = no limit). Does not pad.
  std::vector<int64_t> encode(const std::vector<std::string>& tokens, int64_t max_len = 0) const;
  /// The token with this id; IndexError when id is not in [0, size()).
  const std::string& token(int64_t id) const;
  /// The id of `token`, kUnk when it is not in the vocabulary.
  int64_t id(const std::string& token) const;
  /// Number of ids, including <pad> and <unk>.
  int64_t size() const { return static_cast<int64_t>(tokens_.size()); }

 private:
  void add(const std::string& token);

  std::vector<std::string> tokens_;                // id -> token
  std::unordered_map<std::string, int64_t> ids_;   // token -> id
};

}  // namespace sentiment
