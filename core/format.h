#pragma once
// Printing tensors like PyTorch: tensor([[1.0000, 2.0000], ...], shape=(2, 3), dtype=f32), elided with
// "..." past 1000 elements (3 items at each edge).
#include <ostream>
#include <string>

#include <fmt/format.h>

#include "core/tensor.h"

namespace tg {
/// The printed form of a tensor (see the note above).
std::string to_string(const Tensor& t);
std::ostream& operator<<(std::ostream& os, const Tensor& t);
}  // namespace tg

/// Formats a Tensor as tg::to_string does.
template <>
struct fmt::formatter<tg::Tensor> : fmt::formatter<std::string_view> {
  auto format(const tg::Tensor& t, format_context& ctx) const {
    return fmt::formatter<std::string_view>::format(tg::to_string(t), ctx);
  }
};
