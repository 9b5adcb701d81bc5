#pragma once
// Pictures of a trained network, as self-contained SVG files: the first layer's filters, and digits with
// captions (the misclassified test images).
#include <string>
#include <vector>

#include <tensorgrad/tensorgrad.h>

namespace digits {

/// The filters of a convolution, weight (C_out, C_in, kH, kW): one small heat map per (output, input)
/// channel pair, red for positive, blue for negative weights, white for 0, on one scale (the largest
/// |weight|) so that filters compare. ShapeError for a weight that is not 4-d.
std::string filters_svg(const tg::Tensor& weight, const std::string& title);

/// Images (N, 1, H, W) with values in [0, 1] as grey squares (0 white, 1 black, as the scanned ink), ten
/// to a row, each with its caption below. N = 0 gives a picture saying "none". ValueError when the
/// captions are not one per image.
std::string images_svg(const tg::Tensor& images, const std::vector<std::string>& captions, const std::string& title);

}  // namespace digits
