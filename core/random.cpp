// Random number generation: one xoshiro256** stream per Generator, turned into uniform and normal draws in
// a fixed order so that a seed reproduces the same tensors run after run. (xoshiro replaced mt19937_64:
// dropout masks draw millions of numbers per epoch, and its state refills cost a tenth of a training step.)
#include "core/random.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <iterator>
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

namespace {

// Jump polynomials: kJump[k] = x^C mod the characteristic polynomial of xoshiro256's linear state transition
// T, for C = kFirstJump·2^k draws (tools/xoshiro_jump.py, checked there against the authors' 2^128 JUMP).
// Σ_i bit_i(kJump[k]) · T^i · s is the state C draws after s: 256 steps instead of C.
constexpr int64_t kFirstJump = 2048;
constexpr uint64_t kJump[][4] = {
    {0x876c2301125a85c0, 0x15fe822628b16f04, 0x3c8ca36ec9a74fa7, 0x51edef31819e01ff},  // 2048
    {0xd7f4e8da7e228b85, 0xd638d47ec5bcf595, 0xaa6eb691cbf9ce10, 0x0f41cce3698fad39},  // 4096
    {0x669da12373880674, 0xb1df898a4a6f1548, 0x32104b94fe2534d3, 0xda66e09e52b341d1},  // 8192
    {0x4f20eb915e780231, 0x3886af219b885248, 0x023ecbee3f717fce, 0x3cec2c375bef249c},  // 16384
    {0x449b3ae793888c8c, 0xc3ce2f061f077568, 0xa69393ac0d837e54, 0x1a9dcf944ae47603},  // 32768
    {0x7e89ac5ca2fbf2c7, 0x92ae7ca370c0bf6b, 0xef43beaa06f02fb8, 0xd87f8ce230817a21},  // 65536
    {0x6c4adbe18e29df8a, 0x54adade3697d477f, 0xf0c168649cdba61f, 0xbd53027696368bbb},  // 131072
    {0x1a673fecf40e36b8, 0xf2c602feb5ed002b, 0x1ea49b5067452594, 0xf78a97c0d882cd37},  // 262144
    {0xef4606da56224c47, 0x770323eab8d437bd, 0x590923d02ec52531, 0x1639a36e0968e3c5},  // 524288
    {0x31d9d05c5d95f3cd, 0x7cde241817a3ce0f, 0x2f679f694a74c76a, 0x8b3919a9d298a415},  // 1048576
};
constexpr int kJumps = int(std::size(kJump));

// The state update of Generator::next.
void step(uint64_t s[4]) {
  const uint64_t t = s[1] << 17;
  s[2] ^= s[0], s[3] ^= s[1], s[1] ^= s[2], s[0] ^= s[3], s[2] ^= t, s[3] = std::rotl(s[3], 45);
}

void jump(uint64_t s[4], const uint64_t (&poly)[4]) {
  uint64_t acc[4] = {0, 0, 0, 0};
  for (int i = 0; i < 256; ++i) {
    const uint64_t take = uint64_t(0) - ((poly[i / 64] >> (i % 64)) & 1);
    for (int q = 0; q < 4; ++q) acc[q] ^= s[q] & take;
    step(s);
  }
  std::copy(acc, acc + 4, s);
}

}  // namespace

// Blocks of 8·C draws, C the largest tabulated jump that fits, run as 8 lanes C draws apart: lane l starts
// l jumps after the current state, and lane 7 ends where the block ends: dropout's masks draw millions a
// step, and the lanes run side by side in vectors (cpu::xoshiro_bits_below8). What no block covers is drawn
// one at a time.
void Generator::bits_below(uint64_t threshold, uint64_t* words, int64_t n) {
  int64_t done = 0;  // a multiple of 64 until the tail
  for (int k = kJumps - 1; k >= 0; --k) {
    const int64_t c = kFirstJump << k;
    while (n - done >= 8 * c) {
      uint64_t lanes[4][8], s[4] = {s_[0], s_[1], s_[2], s_[3]};
      for (int l = 0; l < 8; ++l) {
        for (int q = 0; q < 4; ++q) lanes[q][l] = s[q];
        if (l < 7) jump(s, kJump[k]);
      }
      cpu::xoshiro_bits_below8(lanes, threshold, words + done / 64, c / 64);
      for (int q = 0; q < 4; ++q) s_[q] = lanes[q][7];
      done += 8 * c;
    }
  }
  for (int64_t k = done / 64; k * 64 < n; ++k) {
    const int64_t end = std::min<int64_t>(64, n - k * 64);
    uint64_t w = 0;
    for (int64_t j = 0; j < end; ++j) w |= uint64_t(next() < threshold) << j;
    words[k] = w;
  }
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
