// The packed-mask kernels (core/cpu/mask.cpp) on every Highway target against their scalar definitions, bit
// for bit: every length to 200 (partial vectors, whole and partial words), NaN, ±inf, ±0 and subnormals,
// unaligned pointers, and nothing written past the line or its last word.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <random>
#include <vector>

#include "core/cpu/kernels.h"
#include "targets.h"

namespace {

template <class T>
std::vector<uint8_t> bytes(const T* p, int64_t n) {
  std::vector<uint8_t> out(size_t(n) * sizeof(T));
  if (n) std::memcpy(out.data(), p, out.size());
  return out;
}

// n values with a special every few, and n random bits (the bits past n 0), from one seed.
template <class T>
struct Line {
  std::vector<T> x;  // x[0] is padding: the kernels read x.data() + 1, not vector-aligned
  std::vector<uint64_t> bits;
  Line(int64_t n, unsigned seed) : x(size_t(n) + 1), bits(size_t((n + 63) / 64)) {
    std::mt19937_64 gen(seed);
    std::normal_distribution<T> normal;
    const T specials[] = {std::numeric_limits<T>::quiet_NaN(), std::numeric_limits<T>::infinity(),
                          -std::numeric_limits<T>::infinity(), T(0), -T(0), std::numeric_limits<T>::denorm_min(),
                          -std::numeric_limits<T>::denorm_min(), std::numeric_limits<T>::max()};
    for (int64_t i = 0; i < n; ++i) {
      x[size_t(i) + 1] = gen() % 5 == 0 ? specials[gen() % std::size(specials)] : normal(gen);
      if (gen() % 3) bits[size_t(i / 64)] |= uint64_t(1) << (i % 64);
    }
  }
  const T* data() const { return x.data() + 1; }
  bool bit(int64_t i) const { return (bits[size_t(i / 64)] >> (i % 64)) & 1; }
};

template <class T>
void check_lengths() {
  const T scale = T(1) / T(0.7);
  for (int64_t n = 0; n <= 200; ++n) {
    CAPTURE(n);
    const Line<T> line(n, unsigned(n));
    const T* x = line.data();
    const T sentinel = T(-123.25);
    std::vector<T> want_multiply(size_t(n) + 1, sentinel), want_select = want_multiply, want_relu = want_multiply;
    std::vector<uint64_t> want_relu_bits = line.bits, want_positive(line.bits.size(), 0);
    for (int64_t i = 0; i < n; ++i) {
      const size_t k = size_t(i);
      want_multiply[k] = x[i] * (line.bit(i) ? scale : T(0));
      want_select[k] = line.bit(i) ? x[i] * scale : T(0);
      const T r = !(x[i] <= 0) ? x[i] : T(0);
      want_relu[k] = r * (line.bit(i) ? scale : T(0));
      if (!(r > 0)) want_relu_bits[size_t(i / 64)] &= ~(uint64_t(1) << (i % 64));
      if (x[i] > 0) want_positive[size_t(i / 64)] |= uint64_t(1) << (i % 64);
    }
    want_relu_bits.push_back(0xDEADBEEF), want_positive.push_back(0xDEADBEEF);  // the word after: untouched
    tg::test::for_each_target([&] {
      std::vector<T> out(size_t(n) + 1, sentinel);
      tg::cpu::mask_multiply(line.bits.data(), x, scale, out.data(), n);
      CHECK(bytes(out.data(), n + 1) == bytes(want_multiply.data(), n + 1));
      tg::cpu::mask_select(line.bits.data(), x, scale, out.data(), n);
      CHECK(bytes(out.data(), n + 1) == bytes(want_select.data(), n + 1));
      std::vector<uint64_t> bits = line.bits;
      bits.push_back(0xDEADBEEF);
      tg::cpu::relu_mask_multiply(bits.data(), x, scale, out.data(), n);
      CHECK(bytes(out.data(), n + 1) == bytes(want_relu.data(), n + 1));
      CHECK(bits == want_relu_bits);
      std::vector<uint64_t> words(line.bits.size() + 1, ~uint64_t(0));
      words.back() = 0xDEADBEEF;
      tg::cpu::pack_positive(x, words.data(), n);
      CHECK(words == want_positive);
    });
  }
}

}  // namespace

TEST_CASE("f32 packed-mask kernels give their scalar definitions' bits on every target and length") {
  check_lengths<float>();
}

TEST_CASE("f64 packed-mask kernels give their scalar definitions' bits on every target and length") {
  check_lengths<double>();
}
