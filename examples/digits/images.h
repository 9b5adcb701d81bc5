#pragma once
// The digits CSV files: one 8×8 image per line, 64 pixels (row by row, each 0..16) and, in labelled
// files, the digit 0..9 as a 65th value (examples/digits/data/README.md).
#include <cstdint>
#include <string>
#include <string_view>

#include <tensorgrad/tensorgrad.h>

namespace digits {

constexpr int64_t kSide = 8, kPixels = kSide * kSide, kMaxPixel = 16, kClasses = 10;

/// Images as the network reads them, and their digits.
struct Images {
  tg::Tensor pixels;  ///< (N, 1, 8, 8) f32, each pixel / 16, in [0, 1]
  tg::Tensor labels;  ///< (N) i64 in 0..9; undefined for a file without labels
  int64_t size() const { return pixels.defined() ? pixels.size(0) : 0; }
};

enum class Labels {
  required,  ///< every line holds 65 values
  optional,  ///< 64 or 65 values, the same on every line
};

/// The most bytes read from one CSV file: 64 MiB (the bundled train.csv has 0.2 MB).
inline constexpr int64_t kMaxCsvBytes = int64_t(1) << 26;

/// The images of a CSV file's contents `text`, read from `path` (named in messages). ValueError naming the
/// file and line for an empty file, a line with the wrong number of values, a value that is not a whole
/// number, a pixel outside 0..16 or a label outside 0..9. A CR before the newline is ignored.
Images parse_images(std::string_view text, const std::string& path, Labels labels);
/// Reads one CSV file (tg::read_file within kMaxCsvBytes, then parse_images). ValueError naming the file for
/// one that is missing, unreadable or larger than the limit (/dev/zero), and parse_images's.
Images read_images(const std::string& path, Labels labels);

/// The three parts of a data directory: train.csv, valid.csv and test.csv, all labelled.
struct Split {
  std::string dir;  ///< absolute
  Images train, valid, test;
  std::string fingerprint;  ///< a hash of the three files' values: a resumed run refuses other data
};

/// Reads <dir>/{train,valid,test}.csv; errors as read_images.
Split read_split(const std::string& dir);

}  // namespace digits
