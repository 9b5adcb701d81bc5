#pragma once
// Metrics logs: one record (named numbers) per line, as CSV (spreadsheets, pandas.read_csv) or JSON Lines
// (pandas.read_json(lines=True), jq). Every write is flushed and checked, so a full disk stops the run
// with an error naming the file instead of leaving a silently short log.
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace tg::train {

/// One row: metric names and values, in column order ({"epoch", 3}, {"loss", 0.41}).
using Record = std::vector<std::pair<std::string, double>>;

/// The common part of the loggers: the file, kept open for appending.
class MetricsLogger {
 public:
  virtual ~MetricsLogger();
  MetricsLogger(const MetricsLogger&) = delete;
  MetricsLogger& operator=(const MetricsLogger&) = delete;
  /// Appends one record and flushes. tg::Error naming the file when the write fails.
  virtual void log(const Record& record) = 0;
  const std::string& path() const { return path_; }  ///< the file it writes

 protected:
  /// The most bytes read from an existing log to keep its first lines: 1 GiB.
  static constexpr int64_t kMaxKeptBytes = int64_t(1) << 30;
  /// Opens `path`, keeping its first `keep_lines` lines (a resumed run keeps the records written before
  /// its checkpoint and drops the rest; the file is replaced atomically by them) and truncating the others.
  /// Error naming the file when it cannot be opened; ValueError when it holds fewer than keep_lines lines or
  /// more than kMaxKeptBytes bytes.
  MetricsLogger(std::string path, int64_t keep_lines, const char* kind);
  /// Writes `line` and a newline, then flushes; tg::Error naming the file when the write fails.
  void write_line(const std::string& line);
  std::vector<std::string> kept_;  ///< the lines kept from the file

 private:
  std::string path_;
  const char* kind_;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file_{nullptr, &std::fclose};
};

/// CSV with a header row of the first record's names; numbers as shortest round-trip decimals, NaN as an
/// empty cell, ±inf as inf / -inf.
class CsvLogger : public MetricsLogger {
 public:
  /// keep: records of an existing file to keep (its header too); 0 starts a new file.
  explicit CsvLogger(std::string path, int64_t keep = 0);
  /// ValueError naming the file when the names differ from the header's.
  void log(const Record& record) override;

 private:
  std::string header_;
};

/// One JSON object per line, {"epoch": 3, "loss": 0.41}; NaN and ±inf (not JSON) as null.
class JsonlLogger : public MetricsLogger {
 public:
  /// keep: records (lines) of an existing file to keep; 0 starts a new file.
  explicit JsonlLogger(std::string path, int64_t keep = 0);
  void log(const Record& record) override;
};

/// `s` as a JSON string literal, quotes included.
std::string json_string(const std::string& s);

}  // namespace tg::train
