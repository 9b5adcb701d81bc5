// The SVG pictures of the sentiment example are well-formed XML whatever bytes the sentence holds.
#include <doctest/doctest.h>

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
  CHECK(svg.find(">network 0 layer 0 head 0<") != std::string::npos);
  CHECK(svg.find(">network 1 layer 1 head 1<") != std::string::npos);
  CHECK(svg.find(">network 2 ") == std::string::npos);
  svg = attention_svg({"fine"}, weights, "t");
  CHECK(svg.find(">layer 3 head 1<") != std::string::npos);
  CHECK(svg.find("network") == std::string::npos);
}
