#!/usr/bin/python3
"""Fits the constants of the normal tail of core/cpu/unary.cpp (NormalTail, Tail), exact gelu in f32:
  e^r on |r| <= ln2/2: degree 6 with constant term 1, minimax in relative error;
  R(a) = Phi(-a)·e^(a²/2) on [0, 14.5]: P/Q with P of degree 4 and Q monic of degree 5, minimax in relative
  error, its coefficients rounded to f32 one at a time (the order searched) with the others refitted.
Minimax by Lawson's iteratively reweighted least squares on Chebyshev nodes (Loeb's linearisation for the
rational), R(a) from 30-digit mpmath. Needs python3-numpy and python3-mpmath; takes a few minutes.
    /usr/bin/python3 tools/fit_gelu.py
"""
import random

import mpmath as mp
import numpy as np

mp.mp.dps = 30


def lawson(step, n, iters):
    """Minimises max |err| of step(weights) -> (err, coefficients); returns (max |err|, coefficients)."""
    w, best = np.ones(n), None
    for _ in range(iters):
        err, c = step(w)
        e = np.abs(err).max()
        if best is None or e < best[0]:
            best = (e, c)
        w = w * (np.abs(err) / e + 1e-3)
        w /= w.mean()
    return best


def fit_exp():
    r = np.cos(np.linspace(0, np.pi, 4000)) * float(mp.log(2) / 2) * 1.0002
    y = np.exp(r)
    M = np.stack([r ** k for k in range(1, 7)], 1) / y[:, None]

    def step(w):
        c, *_ = np.linalg.lstsq(M * np.sqrt(w)[:, None], (y - 1) / y * np.sqrt(w), rcond=None)
        return (1 + np.polyval(np.append(c[::-1], 0), r)) / y - 1, c
    return lawson(step, len(r), 80)


N = 3000
a = (1 - np.cos(np.linspace(0, np.pi, N))) / 2 * 14.5
R = np.array([float(mp.erfc(mp.mpf(v) / mp.sqrt(2)) / 2 * mp.exp(mp.mpf(v) ** 2 / 2)) for v in a])
NP, NQ = 4, 5  # unknowns p0..p4 and q0..q4 (q5 = 1)


def ratio_error(c):
    return np.polyval(c[:NP + 1][::-1], a) / np.polyval(np.append(c[NP + 1:], 1.0)[::-1], a) / R - 1


def fit_ratio(fixed, iters):
    """Fits the coefficients not in `fixed` (index -> value)."""
    free = [i for i in range(NP + 1 + NQ) if i not in fixed]
    Q = np.ones(N)

    def step(w):
        nonlocal Q
        cols = np.stack([a ** k for k in range(NP + 1)] + [-R * a ** k for k in range(NQ)], 1) / (R * Q)[:, None]
        rhs = a ** NQ / Q - sum(cols[:, i] * v for i, v in fixed.items())
        c, *_ = np.linalg.lstsq(cols[:, free] * np.sqrt(w)[:, None], rhs * np.sqrt(w), rcond=None)
        full = np.zeros(NP + 1 + NQ)
        full[list(fixed)] = list(fixed.values())
        full[free] = c
        Q = np.polyval(np.append(full[NP + 1:], 1.0)[::-1], a)
        return ratio_error(full), full
    return lawson(step, N, iters)


def rounded_ratio(trials=40, seed=1):
    random.seed(seed)
    best = None
    for _ in range(trials):
        order = list(range(NP + 1 + NQ))
        random.shuffle(order)
        fixed, (_, full) = {}, fit_ratio({}, 40)
        for i in order:
            fixed[i] = float(np.float32(full[i]))
            if len(fixed) < len(order):
                _, full = fit_ratio(fixed, 40)
        c = np.array([fixed[i] for i in range(NP + 1 + NQ)])
        err = np.abs(ratio_error(c)).max()
        if best is None or err < best[0]:
            best = (err, c)
    return best


e, c = fit_exp()
print(f"e^r, degree 6: {e:.3g} before rounding to f32")
print("  in rho = 2r, rho^6 .. rho^1:", ", ".join(f"{np.float32(v / 2.0 ** (k + 1)):.9e}f" for k, v in reversed(list(enumerate(c)))))
e, _ = fit_ratio({}, 80)
err, c = rounded_ratio()
print(f"R = P/Q, degrees (4, 5): {e:.3g} before rounding, {err:.3g} with the f32 coefficients")
print("  P, a^4 .. a^0:", ", ".join(f"{v:.9e}f" for v in c[NP::-1]))
print("  Q, a^4 .. a^0 (a^5: 1):", ", ".join(f"{v:.9e}f" for v in c[:NP:-1]))
