#pragma once
#include <vector>

#include "autograd/variable.h"

namespace tg::optim {

/// Scales every gradient by min(1, max_norm / (total + 1e-6)), where total is the norm_type-norm of all
/// gradients together (2: L2, INFINITY: max |g|, any p > 0), and returns total, as torch's
/// clip_grad_norm_. The norm is scaled by max |g| and summed in double, so f32 gradients of 1e20 give the
/// true norm where torch 1.13 overflows to inf. A non-finite total (a NaN or inf gradient) never scales
/// anything: by default it throws ValueError naming the total (torch's error_if_nonfinite=True); with
/// error_if_nonfinite false it leaves every gradient untouched and returns the total for the caller to act on
/// (torch 1.13 would write NaN, or zeros, into every gradient). Parameters without a gradient are skipped.
/// ValueError also for max_norm < 0 or norm_type <= 0.
double clip_grad_norm(const std::vector<Variable>& params, double max_norm, double norm_type = 2.0,
                      bool error_if_nonfinite = true);

/// Clamps every gradient element to [-clip_value, clip_value] (torch's clip_grad_value_).
void clip_grad_value(const std::vector<Variable>& params, double clip_value);

}  // namespace tg::optim
