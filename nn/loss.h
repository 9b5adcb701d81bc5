#pragma once
// Loss functions with PyTorch's names and reductions (torch.nn.functional). cross_entropy is the fused
// autograd op, binary_cross_entropy wraps the elementwise one; the others are compositions of differentiable
// functions. All have second derivatives.
#include "autograd/functions.h"

namespace tg::nn {

using tg::cross_entropy;
using tg::CrossEntropyOptions;
// The losses here reduce by tg::Reduction (autograd/functions.h), kl_div by its own (it adds batchmean).

/// nll_loss's options.
struct NLLLossOptions {
  Reduction reduction = Reduction::mean;  ///< mean over the targets not ignored, sum, or none (one loss per target)
  int64_t ignore_index = -100;            ///< targets equal to this add no loss and no gradient
  Tensor weight;                          ///< (C) per-class weights, >= 0; undefined = all 1
};
/// Negative log-likelihood of log-probabilities (B, C) or (B, C, d...) at class indices (B) or (B, d...),
/// i64: loss_i = -weight[t_i]·log_probs[i, t_i]. Mean divides by Σ weight[t_i] over non-ignored targets; with
/// none counted it is NaN (0/0, as PyTorch) with gradient 0. A row of weight 0 adds 0 even at a -inf entry.
/// IndexError naming a target outside [0, C) that is not ignore_index; ShapeError for mismatched shapes;
/// ValueError naming a negative weight and its class (PyTorch accepts one).
Variable nll_loss(const Variable& log_probs, const Tensor& target, const NLLLossOptions& options = {});

/// mse_loss's options.
struct MSELossOptions {
  Reduction reduction = Reduction::mean;  ///< mean, sum or none (elementwise)
};
/// (input - target)², reduced. Both the same shape (ShapeError naming both otherwise); both get gradients.
Variable mse_loss(const Variable& input, const Variable& target, const MSELossOptions& options = {});

/// binary_cross_entropy_with_logits's options.
struct BCEWithLogitsOptions {
  Reduction reduction = Reduction::mean;  ///< mean, sum or none (elementwise)
};
/// Binary cross-entropy on logits x with targets y in [0, 1]: max(x, 0) - x·y + log(1 + e^{-|x|}), stable
/// for any |x|. Both the same shape (ShapeError naming both otherwise).
Variable binary_cross_entropy_with_logits(const Variable& logits, const Variable& target,
                                          const BCEWithLogitsOptions& options = {});

/// l1_loss's options.
struct L1LossOptions {
  Reduction reduction = Reduction::mean;  ///< mean, sum or none (elementwise)
};
/// |input - target|, reduced; gradient sign(input - target), 0 where they are equal (as PyTorch). Both the
/// same shape (ShapeError naming both otherwise); both get gradients.
Variable l1_loss(const Variable& input, const Variable& target, const L1LossOptions& options = {});

/// smooth_l1_loss's options.
struct SmoothL1LossOptions {
  Reduction reduction = Reduction::mean;  ///< mean, sum or none (elementwise)
  double beta = 1.0;                      ///< >= 0; 0 gives l1_loss
};
/// With d = input - target: ½d²/β where |d| < β, |d| - ½β elsewhere (Girshick 2015, Fast R-CNN; PyTorch's
/// formula), reduced; β = 0 is l1_loss, gradient 0 at d = 0 (PyTorch's backward gives -1 there, its x <= -β
/// branch). Shapes as l1_loss; ValueError when beta < 0.
Variable smooth_l1_loss(const Variable& input, const Variable& target, const SmoothL1LossOptions& options = {});

/// huber_loss's options.
struct HuberLossOptions {
  Reduction reduction = Reduction::mean;  ///< mean, sum or none (elementwise)
  double delta = 1.0;                     ///< > 0
};
/// With d = input - target: ½d² where |d| < δ, δ·(|d| - ½δ) elsewhere (Huber 1964; δ times smooth_l1_loss with
/// β = δ), reduced. Shapes as l1_loss; ValueError when delta <= 0.
Variable huber_loss(const Variable& input, const Variable& target, const HuberLossOptions& options = {});

/// kl_div's options.
struct KLDivLossOptions {
  /// batchmean (sum / batch size) is the KL divergence per sample, which PyTorch recommends; mean, PyTorch's
  /// default, divides by every element instead.
  enum class Reduction { mean, sum, none, batchmean };
  Reduction reduction = Reduction::mean;  ///< PyTorch's default, mean
  bool log_target = false;                ///< target holds log-probabilities
};
/// KL(target ‖ exp(input)) pointwise, input log-probabilities: target·(log target - input), 0 where target is 0
/// (as xlogy), or e^target·(target - input) with log_target; reduced, batchmean dividing the sum by the size of
/// dim 0. Both the same shape (ShapeError naming both otherwise); both get gradients, the target's at target 0
/// (where t·log t has no derivative) being -input, where PyTorch's is NaN.
Variable kl_div(const Variable& input, const Variable& target, const KLDivLossOptions& options = {});

/// binary_cross_entropy's options.
struct BCELossOptions {
  Reduction reduction = Reduction::mean;  ///< mean, sum or none (elementwise)
  Tensor weight;  ///< >= 0, broadcast to the input's shape, the input's dtype; undefined = all 1
};
/// Binary cross-entropy of probabilities (any shape) against targets of the same shape:
/// -weight·(t·log x + (1-t)·log(1-x)), each log clamped at -100 as PyTorch does (see tg::binary_cross_entropy),
/// reduced. ShapeError for shapes that differ or a weight that does not broadcast to the input's, ValueError for
/// a probability outside [0, 1] or a negative weight (PyTorch accepts those weights), DTypeError for the weight's.
Variable binary_cross_entropy(const Variable& input, const Variable& target, const BCELossOptions& options = {});

}  // namespace tg::nn
