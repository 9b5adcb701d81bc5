// Random number generation: one mt19937_64 per Generator, turned into uniform and normal draws in a fixed
// order so that a seed reproduces the same tensors run after run.
#include "core/random.h"

#include <cmath>
#include <numbers>
#include <sstream>

#include "core/error.h"
#include "core/kernel_util.h"

namespace tg {

double Generator::uniform() { return double(engine_() >> 11) * 0x1.0p-53; }

double Generator::normal() {
  double u1 = 1.0 - uniform();  // in (0, 1], so the log is finite
  double u2 = uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

uint64_t Generator::below(uint64_t n) {
  // Rejection sampling keeps every value equally likely.
  uint64_t limit = UINT64_MAX - UINT64_MAX % n, v;
  do v = engine_();
  while (v >= limit);
  return v % n;
}

std::string Generator::get_state() const {
  std::ostringstream os;
  os << engine_;
  return os.str();
}

void Generator::set_state(const std::string& state) {
  std::istringstream is(state);
  std::mt19937_64 e;
  is >> e;
  check<ValueError>(!is.fail(), "Generator::set_state: not a generator state ({} bytes)", state.size());
  engine_ = e;
}

Generator& default_generator() {
  static Generator g(0);
  return g;
}

void manual_seed(uint64_t seed) { default_generator().manual_seed(seed); }

namespace {
template <class F>
Tensor draw(const Shape& shape, DType dtype, Generator* gen, F f) {
  Generator& g = gen ? *gen : default_generator();
  Tensor t = empty(shape, dtype);
  detail::dispatch(dtype, [&](auto z) {
    using T = decltype(z);
    T* p = t.data<T>();
    for (int64_t i = 0; i < t.numel(); ++i) p[i] = T(f(g));
  });
  return t;
}
}  // namespace

Tensor randn(const Shape& shape, DType dtype, Generator* gen) {
  check<DTypeError>(is_floating(dtype), "randn: expected f32 or f64, got {}", dtype);
  return draw(shape, dtype, gen, [](Generator& g) { return g.normal(); });
}

Tensor rand(const Shape& shape, DType dtype, Generator* gen, double low, double high) {
  check<DTypeError>(is_floating(dtype), "rand: expected f32 or f64, got {}", dtype);
  check<ValueError>(std::isfinite(low) && std::isfinite(high) && low <= high,
                    "rand: need finite low <= high, got [{}, {})", low, high);
  return draw(shape, dtype, gen, [=](Generator& g) { return low + (high - low) * g.uniform(); });
}

Tensor randint(int64_t low, int64_t high, const Shape& shape, Generator* gen) {
  check<ValueError>(high > low, "randint: need low < high, got [{}, {})", low, high);
  uint64_t span = uint64_t(high) - uint64_t(low);
  return draw(shape, i64, gen, [=](Generator& g) { return int64_t(uint64_t(low) + g.below(span)); });
}

Tensor bernoulli(const Shape& shape, double p, DType dtype, Generator* gen) {
  check<ValueError>(p >= 0 && p <= 1, "bernoulli: probability must be in [0, 1], got {}", p);
  return draw(shape, dtype, gen, [=](Generator& g) { return g.uniform() < p ? 1.0 : 0.0; });
}

Tensor randperm(int64_t n, Generator* gen) {
  check<ValueError>(n >= 0, "randperm: n must be >= 0, got {}", n);
  Generator& g = gen ? *gen : default_generator();
  Tensor t = arange(0, double(n), 1, i64);
  int64_t* p = t.data<int64_t>();
  for (int64_t i = n - 1; i > 0; --i) std::swap(p[i], p[g.below(uint64_t(i) + 1)]);
  return t;
}

}  // namespace tg
