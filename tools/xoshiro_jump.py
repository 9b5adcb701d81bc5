#!/usr/bin/env python3
"""Jump polynomials for xoshiro256** (core/cpu/xoshiro_jump.cpp's kJump): x^C modulo the characteristic polynomial of
the generator's linear state transition T, for C = 2048 · 2^k draws, k = 0..9. A state s jumped by such a
polynomial j (Σ_i j_i · T^i · s, which needs only 256 steps) is the state C draws later, so that 8 lanes
started C draws apart reproduce the sequential stream. The polynomial is found by Berlekamp-Massey on one
state bit; the script checks it against the authors' published JUMP constant (C = 2^128) and a direct
stepping of 1000 draws, then prints the C++ table.
    python3 tools/xoshiro_jump.py
"""
import random

MASK = (1 << 64) - 1


def rotl(x, k):
    return ((x << k) | (x >> (64 - k))) & MASK


def step(s):
    s = list(s)
    t = (s[1] << 17) & MASK
    s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3]; s[2] ^= t; s[3] = rotl(s[3], 45)
    return s


def berlekamp_massey(bits):
    n = len(bits)
    c, b, length, m = [1] + [0] * n, [1] + [0] * n, 0, -1
    for i in range(n):
        d = bits[i]
        for j in range(1, length + 1):
            d ^= c[j] & bits[i - j]
        if d:
            t = c[:]
            for j in range(n - (i - m)):
                c[j + i - m] ^= b[j]
            if 2 * length <= i:
                length, m, b = i + 1 - length, i, t
    return c[:length + 1], length


def main():
    rng = random.Random(1)
    s = [rng.getrandbits(64) for _ in range(4)]
    bits = []
    for _ in range(600):
        bits.append(s[0] & 1)
        s = step(s)
    c, degree = berlekamp_massey(bits)
    assert degree == 256
    poly = sum(1 << (degree - j) for j in range(degree + 1) if c[j])

    def mulmod(a, b):
        r = 0
        while b:
            if b & 1:
                r ^= a
            b >>= 1
            a <<= 1
            if (a >> degree) & 1:
                a ^= poly
        return r

    def x_pow(e):
        r, base = 1, 2
        while e:
            if e & 1:
                r = mulmod(r, base)
            base, e = mulmod(base, base), e >> 1
        return r

    def jump(state, j):
        acc, x = [0, 0, 0, 0], list(state)
        for i in range(256):
            if (j >> i) & 1:
                acc = [a ^ b for a, b in zip(acc, x)]
            x = step(x)
        return acc

    published = [0x180ec6d33cfd0aba, 0xd5a61266f0c9392c, 0xa9582618e03fc9aa, 0x39abdc4529b1661c]
    assert x_pow(2 ** 128) == sum(w << (64 * i) for i, w in enumerate(published))
    s0 = [rng.getrandbits(64) for _ in range(4)]
    s = s0
    for _ in range(1000):
        s = step(s)
    assert jump(s0, x_pow(1000)) == s
    for k in range(10):
        j = x_pow(2048 << k)
        words = ", ".join(f"0x{(j >> (64 * i)) & MASK:016x}" for i in range(4))
        print(f"    {{{words}}},  // {2048 << k}")


if __name__ == "__main__":
    main()
