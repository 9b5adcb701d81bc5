#pragma once
// Loss functions with PyTorch's names and reductions (torch.nn.functional). cross_entropy is the fused
// autograd op; the others are compositions of differentiable functions, so they have second derivatives.
#include "autograd/functions.h"

namespace tg::nn {

using tg::cross_entropy;
using tg::CrossEntropyOptions;
/// mean, sum or none, shared by every loss here.
using Reduction = CrossEntropyOptions::Reduction;

struct NLLLossOptions {
  Reduction reduction = Reduction::mean;
  int64_t ignore_index = -100;  ///< targets equal to this add no loss and no gradient
  Tensor weight;                ///< (C) per-class weights; undefined = all 1
};
/// Negative log-likelihood of log-probabilities (B, C) or (B, C, d...) at class indices (B) or (B, d...),
/// i64: loss_i = -weight[t_i]·log_probs[i, t_i]. Mean divides by Σ weight[t_i] over non-ignored targets.
/// IndexError naming a target outside [0, C) that is not ignore_index; ShapeError for mismatched shapes.
Variable nll_loss(const Variable& log_probs, const Tensor& target, const NLLLossOptions& options = {});

struct MSELossOptions {
  Reduction reduction = Reduction::mean;
};
/// (input - target)², reduced. Both the same shape (ShapeError naming both otherwise); both get gradients.
Variable mse_loss(const Variable& input, const Variable& target, const MSELossOptions& options = {});

struct BCEWithLogitsOptions {
  Reduction reduction = Reduction::mean;
};
/// Binary cross-entropy on logits x with targets y in [0, 1]: max(x, 0) - x·y + log(1 + e^{-|x|}), stable
/// for any |x|. Both the same shape (ShapeError naming both otherwise).
Variable binary_cross_entropy_with_logits(const Variable& logits, const Variable& target,
                                          const BCEWithLogitsOptions& options = {});

}  // namespace tg::nn
