#pragma once
// A progress bar with ETA. On a terminal it redraws one line in place (\r); into a file or pipe (a log, CI)
// it writes plain lines, one every `interval` seconds and at the end, so logs stay readable.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tg::train {

/// ProgressBar's options.
struct ProgressBarOptions {
  int64_t total = 0;        ///< steps to the end, >= 1
  std::string label = "";   ///< shown first, e.g. "epoch 3/10"
  std::FILE* out = stderr;  ///< where the bar is written
  /// Whether `out` is a terminal; unset: isatty(fileno(out)).
  std::optional<bool> terminal = std::nullopt;
  double interval = 10;  ///< seconds between plain lines (not a terminal), >= 0
  int64_t width = 24;    ///< characters of the bar, >= 1
};

/// Named values shown after the bar, in order ("loss 0.4123").
using Metrics = std::vector<std::pair<std::string, double>>;

/// One training loop's progress line with rate and ETA, redrawn on a terminal, logged plainly elsewhere.
class ProgressBar {
 public:
  /// ValueError for total < 1, width < 1, a negative interval or a null `out`.
  explicit ProgressBar(ProgressBarOptions options);
  /// After step `done` of total: "label [####....] done/total  metrics  rate it/s  ETA m:ss". The ETA is
  /// the mean time per step so far times the steps left. Write errors are ignored: progress is cosmetic.
  void update(int64_t done, const Metrics& metrics = {});
  /// On a terminal, erases the line (before the caller prints a summary); otherwise nothing.
  void clear();
  double elapsed_seconds() const;  ///< seconds since construction
  /// "m:ss", or "h:mm:ss" from an hour on.
  static std::string format_duration(double seconds);

 private:
  ProgressBarOptions options_;
  bool terminal_;
  std::chrono::steady_clock::time_point start_, last_line_;
  size_t drawn_ = 0;      // length of the line on screen (terminal)
  bool printed_ = false;  // a plain line was written
};

}  // namespace tg::train
