// The SVG pictures of the sentiment example are well-formed XML whatever bytes the sentence holds.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "report.h"

using namespace sentiment;

// `sentiment attend --model m $'\xff\xfe bad'` wrote the raw bytes into the SVG, which rsvg-convert and
// browsers then refused: "XML parse error: Input is not proper UTF-8".
TEST_CASE("attention_svg replaces bytes that are not UTF-8 and XML's forbidden control characters by U+FFFD") {
  const std::string bad = "\xff\xfe bad \xc3( \xed\xa0\x80 \xe0\x80\xaf \x01";  // stray, truncated, surrogate, overlong, control
  std::vector<tg::Tensor> weights = {tg::full({1, 2, 2}, 0.5)};  // one layer, one head, two tokens
  std::string svg = attention_svg({"caf\xc3\xa9", "\xf0\x9f\x98\x80<&>"}, weights, bad);
  CHECK(svg.find('\xff') == std::string::npos);
  CHECK(svg.find('\x01') == std::string::npos);
  CHECK(svg.find("\xed\xa0\x80") == std::string::npos);
  CHECK(svg.find("\xe0\x80\xaf") == std::string::npos);
  CHECK(svg.find("\xef\xbf\xbd\xef\xbf\xbd bad \xef\xbf\xbd( \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd "
                 "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd \xef\xbf\xbd") != std::string::npos);
  CHECK(svg.find("caf\xc3\xa9") != std::string::npos);                // valid UTF-8 is kept as it is
  CHECK(svg.find("\xf0\x9f\x98\x80&lt;&amp;&gt;") != std::string::npos);  // 4-byte sequence, markup escaped
}

TEST_CASE("attention_svg labels each panel with its layer and head, and for an ensemble its network") {
  std::vector<tg::Tensor> weights(4, tg::full({2, 1, 1}, 1.0));  // 2 networks x 2 layers, 2 heads, one token
  std::string svg = attention_svg({"fine"}, weights, "t", /*networks=*/2);
  CHECK(svg.find(">network 0 layer 0 head 0, entropy -<") != std::string::npos);  // one key: no entropy
  CHECK(svg.find(">network 1 layer 1 head 1, entropy -<") != std::string::npos);
  CHECK(svg.find(">network 2 ") == std::string::npos);
  svg = attention_svg({"fine"}, weights, "t");
  CHECK(svg.find(">layer 3 head 1, entropy -<") != std::string::npos);
  CHECK(svg.find("network") == std::string::npos);
}

TEST_CASE("attention_entropy is 1 for even attention, 0 for one key per query, and in between otherwise") {
  // Layer 0: head 0 even over 4 keys, head 1 each query on one key. Layer 1: head 0 half on each of two
  // keys (log 2 / log 4 = 0.5), head 1 one query even and three on one key (mean 0.25).
  tg::Tensor even = tg::full({4, 4}, 0.25), one = tg::eye(4);
  tg::Tensor halves = tg::tensor({0.5, 0.5, 0, 0, 0.5, 0.5, 0, 0, 0.5, 0.5, 0, 0, 0.5, 0.5, 0, 0}, {4, 4});
  tg::Tensor mixed = tg::cat({even.narrow(0, 0, 1), one.narrow(0, 1, 3)}, 0);
  std::vector<tg::Tensor> weights = {tg::stack({even, one}, 0), tg::stack({halves, mixed}, 0)};
  std::vector<std::vector<double>> e = attention_entropy(weights);
  REQUIRE(e.size() == 2);
  REQUIRE(e[0].size() == 2);
  CHECK(e[0][0] == doctest::Approx(1.0));
  CHECK(e[0][1] == doctest::Approx(0.0));
  CHECK(e[1][0] == doctest::Approx(0.5));
  CHECK(e[1][1] == doctest::Approx(0.25));
  CHECK(std::isnan(attention_entropy({tg::full({1, 1, 1}, 1.0)})[0][0]));  // one key: nothing to choose
  CHECK_THROWS_WITH_AS(attention_entropy({tg::full({2, 3, 3}, 1.0 / 3), tg::full({2, 2, 2}, 0.5)}),
                       doctest::Contains("attention_entropy"), tg::ValueError);
  CHECK_THROWS_AS(attention_entropy({tg::full({2, 3}, 0.5)}), tg::ValueError);
}

TEST_CASE("attention_svg names the axes, draws the colour scale and shows each head's entropy") {
  std::vector<tg::Tensor> weights = {tg::stack({tg::full({2, 2}, 0.5), tg::eye(2)}, 0)};  // one layer, 2 heads
  std::string svg = attention_svg({"not", "bad"}, weights, "t");
  CHECK(svg.find(">layer 0 head 0, entropy 1.00<") != std::string::npos);
  CHECK(svg.find(">layer 0 head 1, entropy 0.00<") != std::string::npos);
  CHECK(svg.find(">query</text>") != std::string::npos);
  CHECK(svg.find(">key</text>") != std::string::npos);
  CHECK(svg.find("linearGradient") != std::string::npos);
  CHECK(svg.find("fill='url(#scale)'") != std::string::npos);
}
