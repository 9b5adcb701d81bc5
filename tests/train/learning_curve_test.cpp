// The learning-curve SVG: well-formed XML (tags balanced, text escaped), one line per series, NaN points
// left out, and errors for mismatched series.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "core/error.h"
#include "train/learning_curve.h"

using namespace tg;
using namespace tg::train;

namespace {

// Whether every element of `svg` closes in order (a small XML check: no comments or CDATA here), and
// no raw '&' or '<' appears in text or attributes.
bool well_formed(const std::string& svg) {
  std::vector<std::string> open;
  for (size_t i = 0; i < svg.size(); ++i) {
    if (svg[i] == '&' && svg.compare(i, 4, "&lt;") && svg.compare(i, 4, "&gt;") && svg.compare(i, 5, "&amp;") &&
        svg.compare(i, 5, "&#39;"))
      return false;
    if (svg[i] != '<') continue;
    const size_t end = svg.find('>', i);
    if (end == std::string::npos) return false;
    const std::string tag = svg.substr(i + 1, end - i - 1);
    if (tag.find('<') != std::string::npos) return false;
    if (tag.starts_with("/")) {
      if (open.empty() || open.back() != tag.substr(1)) return false;
      open.pop_back();
    } else if (!tag.ends_with("/")) {
      open.push_back(tag.substr(0, tag.find(' ')));
    }
    i = end;
  }
  return open.empty();
}

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("learning_curve_svg draws named series on two axes as well-formed SVG") {
  const std::string svg = learning_curve_svg(
      {{"train loss", {0.7, 0.5, 0.4}}, {"val acc <best>", {0.6, NAN, 0.8}, true}},
      {.title = "run & \xff test"});
  CHECK(svg.starts_with("<svg xmlns='http://www.w3.org/2000/svg'"));
  CHECK(well_formed(svg));
  CHECK(count(svg, "<polyline") == 2);
  CHECK(count(svg, "<circle") == 5);  // the NaN point is left out
  CHECK(svg.find("run &amp; \uFFFD test") != std::string::npos);
  CHECK(svg.find("val acc &lt;best&gt; (right)") != std::string::npos);
  CHECK(svg.find("train loss (left)") != std::string::npos);
}

TEST_CASE("learning_curve_svg refuses mismatched series and empty ranges") {
  CHECK_THROWS_WITH_AS(learning_curve_svg({{"a", {1, 2}}, {"b", {1}}}), "learning_curve_svg: series 'a' has 2 values, "
                       "'b' has 1", ValueError);
  CHECK_THROWS_AS(learning_curve_svg({}), ValueError);
  CHECK_THROWS_AS(learning_curve_svg({{"a", {1}}}, {.left_range = std::pair{1.0, 1.0}}), ValueError);
  CHECK(well_formed(learning_curve_svg({{"flat", {2, 2, 2, 2}}})));
}
