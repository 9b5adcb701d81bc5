#pragma once
// The learning-curve picture: named series per epoch (or step) on a left and a right axis, as one
// self-contained SVG file that any browser shows. No plotting library: lines, circles and text.
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tg::train {

/// One line of the plot: values[i] at x[i]; NaN values are left out (an epoch without validation).
struct Series {
  std::string name;            ///< the legend's text
  std::vector<double> values;  ///< one per x
  bool right_axis = false;     ///< scale on the right axis (e.g. accuracies beside a loss)
};

/// learning_curve_svg's options.
struct LearningCurveOptions {
  std::string title = "";         ///< above the plot; empty: none
  std::string x_label = "epoch";  ///< under the x axis
  std::vector<double> x = {};     ///< the positions of the values; empty: 1, 2, ..., n
  /// Axis ranges; unset: from the finite values on that axis.
  std::optional<std::pair<double, double>> left_range = std::nullopt;   ///< (low, high) of the left axis
  std::optional<std::pair<double, double>> right_range = std::nullopt;  ///< (low, high) of the right axis
};

/// The plot as an SVG document. ValueError for no series, series of different lengths, an x of another
/// length, or a range with low >= high.
std::string learning_curve_svg(const std::vector<Series>& series, const LearningCurveOptions& options = {});

/// Text for an XML (SVG) element or attribute: markup characters escaped; bytes that are not UTF-8 and
/// control characters XML forbids become U+FFFD, so text in another encoding still gives a valid file.
std::string xml_escape(const std::string& text);

}  // namespace tg::train
