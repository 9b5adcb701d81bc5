#pragma once
// Gradient checking by central finite differences: the analytic gradient the engine computes against
// (f(x + eps) - f(x - eps)) / 2eps, element by element, for any function of Variables (layers included).
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include <fmt/ostream.h>

#include "autograd/variable.h"

namespace tg {

/// Tolerances, PyTorch's defaults: an entry passes when |analytic - numeric| <= atol + rtol·|numeric|.
struct GradcheckOptions {
  double eps = 1e-6;  ///< the finite-difference step
  double atol = 1e-5;  ///< absolute tolerance
  double rtol = 1e-3;  ///< relative tolerance
};

/// Outcome of a check; converts to bool, prints its report (the worst element) on failure.
struct GradcheckResult {
  bool ok = true;  ///< whether every entry passed
  std::string report;  ///< input, index, analytic and numeric values of the worst element
  explicit operator bool() const { return ok; }  ///< ok
};
std::ostream& operator<<(std::ostream& os, const GradcheckResult& r);

using GradFn = std::function<Variable(const std::vector<Variable>&)>;

/// Compares the full Jacobian of fn at `inputs` (those that require grad) with finite differences.
/// Inputs should be f64; f32 inputs throw DTypeError (finite differences in f32 are noise) unless the
/// tolerances differ from the defaults. ValueError for an eps that is not finite and > 0 (eps = 0 gave a
/// NaN report), or a negative atol or rtol.
GradcheckResult gradcheck(const GradFn& fn, const std::vector<Variable>& inputs, const GradcheckOptions& options = {});

/// fn's vector-Jacobian product as a function to check: (inputs..., v) -> d(Σ fn(inputs)·v)/d(inputs) for the
/// inputs that require grad, flattened and joined (zeros for an unused one), with v of fn's output shape.
/// Computed with create_graph, so that it is differentiable: a gradcheck of it checks the derivatives of
/// fn's backward (PyTorch's gradgradcheck).
GradFn vjp(const GradFn& fn);

/// Checks second derivatives: gradcheck of vjp(fn) at (inputs, v), for a fixed random v (seeded by `seed`).
GradcheckResult gradgradcheck(const GradFn& fn, const std::vector<Variable>& inputs,
                              const GradcheckOptions& options = {}, uint64_t seed = 0);

}  // namespace tg

/// Formats a GradcheckResult as operator<< does.
template <>
struct fmt::formatter<tg::GradcheckResult> : fmt::ostream_formatter {};
