#pragma once
// A sentiment lexicon for the sentiment example: words rated for valence by people, so that a word rare or
// absent in the 2400 training sentences ("abhorrent", "superb") still says which way it leans. The bundled
// one is AFINN-165 (Nielsen, "A new ANEW: evaluation of a word list for sentiment analysis in microblogs",
// 2011; data/afinn.tsv, ODbL 1.0). A word's valence reaches the model as one more entry of its sub-word bag
// (lexicon_feature), so the network learns what each valence means, and in which context.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace sentiment {

/// Word -> valence, an integer in [-5, 5] (AFINN's scale: -5 very negative, +5 very positive).
class Lexicon {
 public:
  /// The most bytes load() reads: 64 MiB (AFINN-165 is 30 KB).
  static constexpr int64_t kMaxBytes = int64_t(1) << 26;
  /// Reads `word<TAB>valence` lines (data/lexicon.py writes them): each word one token of tokenize(), each
  /// valence an integer in [-5, 5], no word twice. ValueError naming the file and line otherwise, and naming
  /// the file when it cannot be read (missing, a directory, no permission), is larger than kMaxBytes or
  /// holds no entry.
  static Lexicon load(const std::string& path);
  /// load() on the file's bytes; `path` names it in the errors.
  static Lexicon parse(const std::string& text, const std::string& path);
  /// The entries as load() reads them, sorted by word: what save() writes.
  std::string text() const;
  /// Writes text() atomically (tg::write_file_atomic). tg::Error naming the file when a write fails.
  void save(const std::string& path) const;

  /// The valence of `word`, or nothing when it is not in the lexicon.
  std::optional<int> valence(std::string_view word) const;
  /// Number of words.
  int64_t size() const { return int64_t(words_.size()); }

 private:
  std::map<std::string, int, std::less<>> words_;
};

/// The pseudo n-gram that stands for a valence in a token's sub-word bag: "<afinn-3>", "<afinn2>". It is
/// hashed into the sub-word buckets like a character n-gram (subword.h), and can equal none (those have at
/// most 5 bytes). Part of a saved model's meaning: it must never change.
std::string lexicon_feature(int valence);

}  // namespace sentiment
