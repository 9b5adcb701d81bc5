#pragma once
// Element types. f32 is the working type, f64 exists for gradient checks, i64 for indices and labels.
// Masks use `boolean` (one byte per element, 0 or 1): comparisons produce it, where/masked_fill take it.
#include <cstdint>
#include <iosfwd>
#include <string_view>

#include <fmt/format.h>

namespace tg {

enum class DType : uint8_t { f32, f64, i64, boolean };

/// Size of one element in bytes.
constexpr int64_t dtype_size(DType t) {
  switch (t) {
    case DType::f32: return 4;
    case DType::f64: return 8;
    case DType::i64: return 8;
    case DType::boolean: return 1;
  }
  return 0;
}
/// "f32", "f64", "i64" or "bool".
constexpr std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::f32: return "f32";
    case DType::f64: return "f64";
    case DType::i64: return "i64";
    case DType::boolean: return "bool";
  }
  return "?";
}
constexpr bool is_floating(DType t) { return t == DType::f32 || t == DType::f64; }
/// torch.promote_types: the dtype that both a and b convert to, the larger on the chain bool < i64 < f32 < f64
/// (so i64 with f32 gives f32, as PyTorch, though f32 does not hold every i64 exactly).
constexpr DType promote_types(DType a, DType b) {
  auto rank = [](DType t) { return t == DType::boolean ? 0 : t == DType::i64 ? 1 : t == DType::f32 ? 2 : 3; };
  return rank(a) >= rank(b) ? a : b;
}
/// Throws ValueError naming `op` when `value` cannot become an element of `t`: an i64 holds no NaN, ±inf or
/// value outside [-2^63, 2^63), and converting those is undefined behaviour in C++ (PyTorch refuses them too).
void check_representable(double value, DType t, const char* op);

/// Writes dtype_name(t) ("f32"), as fmt prints it.
std::ostream& operator<<(std::ostream& os, DType t);

inline constexpr DType f32 = DType::f32;
inline constexpr DType f64 = DType::f64;
inline constexpr DType i64 = DType::i64;
inline constexpr DType boolean = DType::boolean;

}  // namespace tg

/// Formats a DType by its name ("f32").
template <>
struct fmt::formatter<tg::DType> : fmt::formatter<std::string_view> {
  auto format(tg::DType t, format_context& ctx) const {
    return fmt::formatter<std::string_view>::format(tg::dtype_name(t), ctx);
  }
};
