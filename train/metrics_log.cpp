// The metrics loggers. Lines are written with fputs and fflush and both results checked (an ofstream's
// failure is easy to miss); numbers use fmt's shortest round-trip form, so a log reads back bit-exact.
#include "train/metrics_log.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <sstream>

#include <fmt/format.h>

#include "core/error.h"
#include "core/atomic_file.h"
#include "core/read_file.h"

namespace tg::train {

MetricsLogger::MetricsLogger(std::string path, int64_t keep_lines, const char* kind) : path_(std::move(path)), kind_(kind) {
  check<ValueError>(keep_lines >= 0, "{} {}: lines to keep must be >= 0, got {}", kind, path_, keep_lines);
  std::string kept;  // the first keep_lines lines, each with its newline
  if (keep_lines > 0) {
    std::istringstream in(read_file(path_, kMaxKeptBytes, kind));
    for (std::string line; int64_t(kept_.size()) < keep_lines && std::getline(in, line);) kept_.push_back(line);
    check<ValueError>(int64_t(kept_.size()) == keep_lines, "{} {}: asked to keep {} lines, the file has {}", kind, path_,
                      keep_lines, kept_.size());
    for (const std::string& line : kept_) kept += line + "\n";
  }
  // The kept lines replace the file atomically (a crash here leaves the old log whole); then it is appended to.
  write_file_atomic(path_, {kept}, kind);
  file_.reset(std::fopen(path_.c_str(), "a"));
  check<Error>(file_ != nullptr, "{} {}: cannot open for writing: {}", kind, path_, std::strerror(errno));
}

MetricsLogger::~MetricsLogger() = default;

void MetricsLogger::write_line(const std::string& line) {
  const std::string text = line + "\n";
  const bool ok = std::fputs(text.c_str(), file_.get()) >= 0 && std::fflush(file_.get()) == 0;
  check<Error>(ok, "{} {}: write failed: {}", kind_, path_, std::strerror(errno));
}

namespace {

// A CSV field: quoted (quotes doubled) when it holds a comma, quote or line break (RFC 4180).
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string csv_number(double v) {
  if (std::isnan(v)) return "";
  return std::isinf(v) ? (v > 0 ? "inf" : "-inf") : fmt::format("{}", v);
}

}  // namespace

CsvLogger::CsvLogger(std::string path, int64_t keep) : MetricsLogger(std::move(path), keep > 0 ? keep + 1 : 0, "CsvLogger") {
  if (!kept_.empty()) header_ = kept_[0];
}

void CsvLogger::log(const Record& record) {
  std::string header, row;
  for (size_t i = 0; i < record.size(); ++i) {
    header += fmt::format("{}{}", i ? "," : "", csv_field(record[i].first));
    row += fmt::format("{}{}", i ? "," : "", csv_number(record[i].second));
  }
  if (header_.empty()) write_line(header_ = header);
  check<ValueError>(header == header_, "CsvLogger {}: the record's columns '{}' differ from the file's '{}'", path(),
                    header, header_);
  write_line(row);
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') out += '\\', out += char(c);
    else if (c < 0x20) out += fmt::format("\\u{:04x}", c);
    else out += char(c);
  }
  return out + "\"";
}

JsonlLogger::JsonlLogger(std::string path, int64_t keep) : MetricsLogger(std::move(path), keep, "JsonlLogger") {}

void JsonlLogger::log(const Record& record) {
  std::string line = "{";
  for (size_t i = 0; i < record.size(); ++i)
    line += fmt::format("{}{}: {}", i ? ", " : "", json_string(record[i].first),
                        std::isfinite(record[i].second) ? fmt::format("{}", record[i].second) : "null");
  write_line(line + "}");
}

}  // namespace tg::train
