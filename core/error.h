#pragma once
// The error hierarchy. Every failure a user can cause is one of these, with a message of the form
// "<op>: <what>: <lhs> vs <rhs>" that names the op and the shapes or values involved.
#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace tg {

/// Base of every tensorgrad exception.
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};
/// Shapes that do not fit together (broadcasting, matmul, views).
struct ShapeError : Error {
  using Error::Error;
};
/// A dtype an op does not accept, or two dtypes that differ.
struct DTypeError : Error {
  using Error::Error;
};
/// An index, dimension or label out of range.
struct IndexError : Error {
  using Error::Error;
};
/// A bad value: a negative size, a non-finite hyper-parameter, a malformed file.
struct ValueError : Error {
  using Error::Error;
};

/// Throws E with a fmt-formatted message (check's cold path, kept out of line).
template <class E = Error, class... Args>
[[noreturn, gnu::cold, gnu::noinline]] void fail(fmt::format_string<Args...> f, Args&&... args) {
  throw E(fmt::format(f, std::forward<Args>(args)...));
}

/// Throws E with a fmt-formatted message when `cond` is false. Inline, so that a passing check costs a test
/// and a branch, not a call: small ops run several per element-free step.
template <class E = Error, class... Args>
[[gnu::always_inline]] inline void check(bool cond, fmt::format_string<Args...> f, Args&&... args) {
  if (!cond) [[unlikely]] fail<E>(f, std::forward<Args>(args)...);
}

}  // namespace tg
