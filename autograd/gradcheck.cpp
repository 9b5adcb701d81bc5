// Finite-difference gradient checks. The analytic Jacobian comes one output element at a time from
// tg::grad with a one-hot grad_output; the numeric one from central differences, one input element at a
// time, perturbing the input's storage in place (no version bump: no graph is differentiated meanwhile).
#include "autograd/gradcheck.h"

#include <cmath>

#include "autograd/functions.h"
#include "core/error.h"
#include "core/random.h"

namespace tg {
namespace {

// Element offset (from data()) of flat row-major index k of t.
int64_t offset_of(const Tensor& t, int64_t k) {
  int64_t off = 0;
  for (int64_t d = t.dim() - 1; d >= 0; --d) {
    off += (k % t.shape()[d]) * t.strides()[d];
    k /= t.shape()[d];
  }
  return off;
}

double get(const Tensor& t, int64_t off) {
  return t.dtype() == f64 ? t.data<double>()[off] : double(t.data<float>()[off]);
}
void set(const Tensor& t, int64_t off, double v) {
  if (t.dtype() == f64) t.data<double>()[off] = v;
  else t.data<float>()[off] = float(v);
}

std::vector<double> flat(const Variable& v) { return v.value().to_vector<double>(); }

struct Worst {
  double excess = -INFINITY, analytic = 0, numeric = 0;
  size_t input = 0;
  int64_t element = 0, output = 0;
};

}  // namespace

std::ostream& operator<<(std::ostream& os, const GradcheckResult& r) {
  return os << (r.ok ? "gradcheck passed" : "gradcheck failed: " + r.report);
}

GradcheckResult gradcheck(const GradFn& fn, const std::vector<Variable>& inputs, const GradcheckOptions& o) {
  check<ValueError>(o.eps > 0 && std::isfinite(o.eps), "gradcheck: eps must be finite and > 0, got {}", o.eps);
  check<ValueError>(o.atol >= 0 && o.rtol >= 0, "gradcheck: atol and rtol must be >= 0, got {} and {}", o.atol, o.rtol);
  const bool defaults = o.eps == 1e-6 && o.atol == 1e-5 && o.rtol == 1e-3;
  std::vector<size_t> diff;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].requires_grad()) continue;
    check<DTypeError>(inputs[i].dtype() == f64 || !defaults,
                      "gradcheck: input {} is {}: central differences in f32 carry rounding errors far above the "
                      "default tolerances; use f64 inputs, or pass looser eps/atol/rtol explicitly", i,
                      inputs[i].dtype());
    diff.push_back(i);
  }
  check<ValueError>(!diff.empty(), "gradcheck: no input requires grad");
  Variable out = fn(inputs);
  const int64_t n_out = out.numel();
  std::vector<Variable> wrt;
  for (size_t i : diff) wrt.push_back(inputs[i]);
  // analytic[j][i] = d out_j / d input_i (flattened), row by row.
  std::vector<std::vector<std::vector<double>>> analytic(n_out);
  for (int64_t j = 0; j < n_out; ++j) {
    Tensor seed = zeros(out.shape(), out.dtype());
    set(seed, offset_of(seed, j), 1.0);
    std::vector<Variable> g = out.requires_grad()
        ? grad({out}, wrt, {seed}, {.retain_graph = true, .allow_unused = true}) : std::vector<Variable>(wrt.size());
    for (size_t i = 0; i < wrt.size(); ++i)
      analytic[j].push_back(g[i] ? flat(g[i]) : std::vector<double>(wrt[i].numel(), 0.0));
  }
  out = Variable();
  Worst w;
  for (size_t i = 0; i < wrt.size(); ++i) {
    const Tensor& t = wrt[i].value();
    for (int64_t k = 0; k < t.numel(); ++k) {
      int64_t off = offset_of(t, k);
      double x0 = get(t, off);
      set(t, off, x0 + o.eps);
      std::vector<double> plus = flat(fn(inputs));
      set(t, off, x0 - o.eps);
      std::vector<double> minus = flat(fn(inputs));
      set(t, off, x0);
      for (int64_t j = 0; j < n_out; ++j) {
        double numeric = (plus[j] - minus[j]) / (2 * o.eps), a = analytic[j][i][k];
        double excess = std::isfinite(a - numeric) ? std::abs(a - numeric) - (o.atol + o.rtol * std::abs(numeric))
                                                   : INFINITY;
        if (excess > w.excess) w = {excess, a, numeric, diff[i], k, j};
      }
    }
  }
  GradcheckResult r;
  r.ok = w.excess <= 0;
  r.report = fmt::format("input {} element {} (output element {}): analytic {:.10g} vs numeric {:.10g} "
                         "(|diff| {:.3g}, allowed {:.3g})", w.input, w.element, w.output, w.analytic, w.numeric,
                         std::abs(w.analytic - w.numeric), o.atol + o.rtol * std::abs(w.numeric));
  return r;
}

GradFn vjp(const GradFn& fn) {
  return [fn](const std::vector<Variable>& xs) {
    std::vector<Variable> x(xs.begin(), xs.end() - 1), wrt;
    for (const Variable& xi : x)
      if (xi.requires_grad()) wrt.push_back(xi);
    Variable s = sum(fn(x) * xs.back());
    std::vector<Variable> g = grad({s}, wrt, {}, {.create_graph = true, .allow_unused = true});
    std::vector<Variable> parts;
    for (size_t i = 0; i < g.size(); ++i)
      parts.push_back(g[i] ? g[i].reshape({-1}) : Variable(zeros({wrt[i].numel()}, wrt[i].dtype())));
    return cat(parts, 0);
  };
}

GradcheckResult gradgradcheck(const GradFn& fn, const std::vector<Variable>& inputs, const GradcheckOptions& o,
                              uint64_t seed) {
  Generator gen(seed);
  Variable probe = fn(inputs);
  std::vector<Variable> all = inputs;
  all.emplace_back(randn(probe.shape(), probe.dtype(), &gen), true);
  return gradcheck(vjp(fn), all, o);
}

}  // namespace tg
