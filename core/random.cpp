// Random number generation: one xoshiro256** stream per Generator, turned into uniform and normal draws in
// a fixed order so that a seed reproduces the same tensors run after run. (xoshiro replaced mt19937_64:
// dropout masks draw millions of numbers per epoch, and its state refills cost a tenth of a training step.)
#include "core/random.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <sstream>

#include "core/cpu/kernels.h"
#include "core/error.h"
#include "core/kernel_util.h"

namespace tg {

void Generator::manual_seed(uint64_t seed) {
  for (uint64_t& word : s_) {  // splitmix64
    uint64_t z = (seed += 0x9e3779b97f4a7c15);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9;
    z = (z ^ (z >> 27)) * 0x94d049bb133111eb;
    word = z ^ (z >> 31);
  }
}

double Generator::uniform() { return double(next() >> 11) * 0x1.0p-53; }

double Generator::normal() {
  double u1 = 1.0 - uniform();  // in (0, 1], so the log is finite
  double u2 = uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

uint64_t Generator::below(uint64_t n) {
  // Rejection sampling keeps every value equally likely.
  uint64_t limit = UINT64_MAX - UINT64_MAX % n, v;
  do v = next();
  while (v >= limit);
  return v % n;
}

// The same bits and final state as n calls of next(), in vector lanes (cpu::xoshiro_bits_below).
void Generator::bits_below(uint64_t threshold, uint64_t* words, int64_t n) {
  cpu::xoshiro_bits_below(s_, threshold, words, n);
}

std::string Generator::get_state() const {
  return fmt::format("xoshiro256** {:016x} {:016x} {:016x} {:016x}", s_[0], s_[1], s_[2], s_[3]);
}

void Generator::set_state(const std::string& state) {
  std::istringstream is(state);
  std::string tag, word;
  uint64_t s[4];
  bool ok = bool(is >> tag) && tag == "xoshiro256**";
  for (uint64_t& w : s) {
    ok = ok && bool(is >> word) && word.size() == 16 && word.find_first_not_of("0123456789abcdef") == std::string::npos;
    if (ok) w = std::stoull(word, nullptr, 16);
  }
  check<ValueError>(ok && !(is >> word) && (s[0] | s[1] | s[2] | s[3]) != 0,
                    "Generator::set_state: not a generator state ({} bytes)", state.size());
  std::copy(s, s + 4, s_);
}

namespace {
constinit thread_local Generator* t_default = nullptr;  // set by DefaultGeneratorGuard
}  // namespace

Generator& default_generator() {
  static Generator g(0);
  return t_default ? *t_default : g;
}

DefaultGeneratorGuard::DefaultGeneratorGuard(Generator& gen) : previous_(t_default) { t_default = &gen; }
DefaultGeneratorGuard::~DefaultGeneratorGuard() { t_default = previous_; }

void manual_seed(uint64_t seed) { default_generator().manual_seed(seed); }

namespace {
template <class F>
Tensor draw(const Shape& shape, DType dtype, Generator* gen, const char* op, F f) {
  Generator& g = gen ? *gen : default_generator();
  Tensor t = detail::empty_for(shape, dtype, op);
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
  return draw(shape, dtype, gen, "randn", [](Generator& g) { return g.normal(); });
}

Tensor rand(const Shape& shape, DType dtype, Generator* gen, double low, double high) {
  check<DTypeError>(is_floating(dtype), "rand: expected f32 or f64, got {}", dtype);
  check<ValueError>(std::isfinite(low) && std::isfinite(high) && low <= high,
                    "rand: need finite low <= high, got [{}, {})", low, high);
  return draw(shape, dtype, gen, "rand", [=](Generator& g) { return low + (high - low) * g.uniform(); });
}

Tensor randint(int64_t low, int64_t high, const Shape& shape, Generator* gen) {
  check<ValueError>(high > low, "randint: need low < high, got [{}, {})", low, high);
  uint64_t span = uint64_t(high) - uint64_t(low);
  return draw(shape, i64, gen, "randint", [=](Generator& g) { return int64_t(uint64_t(low) + g.below(span)); });
}

Tensor bernoulli(const Shape& shape, double p, DType dtype, Generator* gen) {
  check<ValueError>(p >= 0 && p <= 1, "bernoulli: probability must be in [0, 1], got {}", p);
  // One integer comparison per draw (dropout masks are the bulk of all draws): P(next() < t) = t / 2^64.
  if (p >= 1) {
    Tensor t = detail::empty_for(shape, dtype, "bernoulli");
    t.fill_(1.0);
    t.storage()->version = 0;  // a fresh tensor, as full() leaves it
    return t;
  }
  const uint64_t threshold = uint64_t(std::ldexp(p, 64));
  return draw(shape, dtype, gen, "bernoulli", [=](Generator& g) { return g.next() < threshold ? 1.0 : 0.0; });
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
