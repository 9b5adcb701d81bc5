// Every reduction and normalisation op over lines that are all -inf, all +inf, mixed (finite with ±inf, -inf
// with +inf), NaN-holding, constant and empty, in f32 and f64, forward and backward, against the conventions
// of the README's "Numerical edge cases", written out below as scalar references. Each line runs along the
// last dim (the f32 Highway lines) and along dim 0 (the strided lines), beside a finite line that must stay
// as it is.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "autograd/functions.h"

using namespace tg;

namespace {

constexpr double kInf = INFINITY;
using Line = std::vector<double>;

struct Kind {
  const char* name;
  Line x;
};
const std::vector<Kind> kKinds = {
    {"finite", {0.5, -1, 2, 0}},          {"constant", {2, 2, 2, 2}},
    {"all -inf", {-kInf, -kInf, -kInf, -kInf}}, {"all +inf", {kInf, kInf, kInf, kInf}},
    {"finite and -inf", {-kInf, 3, -kInf, 1}},  {"finite and +inf", {kInf, 1, kInf, 2}},
    {"-inf and +inf", {-kInf, kInf, 1, kInf}},  {"NaN", {1, NAN, -kInf, 2}},
    {"empty", {}},
};
const Line kOther = {0.25, 1, -0.5, 3};  // the finite line beside each kind
const Line kDy = {1, -2, 3, 0.5};        // dy of a line output: uneven, so softmax's gradient is not 0 by symmetry
constexpr double kDyReduced = 1.5;       // dy of a reduced line

// What an op gives on one line: its values (one for a reduction), and the gradient of Σ values·dy; or that the
// forward or the backward throws.
struct Want {
  Line y, dx;
  bool throws_forward = false, throws_backward = false;
};
struct Op {
  const char* name;
  bool reduces;
  std::function<Variable(const Variable&, int64_t)> f;  // along dim
  std::function<Want(const Line&)> ref;
};

bool has_nan(const Line& x) {
  for (double v : x)
    if (std::isnan(v)) return true;
  return false;
}
double line_max(const Line& x) {  // NaNs passed over; -inf when empty
  double m = -kInf;
  for (double v : x) m = std::isnan(v) ? m : std::max(m, v);
  return m;
}
Line nans(size_t n) { return Line(n, NAN); }

// softmax: the limit where the max is not finite (zeros; 1/k on k entries of +inf), NaN throughout with a NaN.
Line softmax_ref(const Line& x) {
  const double m = line_max(x);
  Line y(x.size());
  if (has_nan(x)) return nans(x.size());
  double k = 0, s = 0;
  for (double v : x) k += v == kInf, s += std::isfinite(m) ? std::exp(v - m) : 0;
  for (size_t j = 0; j < x.size(); ++j)
    y[j] = m == -kInf ? 0 : m == kInf ? (x[j] == kInf ? 1 / k : 0) : std::exp(x[j] - m) / s;
  return y;
}
Line log_softmax_ref(const Line& x) {
  const Line p = softmax_ref(x);
  const double m = line_max(x);
  double s = 0;
  for (double v : x) s += std::isfinite(m) ? std::exp(v - m) : 0;
  Line y(x.size());
  for (size_t j = 0; j < x.size(); ++j) y[j] = std::isfinite(m) && !has_nan(x) ? x[j] - m - std::log(s) : std::log(p[j]);
  return y;
}
// Σ g·v over a line, and g times each of v.
double dot(const Line& g, const Line& v) {
  double s = 0;
  for (size_t j = 0; j < v.size(); ++j) s += g[j] * v[j];
  return s;
}
Line dy_of(const Line& x) { return Line(kDy.begin(), kDy.begin() + long(x.size())); }

Want sum_ref(const Line& x) {
  double s = 0;
  for (double v : x) s += v;  // +inf with -inf: NaN, the sum has no limit (IEEE, as PyTorch)
  return {{s}, Line(x.size(), kDyReduced)};
}
Want mean_ref(const Line& x) {
  if (x.empty()) return {{}, {}, true};
  Want w = sum_ref(x);
  w.y[0] /= double(x.size());
  for (double& d : w.dx) d /= double(x.size());
  return w;
}
Want var_ref(const Line& x, int64_t c) {
  const double n = double(x.size());
  if (n - double(c) <= 0) return {{}, {}, true};
  if (has_nan(x)) return {{NAN}, nans(x.size())};
  for (double v : x)
    if (std::isinf(v)) return {{kInf}, {}, false, true};  // an unbounded spread, without a finite gradient
  double m = 0, ss = 0;
  for (double v : x) m += v / n;
  for (double v : x) ss += (v - m) * (v - m);
  Want w{{ss / (n - double(c))}, {}};
  for (double v : x) w.dx.push_back(kDyReduced * 2 * (v - m) / (n - double(c)));
  return w;
}
// amax (amin with `sign` -1): NaN wins, and then the shares are 0/0; ties share the gradient.
Want extreme_ref(const Line& x, double sign, bool first_only) {
  if (x.empty()) return {{}, {}, true};
  if (has_nan(x)) {
    Want w{{NAN}, first_only ? Line(x.size(), 0.0) : nans(x.size())};
    if (first_only) w.dx[size_t(std::find_if(x.begin(), x.end(), [](double v) { return std::isnan(v); }) - x.begin())] =
        kDyReduced;  // max(dim): the first NaN's index takes it all
    return w;
  }
  double best = x[0];
  for (double v : x) best = sign * v > sign * best ? v : best;
  double ties = 0;
  for (double v : x) ties += v == best;
  Want w{{best}, Line(x.size(), 0.0)};
  for (size_t j = 0; j < x.size(); ++j)
    if (x[j] == best) {
      w.dx[j] = first_only ? kDyReduced : kDyReduced / ties;
      if (first_only) break;
    }
  return w;
}
Want logsumexp_ref(const Line& x) {
  const double m = line_max(x);
  double s = 0;
  for (double v : x) s += std::isfinite(m) ? std::exp(v - m) : 0;
  Want w{{has_nan(x) ? NAN : std::isfinite(m) ? m + std::log(s) : m}, softmax_ref(x)};
  for (double& d : w.dx) d *= kDyReduced;  // dy·softmax: 0 on an all -inf line, 1/k on k entries of +inf
  return w;
}
Want softmax_want(const Line& x) {
  const Line y = softmax_ref(x), g = dy_of(x);
  Want w{y, {}};
  for (size_t j = 0; j < x.size(); ++j) w.dx.push_back(y[j] * (g[j] - dot(g, y)));
  return w;
}
Want log_softmax_want(const Line& x) {
  const Line y = log_softmax_ref(x), g = dy_of(x);
  const bool masked = !x.empty() && line_max(x) == -kInf && !has_nan(x);
  Want w{y, {}};
  double total = 0;
  for (double v : g) total += v;
  for (size_t j = 0; j < x.size(); ++j) w.dx.push_back(masked ? 0.0 : g[j] - std::exp(y[j]) * total);
  return w;
}
constexpr double kEps = 1e-5;
Want layer_norm_want(const Line& x) {
  if (x.empty()) return {{}, {}, true};
  if (has_nan(x)) return {nans(x.size()), nans(x.size())};
  for (double v : x)
    if (std::isinf(v)) return {{}, {}, true};  // no mean or variance
  const double n = double(x.size());
  double m = 0, v = 0;
  for (double e : x) m += e / n;
  for (double e : x) v += (e - m) * (e - m) / n;
  const double rs = 1 / std::sqrt(v + kEps);  // a constant line: 1/√eps, x̂ = 0
  Line h;
  for (double e : x) h.push_back((e - m) * rs);
  const Line g = dy_of(x);
  double mg = 0, mgh = 0;
  for (size_t j = 0; j < x.size(); ++j) mg += g[j] / n, mgh += g[j] * h[j] / n;
  Want w{h, {}};
  for (size_t j = 0; j < x.size(); ++j) w.dx.push_back(rs * (g[j] - mg - h[j] * mgh));
  return w;
}

// rms_norm (eps kEps): ValueError on a row holding ±inf, as layer_norm; dx = r·dy - r³·x·Σ(dy·x)/n.
Want rms_norm_want(const Line& x) {
  if (x.empty()) return {{}, {}, true};
  if (has_nan(x)) return {nans(x.size()), nans(x.size())};
  for (double v : x)
    if (std::isinf(v)) return {{}, {}, true};
  const double n = double(x.size());
  double ms = 0;
  for (double e : x) ms += e * e / n;
  const double r = 1 / std::sqrt(ms + kEps);
  const Line g = dy_of(x);
  Want w;
  for (size_t j = 0; j < x.size(); ++j) {
    w.y.push_back(x[j] * r);
    w.dx.push_back(r * g[j] - r * r * r * x[j] * dot(g, x) / n);
  }
  return w;
}
// The 2-norm: +inf on a line holding k entries of ±inf, whose gradient is sign(x)/√k on them and 0 elsewhere.
Want vector_norm_want(const Line& x) {
  if (has_nan(x)) return {{NAN}, nans(x.size())};
  double k = 0, ss = 0;
  for (double v : x) k += std::isinf(v), ss += std::isinf(v) ? 0 : v * v;
  const double norm = k ? kInf : std::sqrt(ss);
  Want w{{norm}, {}};
  for (double v : x)
    w.dx.push_back(k ? (std::isinf(v) ? kDyReduced * (v > 0 ? 1 : -1) / std::sqrt(k) : 0)
                     : norm ? kDyReduced * v / norm : 0);
  return w;
}

// An op along `dim` of a 2-D x; layer_norm normalises the last dim, so along dim 0 it runs on the transpose.
const std::vector<Op>& ops() {
  static const std::vector<Op> k = {
      {"sum", true, [](const Variable& x, int64_t d) { return sum(x, {d}); }, sum_ref},
      {"mean", true, [](const Variable& x, int64_t d) { return mean(x, {d}); }, mean_ref},
      {"var c=0", true, [](const Variable& x, int64_t d) { return var(x, {d}, 0); },
       [](const Line& x) { return var_ref(x, 0); }},
      {"var c=1", true, [](const Variable& x, int64_t d) { return var(x, {d}, 1); },
       [](const Line& x) { return var_ref(x, 1); }},
      {"amax", true, [](const Variable& x, int64_t d) { return amax(x, {d}); },
       [](const Line& x) { return extreme_ref(x, 1, false); }},
      {"amin", true, [](const Variable& x, int64_t d) { return amin(x, {d}); },
       [](const Line& x) { return extreme_ref(x, -1, false); }},
      {"max", true, [](const Variable& x, int64_t d) { return max(x, d).values; },
       [](const Line& x) { return extreme_ref(x, 1, true); }},
      {"min", true, [](const Variable& x, int64_t d) { return min(x, d).values; },
       [](const Line& x) { return extreme_ref(x, -1, true); }},
      {"logsumexp", true, [](const Variable& x, int64_t d) { return logsumexp(x, {d}); }, logsumexp_ref},
      {"softmax", false, [](const Variable& x, int64_t d) { return softmax(x, d); }, softmax_want},
      {"log_softmax", false, [](const Variable& x, int64_t d) { return log_softmax(x, d); }, log_softmax_want},
      {"layer_norm", false,
       [](const Variable& x, int64_t d) {
         if (d == 1) return layer_norm(x, {x.size(1)}, kEps);
         return transpose(layer_norm(transpose(x, 0, 1), {x.size(0)}, kEps), 0, 1);
       },
       layer_norm_want},
      {"rms_norm", false,
       [](const Variable& x, int64_t d) {
         if (d == 1) return rms_norm(x, 1, Variable(), kEps);
         return transpose(rms_norm(transpose(x, 0, 1), 1, Variable(), kEps), 0, 1);
       },
       rms_norm_want},
      // batch_norm (training) normalises each channel, a column of (N, C), as layer_norm does a row
      {"batch_norm", false,
       [](const Variable& x, int64_t d) {
         const auto bn = [](const Variable& v) {
           return batch_norm(v, Tensor(), Tensor(), Variable(), Variable(), true, 0.1, kEps);
         };
         return d == 0 ? bn(x) : transpose(bn(transpose(x, 0, 1)), 0, 1);
       },
       layer_norm_want},
      // group_norm with one group normalises each sample, a row of (N, C), as layer_norm does
      {"group_norm", false,
       [](const Variable& x, int64_t d) {
         if (d == 1) return group_norm(x, 1, Variable(), Variable(), kEps);
         return transpose(group_norm(transpose(x, 0, 1), 1, Variable(), Variable(), kEps), 0, 1);
       },
       layer_norm_want},
      {"vector_norm", true, [](const Variable& x, int64_t d) { return vector_norm(x, 2, {d}); }, vector_norm_want},
  };
  return k;
}

// got (an f32 or f64 value) is want: NaN where want is NaN, the same infinity, else within rounding. No NaN
// where want is a number.
void check_is(double got, double want, DType dt) {
  CAPTURE(got);
  CAPTURE(want);
  if (std::isnan(want)) CHECK(std::isnan(got));
  else if (std::isinf(want) || want == 0) CHECK(got == want);
  else CHECK(std::abs(got - want) <= (dt == f32 ? 1e-5 : 1e-12) * (1 + std::abs(want)));
}

// The values of `lines` (2 lines of n) laid out as the lines along dim 1 of (2, n), or along dim 0 of (n, 2).
Tensor laid_out(const std::vector<Line>& lines, size_t n, int64_t dim, DType dt) {
  std::vector<double> v;
  for (size_t j = 0; j < (dim == 1 ? 2 : n); ++j)
    for (size_t i = 0; i < (dim == 1 ? n : 2); ++i) v.push_back(dim == 1 ? lines[j][i] : lines[i][j]);
  return tensor(v, dim == 1 ? Shape{2, int64_t(n)} : Shape{int64_t(n), 2}, dt);
}

// Line i of t laid out as above (t of the input's shape, or reduced to (2)).
Line line_of(const Tensor& t, int64_t i, int64_t dim) {
  if (t.dim() == 1) return {t.to_vector<double>()[size_t(i)]};
  return (dim == 1 ? t.select(0, i) : t.select(1, i)).to_vector<double>();
}

void check_line(const Line& got, const Line& want, DType dt) {
  REQUIRE(got.size() == want.size());
  for (size_t j = 0; j < got.size(); ++j) {
    CAPTURE(j);
    check_is(got[j], want[j], dt);
  }
}

}  // namespace

TEST_CASE("every reduction and normalisation op keeps its documented values on ±inf, NaN and empty lines") {
  for (DType dt : {f32, f64})
    for (const Kind& kind : kKinds)
      for (const Op& op : ops())
        for (int64_t dim : {1, 0}) {
          const std::string kind_name = kind.name, op_name = op.name;
          CAPTURE(dt);
          CAPTURE(kind_name);
          CAPTURE(op_name);
          CAPTURE(dim);
          const size_t n = kind.x.size();
          const Line other(kOther.begin(), kOther.begin() + long(n));
          const Variable x(laid_out({kind.x, other}, n, dim, dt), true);
          const Want want = op.ref(kind.x), beside = op.ref(other);
          if (want.throws_forward) {
            CHECK_THROWS_AS(op.f(x, dim), Error);
            continue;
          }
          const Variable y = op.f(x, dim);
          check_line(line_of(y.value(), 0, dim), want.y, dt);
          check_line(line_of(y.value(), 1, dim), beside.y, dt);
          const Tensor dy = op.reduces ? full(y.shape(), kDyReduced, dt)
                                       : laid_out({dy_of(kind.x), dy_of(other)}, n, dim, dt);
          Variable loss = sum(y * Variable(dy));
          if (want.throws_backward) {
            CHECK_THROWS_AS(loss.backward(), ValueError);
            continue;
          }
          loss.backward();
          check_line(line_of(x.grad(), 0, dim), want.dx, dt);
          check_line(line_of(x.grad(), 1, dim), beside.dx, dt);
        }
}

// Rows of 4 logits: the loss of each (reduction none) and its gradient, p·Σa - a (softmax's limits for p),
// with 0 for a fully masked row (+inf loss) and for an ignored one, whatever its logits.
TEST_CASE("cross_entropy on ±inf, NaN and ignored rows: +inf or finite losses, gradients without NaN") {
  const double n = NAN, log4 = std::log(4.0), q = 1 / (1 + std::exp(-2.0));  // q: p of 3 beside 1
  const std::vector<double> logits = {-kInf, -kInf, -kInf, -kInf,  // fully masked: loss +inf, gradient 0
                                      kInf,  kInf,  kInf,  kInf,   // all +inf: p = 1/4 each
                                      1,     -kInf, kInf,  2,      // target the +inf: loss 0, gradient 0
                                      1,     -kInf, kInf,  2,      // target a finite one: loss +inf
                                      -kInf, 0,     0,     -kInf,  // ignored, -inf at class 0: loss 0, not NaN
                                      -kInf, 3,     -kInf, 1,      // masked entries: finite
                                      1,     n,     0,     0};     // NaN in, NaN out
  const std::vector<int64_t> targets = {1, 0, 2, 0, -100, 1, 0};
  for (DType dt : {f32, f64}) {
    CAPTURE(dt);
    const Variable z(tensor(logits, {7, 4}, dt), true);
    const Variable loss = cross_entropy(z, index_tensor(targets, {7}), {.reduction = Reduction::none});
    check_line(loss.value().to_vector<double>(), {kInf, log4, 0, kInf, 0, -std::log(q), n}, dt);
    sum(loss).backward();
    check_line(z.grad().to_vector<double>(),
               {0, 0, 0, 0, 0.25 - 1, 0.25, 0.25, 0.25, 0, 0, 0, 0, -1, 0, 1, 0, 0, 0, 0, 0, 0, q - 1, 0, 1 - q,
                n, n, n, n},
               dt);
  }
}

TEST_CASE("cross_entropy with label smoothing puts mass on -inf logits (loss +inf) and stays NaN-free") {
  const std::vector<double> logits = {-kInf, -kInf, -kInf, -kInf, kInf, kInf, kInf, kInf, 1, -kInf, kInf, 2,
                                      -kInf, 0, 0, -kInf};
  const Variable z(tensor(logits, {4, 4}), true);
  const Variable loss = cross_entropy(z, index_tensor({1, 0, 2, -100}, {4}),
                                      {.reduction = Reduction::none, .label_smoothing = 0.2});
  check_line(loss.value().to_vector<double>(), {kInf, std::log(4.0), kInf, 0}, f32);
  sum(loss).backward();
  // p - a with a = 0.8·onehot + 0.05; the masked and the ignored rows get 0
  check_line(z.grad().to_vector<double>(), {0, 0, 0, 0, 0.25 - 0.85, 0.2, 0.2, 0.2, -0.05, -0.05, 1 - 0.85, -0.05,
                                            0, 0, 0, 0},
             f32);
}

TEST_CASE("cross_entropy: a class of weight 0 adds 0 at a -inf logit; a mean over no targets is NaN, gradient 0") {
  using R = Reduction;
  const Variable z(tensor({-kInf, 0, 0, 0, 1, 2, 3, 4}, {2, 4}, f64), true);
  const double lse = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0) + std::exp(4.0));
  const Variable loss = cross_entropy(z, index_tensor({0, 1}, {2}),
                                      {.reduction = R::sum, .weight = tensor({0, 1, 1, 1}, {4}, f64)});
  check_is(loss.item(), lse - 2, f64);  // was 0·(-inf) = NaN
  // every target ignored: 0/0 under mean, as PyTorch, and no gradient (was 0·inf = NaN)
  const Variable y(tensor({1, 2, -kInf, 0}, {2, 2}, f64), true);
  Variable none = cross_entropy(y, index_tensor({-100, -100}, {2}));
  CHECK(std::isnan(none.item()));
  none.backward();
  check_line(y.grad().to_vector<double>(), {0, 0, 0, 0}, f64);
}
