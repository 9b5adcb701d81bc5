#!/usr/bin/env python3
"""The RBF SVM baseline of RESULTS.md: scikit-learn's SVC on the same train/valid/test split as `digits`.

C and gamma are chosen on valid.csv (a grid over C in 1, 10, 100 and gamma in 0.01, 0.03, 0.1, 'scale',
trained on train.csv), then the chosen SVM is trained on train.csv alone and scored once on test.csv.
Pixels are scaled to [0, 1] as the C++ program scales them. Deterministic (SVC has no randomness without
probability=True).

Usage: /usr/bin/python3 examples/digits/svm_baseline.py [data-dir]   (Debian: apt-get install python3-sklearn)
"""
import os
import sys

import numpy as np
from sklearn.svm import SVC

GRID_C = [1, 10, 100]
GRID_GAMMA = [0.01, 0.03, 0.1, "scale"]


def load(path):
    """(pixels / 16, labels) of one CSV file: 64 pixels and a label per line."""
    a = np.loadtxt(path, delimiter=",", dtype=np.int64, ndmin=2)
    assert a.shape[1] == 65 and a[:, :64].min() >= 0 and a[:, :64].max() <= 16, path
    return a[:, :64] / 16.0, a[:, 64]


def main():
    data = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
    (xtr, ytr), (xva, yva), (xte, yte) = (load(os.path.join(data, f"{p}.csv")) for p in ("train", "valid", "test"))
    scores = {}
    for c in GRID_C:
        for g in GRID_GAMMA:
            scores[(c, g)] = SVC(kernel="rbf", C=c, gamma=g).fit(xtr, ytr).score(xva, yva)
            print(f"C {c:>3}  gamma {g!s:>5}  valid accuracy {scores[(c, g)]:.4f}")
    c, g = max(scores, key=lambda k: scores[k])  # the first of equals, in grid order
    test = SVC(kernel="rbf", C=c, gamma=g).fit(xtr, ytr).score(xte, yte)
    wrong = int(round((1 - test) * len(yte)))
    print(f"chosen C {c}, gamma {g}: test accuracy {test:.4f} ({len(yte) - wrong} of {len(yte)})")


if __name__ == "__main__":
    main()
