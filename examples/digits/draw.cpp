// The two pictures. Each cell is one <rect>; text goes through tg::train::xml_escape (the learning curve's
// helper), so a title with '<' or '&' still gives a valid file.
#include "draw.h"

#include <algorithm>
#include <cmath>

namespace digits {
namespace {

constexpr double kMargin = 10, kTitle = 30;

std::string document(double width, double height, const std::string& title, const std::string& body) {
  return fmt::format("<svg xmlns='http://www.w3.org/2000/svg' width='{:.0f}' height='{:.0f}' font-family='sans-serif' "
                     "font-size='11'>\n<rect width='100%' height='100%' fill='white'/>\n<text x='{}' y='20' "
                     "font-size='14'>{}</text>\n{}</svg>\n",
                     width, height, kMargin, tg::train::xml_escape(title), body);
}

// A (rows, cols) grid of squares of `cell` pixels at (x, y), colored by color(r, c).
template <class Color>
std::string heat_map(double x, double y, int64_t rows, int64_t cols, double cell, Color color) {
  std::string out;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      out += fmt::format("<rect x='{:.1f}' y='{:.1f}' width='{}' height='{}' fill='{}'/>", x + double(c) * cell,
                         y + double(r) * cell, cell, cell, color(r, c));
  return out + fmt::format("<rect x='{:.1f}' y='{:.1f}' width='{}' height='{}' fill='none' stroke='#999'/>\n", x, y,
                           double(cols) * cell, double(rows) * cell);
}

// v in [-1, 1]: blue through white to red.
std::string diverging(double v) {
  const int fade = int(std::lround(255 * (1 - std::min(std::abs(v), 1.0))));
  return v >= 0 ? fmt::format("rgb(255,{0},{0})", fade) : fmt::format("rgb({0},{0},255)", fade);
}

}  // namespace

std::string filters_svg(const tg::Tensor& weight, const std::string& title) {
  tg::check<tg::ShapeError>(weight.dim() == 4, "filters_svg: expected a weight (C_out, C_in, kH, kW), got {}",
                            weight.shape());
  const int64_t out = weight.size(0), in = weight.size(1), kh = weight.size(2), kw = weight.size(3);
  const std::vector<double> w = weight.to_vector<double>();
  double scale = 0;
  for (double v : w) scale = std::max(scale, std::abs(v));
  if (scale == 0) scale = 1;
  const double cell = 14, box_w = double(kw) * cell + 10, box_h = double(kh) * cell + 22;
  const int64_t per_row = std::min<int64_t>(out, 8);
  std::string body;
  for (int64_t o = 0; o < out; ++o)
    for (int64_t i = 0; i < in; ++i) {
      const double x = kMargin + double(o % per_row) * box_w, y = kTitle + double(o / per_row * in + i) * box_h;
      const size_t base = size_t((o * in + i) * kh * kw);
      body += heat_map(x, y, kh, kw, cell,
                       [&](int64_t r, int64_t c) { return diverging(w[base + size_t(r * kw + c)] / scale); });
      body += fmt::format("<text x='{:.1f}' y='{:.1f}'>{}</text>\n", x, y + double(kh) * cell + 13,
                          in > 1 ? fmt::format("{}.{}", o, i) : fmt::format("{}", o));
    }
  const int64_t rows = (out + per_row - 1) / per_row * in;
  body += fmt::format("<text x='{}' y='{:.1f}'>red &gt; 0 &gt; blue; full color at |w| = {:.3g}</text>\n", kMargin,
                      kTitle + double(rows) * box_h + 12, scale);
  return document(std::max(2 * kMargin + double(per_row) * box_w, 320.0), kTitle + double(rows) * box_h + 24, title,
                  body);
}

std::string images_svg(const tg::Tensor& images, const std::vector<std::string>& captions, const std::string& title) {
  const int64_t n = images.dim() == 4 ? images.size(0) : 0;
  tg::check<tg::ShapeError>(images.dim() == 4 && images.size(1) == 1, "images_svg: expected images (N, 1, H, W), got "
                            "{}", images.shape());
  tg::check<tg::ValueError>(int64_t(captions.size()) == n, "images_svg: {} captions for {} images", captions.size(), n);
  const int64_t h = images.size(2), w = images.size(3), per_row = 10;
  const std::vector<double> v = images.to_vector<double>();
  const double cell = 6, box_w = std::max(double(w) * cell + 14, 90.0), box_h = double(h) * cell + 22;
  std::string body = n == 0 ? fmt::format("<text x='{}' y='{}'>none</text>\n", kMargin, kTitle + 12) : "";
  for (int64_t k = 0; k < n; ++k) {
    const double x = kMargin + double(k % per_row) * box_w, y = kTitle + double(k / per_row) * box_h;
    const size_t base = size_t(k * h * w);
    body += heat_map(x, y, h, w, cell, [&](int64_t r, int64_t c) {
      const int grey = int(std::lround(255 * (1 - std::clamp(v[base + size_t(r * w + c)], 0.0, 1.0))));
      return fmt::format("rgb({0},{0},{0})", grey);
    });
    body += fmt::format("<text x='{:.1f}' y='{:.1f}'>{}</text>\n", x, y + double(h) * cell + 13,
                        tg::train::xml_escape(captions[size_t(k)]));
  }
  const int64_t rows = std::max<int64_t>((n + per_row - 1) / per_row, 1);
  const double width = std::max(2 * kMargin + double(std::min(n, per_row)) * box_w, 420.0);
  return document(width, kTitle + double(rows) * box_h + 10, title, body);
}

}  // namespace digits
