// Reading labelled sentences from TSV/CSV and splitting them. The reader is strict by default: every bad
// row is an error that names file:line, because a silently dropped or mis-split row shifts the reference
// split and every accuracy number after it. `skip_malformed` is the explicit opt-out for messy files.
#include "dataset.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <numeric>
#include <optional>
#include <random>
#include <unordered_map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"
#include "core/read_file.h"

namespace sentiment {

namespace {

// A bad row, found while parsing; read_examples turns it into a ValueError or, when skipping, a count.
struct Malformed {
  int64_t line;
  std::string what;
};

enum class Format { kTsv, kCsv };

// Splits file contents into records. TSV: one record per line, fields split at tabs, quotes are plain
// characters. CSV (RFC 4180): fields split at commas; a field that starts with '"' is quoted and may hold
// commas, newlines and "" for one quote. Blank lines are skipped. CRLF is read as LF.
class RecordReader {
 public:
  RecordReader(std::string data, Format format)
      : data_(normalize(std::move(data))),
        delim_(format == Format::kTsv ? '\t' : ','),
        quoting_(format == Format::kCsv) {}

  // Reads the next record into `fields` and its first line number into `line`; false at end of file.
  // Throws Malformed after moving past the bad line, so the caller may go on reading.
  bool next(std::vector<std::string>& fields, int64_t& line) {
    while (pos_ < data_.size() && data_[pos_] == '\n') ++pos_, ++line_;
    if (pos_ >= data_.size()) return false;
    line = line_;
    fields.assign(1, "");
    int64_t newlines = 0;  // inside quoted fields
    size_t i = pos_;
    while (i < data_.size() && data_[i] != '\n') {
      char c = data_[i];
      if (c == delim_) {
        fields.emplace_back();
        ++i;
      } else if (quoting_ && c == '"' && (i == pos_ || data_[i - 1] == delim_)) {
        i = parse_quoted(i, fields.back(), newlines);
      } else {
        fields.back() += c;
        ++i;
      }
    }
    pos_ = std::min(i + 1, data_.size());
    line_ += newlines + 1;
    return true;
  }

 private:
  // Appends the quoted field opening at data_[open] to `field`; returns the index just past the closing
  // quote, which must be followed by a delimiter or the end of the line.
  size_t parse_quoted(size_t open, std::string& field, int64_t& newlines) {
    size_t i = open + 1;
    for (;; ++i) {
      if (i >= data_.size()) fail(pos_, line_, "unterminated quoted field (no closing '\"' before end of file)");
      if (data_[i] == '"' && i + 1 < data_.size() && data_[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (data_[i] == '"') {
        break;
      } else {
        newlines += data_[i] == '\n';
        field += data_[i];
      }
    }
    ++i;
    if (i < data_.size() && data_[i] != delim_ && data_[i] != '\n')
      fail(i, line_ + newlines, fmt::format("unexpected '{}' after closing quote (quotes inside a quoted field are "
                                            "written \"\")", tg::escape_bytes(data_.substr(i, 1))));
    return i;
  }

  // Drops a UTF-8 byte-order mark (Excel writes one) and turns CRLF into LF; a lone CR stays data.
  static std::string normalize(std::string data) {
    if (data.starts_with("\xEF\xBB\xBF")) data.erase(0, 3);
    std::string out;
    out.reserve(data.size());
    for (size_t i = 0; i < data.size(); ++i)
      if (!(data[i] == '\r' && i + 1 < data.size() && data[i + 1] == '\n')) out += data[i];
    return out;
  }

  // Resumes reading after the line holding data_[at] (which is line `line`), then throws.
  [[noreturn]] void fail(size_t at, int64_t line, std::string what) {
    size_t eol = data_.find('\n', at);
    pos_ = eol == std::string::npos ? data_.size() : eol + 1;
    line_ = line + 1;
    throw Malformed{line, std::move(what)};
  }

  std::string data_;
  char delim_;
  bool quoting_;
  size_t pos_ = 0;     // start of the next record
  int64_t line_ = 1;   // 1-based line number at pos_
};

// Where the columns we need sit in a row.
struct Columns {
  size_t count = 0;
  size_t text = 0, label = 0;
  std::optional<size_t> source;
};

// .tsv / .csv by extension (any case); otherwise a tab in the first line means TSV.
Format detect_format(const std::string& path, const std::string& data) {
  std::string ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](char c) { return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c; });
  if (ext == ".tsv") return Format::kTsv;
  if (ext == ".csv") return Format::kCsv;
  return data.substr(0, data.find('\n')).find('\t') != std::string::npos ? Format::kTsv : Format::kCsv;
}

std::string_view trim(std::string_view s) {
  const char* ws = " \t\r\n\f\v";
  size_t b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

// Reads the header record; a problem here is always an error, since no row can be read without it.
Columns read_header(RecordReader& reader, const std::string& path) {
  std::vector<std::string> names;
  int64_t line = 1;
  try {
    tg::check<tg::ValueError>(reader.next(names, line),
                              "read_examples: {}:1: empty file, expected a header with 'text' and 'label' columns",
                              path);
  } catch (const Malformed& m) {
    throw tg::ValueError(fmt::format("read_examples: {}:{}: header: {}", path, m.line, m.what));
  }
  Columns cols;
  cols.count = names.size();
  std::optional<size_t> text, label;
  for (size_t i = 0; i < names.size(); ++i) {
    std::string_view name = trim(names[i]);
    std::optional<size_t>* slot = nullptr;
    if (name == "text") slot = &text;
    if (name == "label") slot = &label;
    if (name == "source") slot = &cols.source;
    if (slot == nullptr) continue;  // extra columns are allowed and ignored
    tg::check<tg::ValueError>(!slot->has_value(), "read_examples: {}:{}: header: duplicate column '{}'", path, line,
                              tg::escape_bytes(name));
    *slot = i;
  }
  for (auto [col, name] : {std::pair{&text, "text"}, std::pair{&label, "label"}})
    tg::check<tg::ValueError>(col->has_value(), "read_examples: {}:{}: header: no '{}' column (header is '{}')", path,
                              line, name, tg::escape_bytes(fmt::format("{}", fmt::join(names, "', '"))));
  cols.text = *text;
  cols.label = *label;
  return cols;
}

int64_t parse_label(std::string_view field, int64_t num_classes, int64_t line) {
  std::string_view s = trim(field);
  int64_t label = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), label);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size())
    throw Malformed{line, fmt::format("label '{}' is not an integer", tg::escape_bytes(field))};
  if (label < 0 || label >= num_classes)
    throw Malformed{line, fmt::format("label {} is not in [0, {})", label, num_classes)};
  return label;
}

Example to_example(std::vector<std::string>& fields, int64_t line, const Columns& cols, const ReadOptions& options) {
  if (fields.size() != cols.count)
    throw Malformed{line, fmt::format("expected {} columns as in the header, got {}", cols.count, fields.size())};
  if (trim(fields[cols.text]).empty()) throw Malformed{line, "empty text"};
  int64_t label = parse_label(fields[cols.label], options.num_classes, line);
  std::string source = cols.source ? std::move(fields[*cols.source]) : std::string();
  return Example{std::move(fields[cols.text]), label, std::move(source)};
}

// A uniform draw from [0, bound) by rejection. Not std::uniform_int_distribution: its output differs
// between standard libraries, and the validation split must not.
uint64_t uniform_below(std::mt19937_64& rng, uint64_t bound) {
  uint64_t threshold = (0 - bound) % bound;  // 2^64 mod bound: draws below it would bias the modulo
  uint64_t x = rng();
  while (x < threshold) x = rng();
  return x % bound;
}

// 0 .. n-1 in the order of a Fisher-Yates shuffle driven by std::mt19937_64(seed).
std::vector<size_t> shuffled_indices(size_t n, uint64_t seed) {
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::mt19937_64 rng(seed);
  for (size_t i = n; i > 1; --i) std::swap(order[i - 1], order[uniform_below(rng, i)]);
  return order;
}

}  // namespace

FileStamp stamp_of(std::string_view bytes) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a, 64 bits
  for (char c : bytes) h = (h ^ uint8_t(c)) * 1099511628211ull;
  return {int64_t(bytes.size()), fmt::format("{:016x}", h)};
}

std::string FileStamp::str() const { return fmt::format("{} bytes, FNV-1a {}", bytes, fnv1a64); }

std::vector<Example> read_examples(const std::string& path, const ReadOptions& options, int64_t* num_skipped,
                                   FileStamp* stamp) {
  tg::check<tg::ValueError>(options.num_classes >= 2, "read_examples: num_classes must be >= 2, got {}",
                            options.num_classes);
  std::string data = tg::read_file(path, kMaxDataBytes, "read_examples");
  if (stamp != nullptr) *stamp = stamp_of(data);
  Format format = detect_format(path, data);
  RecordReader reader(std::move(data), format);
  Columns cols = read_header(reader, path);

  std::vector<Example> examples;
  std::vector<std::string> fields;
  int64_t line = 0, skipped = 0;
  for (;;) {
    try {
      if (!reader.next(fields, line)) break;
      examples.push_back(to_example(fields, line, cols, options));
    } catch (const Malformed& m) {
      if (!options.skip_malformed) throw tg::ValueError(fmt::format("read_examples: {}:{}: {}", path, m.line, m.what));
      ++skipped;
    }
  }
  if (num_skipped != nullptr) *num_skipped = skipped;
  return examples;
}

Split split_reference(const std::vector<Example>& examples) {
  Split split;
  std::unordered_map<std::string, int64_t> seen;  // source -> examples of it so far
  for (const Example& e : examples) {
    int64_t index = seen[e.source]++;
    (index % 5 == 4 ? split.test : split.train).push_back(e);
  }
  return split;
}

std::pair<std::vector<Example>, std::vector<Example>> split_validation(const std::vector<Example>& train,
                                                                       double fraction, uint64_t seed) {
  tg::check<tg::ValueError>(std::isfinite(fraction) && fraction >= 0.0 && fraction <= 1.0,
                            "split_validation: fraction must be in [0, 1], got {}", fraction);
  size_t n = train.size();
  auto num_validation = static_cast<size_t>(std::llround(fraction * static_cast<double>(n)));

  std::vector<size_t> order = shuffled_indices(n, seed);
  std::vector<bool> is_validation(n, false);
  for (size_t k = 0; k < num_validation; ++k) is_validation[order[k]] = true;
  std::pair<std::vector<Example>, std::vector<Example>> out;
  for (size_t i = 0; i < n; ++i) (is_validation[i] ? out.second : out.first).push_back(train[i]);
  return out;
}

std::vector<int64_t> assign_folds(size_t n, int64_t k, uint64_t seed) {
  tg::check<tg::ValueError>(k >= 1 && uint64_t(k) <= n, "assign_folds: need 1 <= k <= n, got k = {} for n = {}", k, n);
  std::vector<size_t> order = shuffled_indices(n, seed);
  std::vector<int64_t> fold(n);
  for (size_t i = 0; i < n; ++i) fold[order[i]] = int64_t(i % uint64_t(k));
  return fold;
}

}  // namespace sentiment
