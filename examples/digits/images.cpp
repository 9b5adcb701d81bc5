// The CSV reader. It trusts nothing: a file of another shape stops with the file, line and value at fault
// rather than training on garbage (a 63-column line would shift every later pixel).
#include "images.h"

#include <bit>
#include <charconv>
#include <filesystem>
#include <string_view>

namespace digits {
namespace fs = std::filesystem;
namespace {

// The comma-separated whole numbers of one line; ValueError naming the line for anything else.
std::vector<int64_t> parse_line(const std::string& line, const std::string& where) {
  std::vector<int64_t> values;
  for (size_t at = 0; at <= line.size();) {
    const size_t end = std::min(line.find(',', at), line.size());
    int64_t v = 0;
    auto [p, ec] = std::from_chars(line.data() + at, line.data() + end, v);
    tg::check<tg::ValueError>(ec == std::errc() && p == line.data() + end && end > at, "{}: value {} is not a whole "
                              "number: '{}'", where, values.size() + 1, tg::escape_bytes(line.substr(at, end - at)));
    values.push_back(v);
    at = end + 1;
  }
  return values;
}

// FNV-1a over a tensor's size and values: the fingerprint of the parts, in order.
void mix(uint64_t& h, const tg::Tensor& t) {
  auto add = [&h](uint64_t bits) {
    for (int i = 0; i < 8; ++i) h = (h ^ ((bits >> (8 * i)) & 0xff)) * 1099511628211ull;
  };
  add(uint64_t(t.numel()));
  for (double v : t.to_vector<double>()) add(std::bit_cast<uint64_t>(v));
}

}  // namespace

Images parse_images(std::string_view text, const std::string& path, Labels labels) {
  std::vector<double> pixels;
  std::vector<int64_t> digits;
  size_t columns = 0;
  int64_t line_no = 0;
  for (size_t at = 0; at < text.size();) {
    const size_t end = std::min(text.find('\n', at), text.size());
    std::string line(text.substr(at, end - at));
    at = end + 1;
    ++line_no;
    if (line.ends_with('\r')) line.pop_back();
    const std::string where = fmt::format("digits: {}:{}", path, line_no);
    const std::vector<int64_t> v = parse_line(line, where);
    if (columns == 0) {
      const bool ok = v.size() == kPixels + 1 || (labels == Labels::optional && v.size() == kPixels);
      tg::check<tg::ValueError>(ok, "{}: {} values, expected {}", where, v.size(),
                                labels == Labels::optional ? "64 pixels, or 64 pixels and a label (65)"
                                                           : "65 (64 pixels and a label)");
      columns = v.size();
    }
    tg::check<tg::ValueError>(v.size() == columns, "{}: {} values, but line 1 has {}", where, v.size(), columns);
    for (int64_t i = 0; i < kPixels; ++i) {
      tg::check<tg::ValueError>(v[i] >= 0 && v[i] <= kMaxPixel, "{}: pixel {} is {}, expected 0..16", where, i + 1, v[i]);
      pixels.push_back(double(v[i]) / kMaxPixel);
    }
    if (columns > kPixels) {
      tg::check<tg::ValueError>(v[kPixels] >= 0 && v[kPixels] < kClasses, "{}: label {} is outside 0..9", where,
                                v[kPixels]);
      digits.push_back(v[kPixels]);
    }
  }
  tg::check<tg::ValueError>(line_no > 0, "digits: '{}' holds no images", path);
  Images out;
  out.pixels = tg::tensor(pixels, {line_no, 1, kSide, kSide});
  if (!digits.empty()) out.labels = tg::index_tensor(digits, {line_no});
  return out;
}

Images read_images(const std::string& path, Labels labels) {
  return parse_images(tg::read_file(path, kMaxCsvBytes, "digits"), path, labels);
}

Split read_split(const std::string& dir) {
  tg::check<tg::ValueError>(fs::is_directory(dir), "digits: data directory '{}' does not exist (expected train.csv, "
                            "valid.csv and test.csv in it)", dir);
  Split s;
  s.dir = fs::absolute(dir).lexically_normal().string();
  s.train = read_images((fs::path(dir) / "train.csv").string(), Labels::required);
  s.valid = read_images((fs::path(dir) / "valid.csv").string(), Labels::required);
  s.test = read_images((fs::path(dir) / "test.csv").string(), Labels::required);
  uint64_t h = 1469598103934665603ull;
  for (const Images* part : {&s.train, &s.valid, &s.test}) mix(h, part->pixels), mix(h, part->labels);
  s.fingerprint = fmt::format("{:016x}", h);
  return s;
}

}  // namespace digits
