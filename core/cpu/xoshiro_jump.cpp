// Long runs of xoshiro256** draws (Generator::bits_below, dropout's masks): the stream cut into blocks whose
// lanes start at their places by jumps, drawn side by side by xoshiro.cpp's vector lanes.
#include <algorithm>
#include <bit>
#include <iterator>

#include "core/cpu/kernels.h"

namespace tg::cpu {
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

// Generator::next(): the output of the state, then its update.
uint64_t next(uint64_t s[4]) {
  const uint64_t result = std::rotl(s[1] * 5, 7) * 9;
  step(s);
  return result;
}

}  // namespace

// Blocks of 8·C draws, C the largest tabulated jump that fits, run as 8 lanes C draws apart: lane l starts
// l jumps after the current state, and lane 7 ends where the block ends: dropout's masks draw millions a
// step, and the lanes run side by side in vectors (xoshiro_bits_below8). What no block covers is drawn
// one at a time.
void xoshiro_bits_below(uint64_t (&state)[4], uint64_t threshold, uint64_t* words, int64_t n) {
  int64_t done = 0;  // a multiple of 64 until the tail
  for (int k = kJumps - 1; k >= 0; --k) {
    const int64_t c = kFirstJump << k;
    while (n - done >= 8 * c) {
      uint64_t lanes[4][8], s[4] = {state[0], state[1], state[2], state[3]};
      for (int l = 0; l < 8; ++l) {
        for (int q = 0; q < 4; ++q) lanes[q][l] = s[q];
        if (l < 7) jump(s, kJump[k]);
      }
      xoshiro_bits_below8(lanes, threshold, words + done / 64, c / 64);
      for (int q = 0; q < 4; ++q) state[q] = lanes[q][7];
      done += 8 * c;
    }
  }
  for (int64_t k = done / 64; k * 64 < n; ++k) {
    const int64_t end = std::min<int64_t>(64, n - k * 64);
    uint64_t w = 0;
    for (int64_t j = 0; j < end; ++j) w |= uint64_t(next(state) < threshold) << j;
    words[k] = w;
  }
}


}  // namespace tg::cpu
