// The random lanes (core/cpu/xoshiro.cpp) on every Highway target: the bits and final states of
// xoshiro256**'s next() (Blackman & Vigna's reference, written out here) drawn one stream at a time, and
// Generator::bits_below, which runs them in its blocks, against next() one draw at a time.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <random>
#include <vector>

#include "core/cpu/kernels.h"
#include "core/random.h"
#include "targets.h"

namespace {

uint64_t next(uint64_t (&s)[4]) {
  const uint64_t result = std::rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
  s[2] ^= s[0], s[3] ^= s[1], s[1] ^= s[2], s[0] ^= s[3], s[2] ^= t, s[3] = std::rotl(s[3], 45);
  return result;
}

}  // namespace

TEST_CASE("xoshiro_bits_below8 draws each lane's stream as next() does, on every target") {
  std::mt19937_64 seed(5);
  for (const int64_t words : {1, 2, 7}) {
    for (const uint64_t threshold : {uint64_t(0), uint64_t(1) << 63, uint64_t(0xE666666666666800), ~uint64_t(0)}) {
      CAPTURE(words);
      CAPTURE(threshold);
      uint64_t start[4][8];
      for (auto& q : start)
        for (uint64_t& s : q) s = seed();
      std::vector<uint64_t> want(size_t(8 * words), 0);
      uint64_t want_end[4][8];
      for (int l = 0; l < 8; ++l) {
        uint64_t s[4] = {start[0][l], start[1][l], start[2][l], start[3][l]};
        for (int64_t i = 0; i < 64 * words; ++i)
          want[size_t(l * words + i / 64)] |= uint64_t(next(s) < threshold) << (i % 64);
        for (int q = 0; q < 4; ++q) want_end[q][l] = s[q];
      }
      tg::test::for_each_target([&] {
        uint64_t lanes[4][8];
        std::copy(&start[0][0], &start[0][0] + 32, &lanes[0][0]);
        std::vector<uint64_t> got(size_t(8 * words));
        tg::cpu::xoshiro_bits_below8(lanes, threshold, got.data(), words);
        CHECK(got == want);
        CHECK(std::equal(&lanes[0][0], &lanes[0][0] + 32, &want_end[0][0]));
      });
    }
  }
}

TEST_CASE("bits_below gives one next() per draw on every target") {
  const int64_t n = 8 * 2048 * 3 + 8 * 4096 + 77;  // blocks of two jump sizes and a tail
  tg::test::for_each_target([&] {
    tg::Generator fast(19), slow(19);
    std::vector<uint64_t> got(size_t((n + 63) / 64)), want(got.size(), 0);
    fast.bits_below(uint64_t(0x4CCCCCCCCCCCD000), got.data(), n);
    for (int64_t i = 0; i < n; ++i) want[size_t(i / 64)] |= uint64_t(slow.next() < 0x4CCCCCCCCCCCD000) << (i % 64);
    CHECK(got == want);
    CHECK(fast.get_state() == slow.get_state());
  });
}
