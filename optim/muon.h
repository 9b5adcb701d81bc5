#pragma once
#include <array>
#include <cstdint>

#include "optim/adam.h"
#include "optim/optimizer.h"

namespace tg::optim {

/// How Muon scales the learning rate of an (A, B) matrix, so that updates of different shapes have a
/// comparable RMS (torch.optim.Muon's adjust_lr_fn).
enum class MuonLrAdjust {
  original,         ///< lr·√max(1, A/B) (Jordan 2024)
  match_rms_adamw,  ///< lr·0.2·√max(A, B): the update's RMS matches AdamW's, so AdamW's lr carries over (Liu et al. 2025)
};

/// Muon's options, torch.optim.Muon's names and defaults (PyTorch 2.9).
struct MuonOptions {
  double lr = 1e-3;            ///< the learning rate, before the shape adjustment
  double weight_decay = 0.1;   ///< decoupled: p ← p·(1 − lr·λ) before each update
  double momentum = 0.95;      ///< μ in [0, 1): the buffer b ← μ·b + (1 − μ)·g
  bool nesterov = true;        ///< orthogonalise (1 − μ)·g + μ·b instead of b
  /// (a, b, c) of the quintic Newton–Schulz step X ← a·X + (b·A + c·A²)·X with A = X·Xᵀ.
  std::array<double, 3> ns_coefficients = {3.4445, -4.7750, 2.0315};
  double eps = 1e-7;           ///< the update is first divided by max(‖update‖_F, eps) (> 0)
  int64_t ns_steps = 5;        ///< Newton–Schulz steps, 1 to 99
  MuonLrAdjust adjust_lr = MuonLrAdjust::original;  ///< the shape adjustment of lr
};

/// Muon, "MomentUm Orthogonalized by Newton–Schulz" (K. Jordan, "Muon: An optimizer for hidden layers in
/// neural networks", 2024; J. Liu et al., "Muon is Scalable for LLM Training", arXiv:2502.16982), step by step
/// as torch.optim.Muon's _single_tensor_muon (PyTorch 2.9), except that Newton–Schulz runs in the parameter's
/// dtype where PyTorch rounds to bfloat16. For the 2-D weights of hidden layers only (shape (A, B)):
/// embeddings, output heads, biases and norms belong to AdamW. Per step, with gradient g:
///   b ← μ·b + (1 − μ)·g;  u ← nesterov ? (1 − μ)·g + μ·b : b;  O ← NS(u / max(‖u‖_F, eps));
///   p ← p·(1 − lr·λ) − adjusted_lr·O.
/// NS keeps u's singular vectors and moves its singular values towards 1 (into about [0.5, 1.5], Jordan 2024).
/// ValueError for lr or weight_decay negative or non-finite, momentum outside [0, 1), eps not finite and > 0,
/// ns_steps outside [1, 99] or a non-finite coefficient; ShapeError naming a parameter that is not 2-D.
class Muon : public Optimizer {
 public:
  /// One group of `params`; errors as above.
  explicit Muon(std::vector<Variable> params, const MuonOptions& options = {});
  /// Groups with their own lr and weight_decay; errors as above.
  Muon(std::vector<ParamGroup> groups, const MuonOptions& options = {});
  void step() override;
  const MuonOptions& options() const { return options_; }  ///< as constructed

 private:
  MuonOptions options_;
  std::vector<Tensor> momentum_buffer_;  // b per parameter, parameter shapes
};

/// Muon for the hidden layers' matrices and AdamW for every other parameter (embeddings, output head, biases,
/// norms) as one optimizer: one state, one checkpoint, and groups that a schedule sets alike. This is the
/// pairing Muon is meant for (Jordan 2024; his MuonWithAuxAdam). Groups: muon_groups first, then adamw_groups;
/// a group's unset lr and weight decay come from its own optimizer's options. Each parameter is updated
/// exactly as Muon or AdamW would update it. Either list may be empty, not both. Errors: as Muon for
/// muon_groups and its options, as AdamW for adamw_groups and theirs (each naming itself), and as
/// Optimizer for a parameter in both.
class MuonWithAdamW : public Optimizer {
 public:
  /// Errors as above.
  MuonWithAdamW(std::vector<ParamGroup> muon_groups, const MuonOptions& muon, std::vector<ParamGroup> adamw_groups,
                const AdamWOptions& adamw);
  void step() override;

 private:
  MuonOptions muon_;
  AdamOptions adamw_;
  size_t muon_count_;  // params_[0, muon_count_) are Muon's
  std::vector<Tensor> momentum_buffer_;                        // Muon's b; undefined for AdamW's parameters
  std::vector<int64_t> steps_;                                 // AdamW's t; 0 for Muon's parameters
  std::vector<Tensor> exp_avg_, exp_avg_sq_, max_exp_avg_sq_;  // AdamW's m, v, max v
};

/// One Muon update of the 2-D parameter p with gradient g, creating its momentum buffer as zeros on first use:
/// Muon::step's body, shared with MuonWithAdamW.
void muon_update(Tensor p, const Tensor& g, Tensor& buf, double lr, double wd, const MuonOptions& o);

/// The orthogonalisation of Muon: `ns_steps` quintic Newton–Schulz steps on x / max(‖x‖_F, eps), run on
/// the wider orientation (x of shape (A, B) is transposed while A > B, so that X·Xᵀ is min(A, B) square).
/// x: (A, B), f32 or f64; returns (A, B) in x's dtype. ShapeError unless x is 2-D.
Tensor zeropower_via_newton_schulz(const Tensor& x, const std::array<double, 3>& coefficients, int64_t ns_steps,
                                   double eps);

}  // namespace tg::optim
