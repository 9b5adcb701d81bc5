// Adam and AdamW. step() follows torch 1.13's _single_tensor_adam/_single_tensor_adamw operation by
// operation (bias corrections as scalars, eps added after dividing √v by √(1 − β2ᵗ)), so that float64
// trajectories agree with PyTorch to rounding.
#include "optim/adam.h"

#include <cmath>
#include <type_traits>

#include "core/cpu/kernels.h"
#include "core/error.h"
#include "core/ops.h"
#include "core/parallel.h"

namespace tg::optim {

Adam::Adam(std::vector<Variable> params, const AdamOptions& options)
    : Adam("Adam", {ParamGroup{.params = std::move(params)}}, options, false) {}
Adam::Adam(std::vector<ParamGroup> groups, const AdamOptions& options)
    : Adam("Adam", std::move(groups), options, false) {}

Adam::Adam(std::string name, std::vector<ParamGroup> groups, const AdamOptions& options, bool decoupled)
    : Optimizer(std::move(name), std::move(groups), options.lr, options.weight_decay),
      options_(options),
      decoupled_(decoupled) {
  check_option("betas[0]", options_.betas.first, /*below_one=*/true);
  check_option("betas[1]", options_.betas.second, /*below_one=*/true);
  check_option("eps", options_.eps);
  // With eps = 0 a parameter whose gradient has been exactly 0 so far (an unused embedding row) gets 0/0.
  check<ValueError>(options_.eps > 0, "{}: invalid eps: 0 (expected > 0: m / (√v + 0) is 0/0 where the gradient has "
                    "been 0)", name_);
  register_state("step", steps_);
  register_state("exp_avg", exp_avg_);
  register_state("exp_avg_sq", exp_avg_sq_);
  register_state("max_exp_avg_sq", max_exp_avg_sq_);
  register_option("betas.0", options_.betas.first, true);
  register_option("betas.1", options_.betas.second, true);
  register_option("eps", options_.eps);
  register_flag("amsgrad", options_.amsgrad);
}

namespace {

// The update of elements [lo, hi) of one parameter, doing what torch's op-by-op update does, element by
// element with the same roundings (a scalar operand of a tensor op is first rounded to T, an in-place update
// with a double factor runs in double): the same values as six tensor ops, without their passes and two
// temporaries. The options are compile-time constants inside the loop, so that g++ vectorises it. f64 agrees
// with torch to rounding (tests/optim/fixture_test.cpp); f32 differs from python3-torch 1.13 in the last bit on
// about 1 % of elements after 5 steps (measured), one cause being that torch's vectorised add_(g, alpha) is a
// fused multiply-add with alpha in f32.
template <int decay, bool amsgrad, class T>  // decay: 0 none, 1 L2 (Adam), 2 decoupled (AdamW)
[[gnu::always_inline]] inline void adam_range(T* p, const T* g, T* m, T* v, T* v_max, int64_t lo, int64_t hi,
                                              const cpu::AdamScalars& a) {
  const T b1 = T(a.beta1), b2 = T(a.beta2), shrink = T(1 - a.lr * a.weight_decay), sbc2 = T(a.sqrt_bias_correction2),
          eps = T(a.eps);
  const double wd = a.weight_decay, c1 = 1 - a.beta1, c2 = 1 - a.beta2, neg_step = -a.step_size;
  for (int64_t i = lo; i < hi; ++i) {
    T gi = g[i];
    if constexpr (decay == 2) p[i] = p[i] * shrink;           // AdamW: p ← p·(1 − lr·λ)
    if constexpr (decay == 1) gi = T(gi + wd * p[i]);         // Adam: L2, g ← g + λ·p
    m[i] = T(m[i] * b1 + c1 * gi);                            // m ← β1·m + (1 − β1)·g
    v[i] = T(T(v[i] * b2) + c2 * gi * gi);                    // v ← β2·v + (1 − β2)·g²
    T v_used = v[i];
    if constexpr (amsgrad) v_used = v_max[i] = v_max[i] < v[i] ? v[i] : v_max[i];  // v_max ← max(v_max, v)
    const T denom = T(std::sqrt(v_used) / sbc2) + eps;        // √v̂ + ε
    p[i] = T(p[i] + neg_step * m[i] / denom);                 // p ← p − lr·m̂ / (√v̂ + ε)
  }
}

// f32 runs these operations on vectors in the kernel room (cpu::adam_f32, with the same bits).
void adam_update(float* p, const float* g, float* m, float* v, float* v_max, int64_t n, const cpu::AdamScalars& a) {
  cpu::parallel_for(n, cpu::kGrainElements / 4, [=, &a](int64_t lo, int64_t hi) {
    cpu::adam_f32(p + lo, g + lo, m + lo, v + lo, v_max ? v_max + lo : nullptr, hi - lo, a);
  });
}

void adam_update(double* p, const double* g, double* m, double* v, double* v_max, int64_t n,
                 const cpu::AdamScalars& a) {
  const int decay = a.decoupled ? 2 : a.weight_decay != 0 ? 1 : 0;
  auto run = [&](auto decay_c, auto amsgrad) {
    cpu::parallel_for(n, cpu::kGrainElements / 4, [=, &a](int64_t lo, int64_t hi) {
      adam_range<decltype(decay_c)::value, amsgrad, double>(p, g, m, v, v_max, lo, hi, a);
    });
  };
  auto with_decay = [&](auto amsgrad) {
    if (decay == 2) run(std::integral_constant<int, 2>{}, amsgrad);
    else if (decay == 1) run(std::integral_constant<int, 1>{}, amsgrad);
    else run(std::integral_constant<int, 0>{}, amsgrad);
  };
  a.amsgrad ? with_decay(std::true_type{}) : with_decay(std::false_type{});
}

}  // namespace

void adam_update(Tensor p, const Tensor& g, Tensor& m, Tensor& v, Tensor* v_max, int64_t t, double lr, double wd,
                 const AdamOptions& o, bool decoupled) {
  const auto [beta1, beta2] = o.betas;
  if (!m.defined()) {
    m = zeros_like(p);
    v = zeros_like(p);
  }
  if (v_max && !v_max->defined()) *v_max = zeros_like(p);
  const double bias_correction1 = 1 - std::pow(beta1, double(t)), bias_correction2 = 1 - std::pow(beta2, double(t));
  // lr / (1 − β1ᵗ): m̂ = m / (1 − β1ᵗ) folded into the step size.
  const cpu::AdamScalars a{beta1, beta2, lr, wd, o.eps, lr / bias_correction1, std::sqrt(bias_correction2),
                           decoupled, v_max != nullptr};
  // The state is created contiguous; a strided parameter (a view) is updated through a contiguous copy.
  Tensor pc = p.contiguous(), gc = g.contiguous();
  if (p.dtype() == f32)
    adam_update(pc.data<float>(), gc.data<float>(), m.data<float>(), v.data<float>(),
                v_max ? v_max->data<float>() : nullptr, p.numel(), a);
  else
    adam_update(pc.data<double>(), gc.data<double>(), m.data<double>(), v.data<double>(),
                v_max ? v_max->data<double>() : nullptr, p.numel(), a);
  if (!p.is_contiguous()) p.copy_(pc);
  else ++p.storage()->version;  // as an in-place op would: autograd must see that p changed
  ++m.storage()->version, ++v.storage()->version;
}

void Adam::step() {
  NoGradGuard no_grad;
  for (size_t i = 0; i < params_.size(); ++i) {
    const Tensor g = params_[i].grad();
    if (!g.defined()) continue;  // not reached by this backward: no update, no step count
    adam_update(params_[i].value(), g, exp_avg_[i], exp_avg_sq_[i], options_.amsgrad ? &max_exp_avg_sq_[i] : nullptr,
                ++steps_[i], *groups_[group_of_[i]].lr, *groups_[group_of_[i]].weight_decay, options_, decoupled_);
  }
}

namespace {
AdamOptions as_adam(const AdamWOptions& o) {
  return {.lr = o.lr, .betas = o.betas, .eps = o.eps, .weight_decay = o.weight_decay, .amsgrad = o.amsgrad};
}
}  // namespace

AdamW::AdamW(std::vector<Variable> params, const AdamWOptions& options)
    : Adam("AdamW", {ParamGroup{.params = std::move(params)}}, as_adam(options), true) {}
AdamW::AdamW(std::vector<ParamGroup> groups, const AdamWOptions& options)
    : Adam("AdamW", std::move(groups), as_adam(options), true) {}

}  // namespace tg::optim
