#pragma once
// Random numbers: a seedable generator (xoshiro256**, Blackman & Vigna 2018) and the factories that draw from
// it. Every draw has a fixed order and no library-defined distribution is used, so the same seed gives the
// same tensors on every run and machine.
#include <cstdint>
#include <string>

#include "core/tensor.h"

namespace tg {

/// A seeded stream of random numbers. Not thread-safe: one per thread, or guard it.
class Generator {
 public:
  /// A generator seeded with `seed` (manual_seed).
  explicit Generator(uint64_t seed = 0) { manual_seed(seed); }
  /// Restarts the stream: the state is filled from `seed` by splitmix64, as the xoshiro authors advise.
  void manual_seed(uint64_t seed);
  /// The next 64 random bits.
  uint64_t next() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9, t = s_[1] << 17;
    s_[2] ^= s_[0], s_[3] ^= s_[1], s_[1] ^= s_[2], s_[0] ^= s_[3], s_[2] ^= t, s_[3] = rotl(s_[3], 45);
    return result;
  }
  /// The next n draws as bits packed 64 to a word: bit i of words[i / 64] is next() < threshold for draw i
  /// (bits above n in the last word are 0). The same bits and final state as n calls of next(); long runs
  /// draw 8 lanes at once, each started at its place in the stream by a jump (core/cpu/xoshiro_jump.cpp).
  void bits_below(uint64_t threshold, uint64_t* words, int64_t n);
  /// Uniform in [0, 1) with 53 random bits.
  double uniform();
  /// Standard normal (Box-Muller on two uniforms; no cached second value, so state is simple).
  double normal();
  /// Uniform integer in [0, n); n > 0.
  uint64_t below(uint64_t n);
  /// The full state as text, for checkpoints that resume exactly.
  std::string get_state() const;
  /// Restores get_state(); ValueError for text that is not a state, leaving the generator unchanged.
  void set_state(const std::string& state);

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

/// The generator used when none is passed: this thread's DefaultGeneratorGuard's, else the process-wide one.
Generator& default_generator();
/// RAII: makes `gen` this thread's default generator while it lives (then the previous one again), so that
/// work run on several threads at once draws each from its own stream (as torch.random.fork_rng does per
/// block). `gen` must outlive the guard.
class DefaultGeneratorGuard {
 public:
  /// Makes `gen` the default generator until this guard is destroyed.
  explicit DefaultGeneratorGuard(Generator& gen);
  ~DefaultGeneratorGuard();
  DefaultGeneratorGuard(const DefaultGeneratorGuard&) = delete;
  DefaultGeneratorGuard& operator=(const DefaultGeneratorGuard&) = delete;

 private:
  Generator* previous_;
};
/// Seeds the default generator.
void manual_seed(uint64_t seed);

/// Standard normal samples.
Tensor randn(const Shape& shape, DType dtype = f32, Generator* gen = nullptr);
/// Uniform samples in [low, high).
Tensor rand(const Shape& shape, DType dtype = f32, Generator* gen = nullptr, double low = 0.0, double high = 1.0);
/// Uniform i64 integers in [low, high); ValueError when high <= low.
Tensor randint(int64_t low, int64_t high, const Shape& shape, Generator* gen = nullptr);
/// 1 with probability p, else 0; ValueError unless 0 <= p <= 1.
Tensor bernoulli(const Shape& shape, double p, DType dtype = f32, Generator* gen = nullptr);
/// Dropout's forward in one pass (Srivastava et al. 2014): output = x·m·scale, m ~ Bernoulli(1-p) drawn
/// one next() per element in row-major order (bernoulli()'s stream); `keep` holds m packed 64 bits to an
/// i64 word, and `scale` is 1/(1-p) as rounded in x's dtype (0 at p = 1), so that masked_scale(dy, keep,
/// scale) is the backward. At p = 1 nothing is drawn and all is dropped. ValueError unless 0 <= p <= 1.
struct DropoutResult {
  Tensor output;     ///< x·m·scale, x's shape
  Tensor keep;       ///< m, packed 64 bits to an i64 word
  double scale = 0;  ///< 1/(1-p) rounded in x's dtype (0 at p = 1)
};
DropoutResult dropout(const Tensor& x, double p, Generator* gen = nullptr);
/// dropout(relu(x), p) in one pass, with the two ops' draws and bits; `keep` holds m ≠ 0 and relu(x) > 0
/// together, so that masked_scale(dy, keep, scale) is the backward of both. ValueError unless 0 <= p <= 1.
DropoutResult relu_dropout(const Tensor& x, double p, Generator* gen = nullptr);
/// A random permutation of 0..n-1 (i64, Fisher-Yates).
Tensor randperm(int64_t n, Generator* gen = nullptr);

}  // namespace tg
