#pragma once
// Labelled sentences for the sentiment example: reading TSV/CSV files and the train/test/validation splits.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sentiment {

/// One labelled sentence. `source` is "" when the file has no source column.
struct Example {
  std::string text;
  int64_t label;
  std::string source;
};

/// How `read_examples` validates rows.
struct ReadOptions {
  int64_t num_classes = 2;      // labels must be integers in [0, num_classes)
  bool skip_malformed = false;  // skip and count malformed rows instead of throwing
};

/// The most bytes read_examples reads from one file: 256 MiB (the bundled data is 0.2 MB).
inline constexpr int64_t kMaxDataBytes = int64_t(1) << 28;

/// A file's size and FNV-1a 64 hash (16 hex digits): which data file a model was trained on, and whether a
/// saved lexicon is whole. Empty (0 bytes, no hash) when unknown.
struct FileStamp {
  int64_t bytes = 0;
  std::string fnv1a64;
  bool operator==(const FileStamp&) const = default;
  /// "1234 bytes, FNV-1a 0123456789abcdef"
  std::string str() const;
};
FileStamp stamp_of(std::string_view bytes);

/// Reads a TSV (.tsv: tab-separated, no quoting) or CSV (.csv: comma, RFC 4180 quotes) file; other
/// extensions are sniffed from the header (a tab means TSV). The header needs `text` and `label`, any
/// order; `source` is optional, other columns are ignored. Throws ValueError naming file:line and problem, and
/// naming the file when it cannot be read or is larger than kMaxDataBytes. `stamp` receives the file's stamp.
std::vector<Example> read_examples(const std::string& path, const ReadOptions& options = {},
                                   int64_t* num_skipped = nullptr, FileStamp* stamp = nullptr);

/// The reference train/test split.
struct Split {
  std::vector<Example> train;
  std::vector<Example> test;
};

/// Per source, in file order: the example at index i within its source is test when i % 5 == 4.
Split split_reference(const std::vector<Example>& examples);

/// Carves round(fraction * n) examples out of `train` as {rest, validation}, both in input order. The
/// chosen ones are the first of a Fisher-Yates shuffle driven by std::mt19937_64(seed): same on every platform.
std::pair<std::vector<Example>, std::vector<Example>> split_validation(const std::vector<Example>& train,
                                                                       double fraction, uint64_t seed);

/// The fold (0 .. k-1) of each of n examples: the i-th of a Fisher-Yates shuffle driven by
/// std::mt19937_64(seed) goes to fold i % k, so fold sizes differ by at most one. ValueError unless 1 <= k <= n.
std::vector<int64_t> assign_folds(size_t n, int64_t k, uint64_t seed);

}  // namespace sentiment
