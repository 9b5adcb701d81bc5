// The learning-curve SVG: a box, tick labels on both axes, one polyline with dots per series, a legend.
#include "train/learning_curve.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/error.h"

namespace tg::train {
namespace {

// Length of the well-formed UTF-8 sequence at s[i] (RFC 3629: no overlong forms, surrogates or code
// points above U+10FFFF), or 0 when it is not one.
size_t utf8_length(const std::string& s, size_t i) {
  auto at = [&](size_t k) { return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : 0u; };
  const unsigned c = at(0);
  const size_t n = c < 0x80 ? 1 : c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
  const unsigned lo = c == 0xE0 ? 0xA0 : c == 0xF0 ? 0x90 : 0x80, hi = c == 0xED ? 0x9F : c == 0xF4 ? 0x8F : 0xBF;
  if (n >= 2 && (at(1) < lo || at(1) > hi)) return 0;
  for (size_t k = 2; k < n; ++k)
    if (at(k) < 0x80 || at(k) > 0xBF) return 0;
  return n;
}

constexpr const char* kColors[] = {"#d62728", "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"};

// The plot box and the two axes' ranges: maps data to SVG coordinates.
struct Frame {
  double x0 = 70, y0 = 40, w = 520, h = 260, xlo, xhi;
  double y(double v, std::pair<double, double> r) const {
    return y0 + h - h * (std::clamp(v, r.first, r.second) - r.first) / (r.second - r.first);
  }
  double x(double v) const { return xhi > xlo ? x0 + w * (v - xlo) / (xhi - xlo) : x0 + w / 2; }
};

// The finite values' [min, max] over the series on one axis, widened when flat; {0, 1} when none.
std::pair<double, double> data_range(const std::vector<Series>& series, bool right) {
  double lo = INFINITY, hi = -INFINITY;
  for (const Series& s : series)
    if (s.right_axis == right)
      for (double v : s.values)
        if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  if (lo > hi) return {0, 1};
  return lo == hi ? std::pair{lo - 0.5, hi + 0.5} : std::pair{lo, hi};
}

std::string polyline(const Series& s, const std::vector<double>& x, const Frame& f, std::pair<double, double> range,
                     const char* color) {
  std::string pts, dots;
  for (size_t i = 0; i < s.values.size(); ++i) {
    if (!std::isfinite(s.values[i])) continue;
    const double px = f.x(x[i]), py = f.y(s.values[i], range);
    pts += fmt::format("{:.1f},{:.1f} ", px, py);
    dots += fmt::format("<circle cx='{:.1f}' cy='{:.1f}' r='3' fill='{}'/>", px, py, color);
  }
  return fmt::format("<polyline fill='none' stroke='{}' stroke-width='2' points='{}'/>{}\n", color, pts, dots);
}

}  // namespace

std::string xml_escape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    const size_t n = utf8_length(s, i);
    const char ch = s[i];
    if (n == 0 || (n == 1 && static_cast<unsigned char>(ch) < 0x20 && ch != '\t' && ch != '\n' && ch != '\r'))
      out += "\uFFFD", i += std::max<size_t>(n, 1);
    else if (n > 1)
      out.append(s, i, n), i += n;
    else
      out += ch == '<' ? "&lt;" : ch == '>' ? "&gt;" : ch == '&' ? "&amp;" : ch == '\'' ? "&#39;" : std::string(1, ch), ++i;
  }
  return out;
}

std::string learning_curve_svg(const std::vector<Series>& series, const LearningCurveOptions& o) {
  check<ValueError>(!series.empty(), "learning_curve_svg: no series given");
  const size_t n = series[0].values.size();
  for (const Series& s : series)
    check<ValueError>(s.values.size() == n, "learning_curve_svg: series '{}' has {} values, '{}' has {}", series[0].name,
                      n, s.name, s.values.size());
  check<ValueError>(o.x.empty() || o.x.size() == n, "learning_curve_svg: {} x positions for {} values", o.x.size(), n);
  std::vector<double> x = o.x;
  for (size_t i = 0; x.size() < n; ++i) x.push_back(double(i + 1));
  const auto left = o.left_range.value_or(data_range(series, false)), right = o.right_range.value_or(data_range(series, true));
  for (auto r : {left, right})
    check<ValueError>(r.first < r.second, "learning_curve_svg: axis range [{}, {}] is empty", r.first, r.second);
  Frame f;
  f.xlo = n ? *std::min_element(x.begin(), x.end()) : 0, f.xhi = n ? *std::max_element(x.begin(), x.end()) : 0;
  const bool has_right = std::any_of(series.begin(), series.end(), [](const Series& s) { return s.right_axis; });
  std::string svg = fmt::format("<svg xmlns='http://www.w3.org/2000/svg' width='680' height='{}' font-family='sans-serif' "
                                "font-size='12'>\n<rect width='100%' height='100%' fill='white'/>\n<text x='{}' y='22' "
                                "font-size='15'>{}</text>\n<rect x='{}' y='{}' width='{}' height='{}' fill='none' "
                                "stroke='#888'/>\n", 380 + 18 * ((series.size() + 2) / 3), f.x0, xml_escape(o.title),
                                f.x0, f.y0, f.w, f.h);
  for (int k = 0; k <= 4; ++k) {
    const double y = f.y0 + f.h - f.h * k / 4.0;
    svg += fmt::format("<text x='{}' y='{:.1f}' text-anchor='end'>{:.3g}</text>", f.x0 - 6, y + 4,
                       left.first + (left.second - left.first) * k / 4);
    if (has_right)
      svg += fmt::format("<text x='{}' y='{:.1f}'>{:.3g}</text>", f.x0 + f.w + 6, y + 4,
                         right.first + (right.second - right.first) * k / 4);
    svg += "\n";
  }
  const size_t every = std::max<size_t>(1, (n + 9) / 10);  // at most about ten x labels
  for (size_t i = 0; i < n; i += every)
    svg += fmt::format("<text x='{:.1f}' y='{}' text-anchor='middle'>{:g}</text>", f.x(x[i]), f.y0 + f.h + 16, x[i]);
  svg += fmt::format("\n<text x='{}' y='{}' text-anchor='middle'>{}</text>\n", f.x0 + f.w / 2, f.y0 + f.h + 34,
                     xml_escape(o.x_label));
  for (size_t k = 0; k < series.size(); ++k) {
    const char* color = kColors[k % std::size(kColors)];
    const Series& s = series[k];
    svg += polyline(s, x, f, s.right_axis ? right : left, color);
    svg += fmt::format("<text x='{:.0f}' y='{}' fill='{}'>{}{}</text>\n", f.x0 + 190 * double(k % 3),
                       f.y0 + f.h + 56 + 18 * double(k / 3), color, xml_escape(s.name),
                       has_right ? (s.right_axis ? " (right)" : " (left)") : "");
  }
  return svg + "</svg>\n";
}

}  // namespace tg::train
