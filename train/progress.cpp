// The progress bar: one line, redrawn on a terminal, appended periodically elsewhere.
#include "train/progress.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/error.h"

namespace tg::train {

ProgressBar::ProgressBar(ProgressBarOptions options)
    : options_(std::move(options)), start_(std::chrono::steady_clock::now()), last_line_(start_) {
  check<ValueError>(options_.total >= 1, "ProgressBar: total must be >= 1, got {}", options_.total);
  check<ValueError>(options_.width >= 1, "ProgressBar: width must be >= 1, got {}", options_.width);
  check<ValueError>(options_.interval >= 0, "ProgressBar: interval must be >= 0, got {}", options_.interval);
  check<ValueError>(options_.out != nullptr, "ProgressBar: no output stream given");
  terminal_ = options_.terminal.value_or(isatty(fileno(options_.out)) == 1);
}

double ProgressBar::elapsed_seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

std::string ProgressBar::format_duration(double seconds) {
  const int64_t s = std::isfinite(seconds) ? std::max<int64_t>(0, int64_t(std::llround(seconds))) : 0;
  if (s >= 3600) return fmt::format("{}:{:02d}:{:02d}", s / 3600, s / 60 % 60, s % 60);
  return fmt::format("{}:{:02d}", s / 60, s % 60);
}

void ProgressBar::update(int64_t done, const Metrics& metrics) {
  done = std::clamp<int64_t>(done, 0, options_.total);
  const auto now = std::chrono::steady_clock::now();
  const bool last = done == options_.total;
  if (!terminal_ && printed_ && !last &&
      std::chrono::duration<double>(now - last_line_).count() < options_.interval)
    return;
  const double elapsed = elapsed_seconds();
  const int64_t filled = done * options_.width / options_.total;
  std::string line = options_.label.empty() ? "" : options_.label + " ";
  line += fmt::format("[{}{}] {}/{}", std::string(size_t(filled), '#'), std::string(size_t(options_.width - filled), '.'),
                      done, options_.total);
  for (const auto& [name, value] : metrics) line += fmt::format("  {} {:.4g}", name, value);
  if (done > 0) line += fmt::format("  {:.3g} it/s  ETA {}", double(done) / std::max(elapsed, 1e-9),
                                    format_duration(elapsed / double(done) * double(options_.total - done)));
  if (terminal_) {
    // Spaces over what is left of a longer previous line.
    std::fputs(fmt::format("\r{}{}", line, std::string(drawn_ > line.size() ? drawn_ - line.size() : 0, ' ')).c_str(),
               options_.out);
    drawn_ = line.size();
  } else {
    std::fputs((line + "\n").c_str(), options_.out);
    printed_ = true, last_line_ = now;
  }
  std::fflush(options_.out);
}

void ProgressBar::clear() {
  if (!terminal_ || drawn_ == 0) return;
  std::fputs(fmt::format("\r{}\r", std::string(drawn_, ' ')).c_str(), options_.out);
  std::fflush(options_.out);
  drawn_ = 0;
}

}  // namespace tg::train
