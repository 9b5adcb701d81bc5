// libFuzzer target: digits::parse_images (the CSV reader of `digits`) on arbitrary bytes, labels required and
// optional. Each input either gives N >= 1 images of 8×8 pixels in [0, 1] (multiples of 1/16), with N labels in
// 0..9 when labels are required, or throws tg::ValueError naming the file.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/error.h"
#include "images.h"

namespace {

void require(bool cond) {
  if (!cond) std::abort();
}

void parse_as(std::string_view text, digits::Labels labels) {
  try {
    const digits::Images im = digits::parse_images(text, "fuzz.csv", labels);
    const int64_t n = im.size();
    require(n >= 1 && im.pixels.shape() == std::vector<int64_t>{n, 1, digits::kSide, digits::kSide});
    for (double p : im.pixels.to_vector<double>()) {
      const double level = p * digits::kMaxPixel;
      require(level >= 0 && level <= digits::kMaxPixel && level == double(int64_t(level)));
    }
    require(labels == digits::Labels::optional || im.labels.defined());
    if (im.labels.defined()) {
      require(im.labels.shape() == std::vector<int64_t>{n});
      for (int64_t d : im.labels.to_vector<int64_t>()) require(d >= 0 && d < digits::kClasses);
    }
  } catch (const tg::ValueError& e) {
    require(std::string(e.what()).find("fuzz.csv") != std::string::npos);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  parse_as(text, digits::Labels::required);
  parse_as(text, digits::Labels::optional);
  return 0;
}
