// The progress bar: redrawn in place on a terminal, plain periodic lines elsewhere, ETA formatting.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "core/error.h"
#include "train/progress.h"

using namespace tg;
using namespace tg::train;

namespace {
// Everything written to f so far.
std::string contents(std::FILE* f) {
  std::rewind(f);
  std::string out;
  for (int c; (c = std::fgetc(f)) != EOF;) out += char(c);
  return out;
}
}  // namespace

TEST_CASE("on a terminal the bar redraws one line with \\r and clear() erases it") {
  std::FILE* f = std::tmpfile();
  ProgressBar bar({.total = 4, .label = "epoch 1/2", .out = f, .terminal = true, .width = 4});
  bar.update(1, {{"loss", 0.5}});
  bar.update(2, {{"loss", 0.25}});
  std::string s = contents(f);
  CHECK(s.find('\n') == std::string::npos);
  CHECK(s.find("\repoch 1/2 [##..] 2/4  loss 0.25  ") != std::string::npos);
  CHECK(s.find("ETA ") != std::string::npos);
  bar.clear();
  CHECK(contents(f).ends_with("\r"));
  std::fclose(f);
}

TEST_CASE("elsewhere the bar writes plain lines: the first, then one per interval, and the last") {
  std::FILE* f = std::tmpfile();
  ProgressBar bar({.total = 5, .out = f, .terminal = false, .interval = 3600});
  for (int64_t i = 1; i <= 5; ++i) bar.update(i);
  const std::string s = contents(f);
  CHECK(s.find('\r') == std::string::npos);
  CHECK(s.starts_with("[####"));
  CHECK(std::count(s.begin(), s.end(), '\n') == 2);
  CHECK(s.find("5/5") != std::string::npos);
  std::fclose(f);
}

TEST_CASE("durations print as m:ss and h:mm:ss; bad options are refused") {
  CHECK(ProgressBar::format_duration(65) == "1:05");
  CHECK(ProgressBar::format_duration(3723) == "1:02:03");
  CHECK(ProgressBar::format_duration(NAN) == "0:00");
  CHECK_THROWS_WITH_AS(ProgressBar({.total = 0}), "ProgressBar: total must be >= 1, got 0", ValueError);
}
