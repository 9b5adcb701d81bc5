#pragma once
// What the example programs share about their flags: a check that a flag's value is a number in a range.
// CLI11's own Range said "Value 0 not in range 0.000000 to 0.999999" for a 0 it then refused, and let "nan"
// through.
#include <charconv>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

/// A check that a flag's whole text is a number of type T in [lo, hi]; lo_open excludes lo and hi_open excludes
/// hi. NaN and trailing text fail. Its message names the range and the text: "expected a number in (0, 1), got
/// 'nan'".
template <class T>
CLI::Validator number_in(T lo, T hi, bool lo_open = false, bool hi_open = false) {
  const std::string range = fmt::format("{}{}, {}{}", lo_open ? "(" : "[", lo, hi, hi_open ? ")" : "]");
  return CLI::Validator(
      [=](std::string& s) {
        T v{};
        auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        const bool ok = ec == std::errc() && end == s.data() + s.size() && (lo_open ? v > lo : v >= lo) &&
                        (hi_open ? v < hi : v <= hi);
        return ok ? std::string() : fmt::format("expected a number in {}, got '{}'", range, s);
      },
      range);
}
