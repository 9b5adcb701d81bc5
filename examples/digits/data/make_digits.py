#!/usr/bin/env python3
"""Converts the UCI optical digits shipped by Debian's python3-sklearn into the digits example's data, once.

Reads sklearn/datasets/data/digits.csv.gz (1797 rows of 64 pixel counts 0..16, row-major 8x8, then the
label 0..9; it is UCI's optdigits.tes), checks every value, and writes next to this script three plain CSV
files in the same row format, without a header: train.csv, valid.csv and test.csv.

The split is stratified: within each class the rows are ordered by SHA-256 of "<SEED>:<row index>" and the
first round(15%) go to test, the next round(15%) to valid, the rest to train. Each file keeps the rows in
their original order. Deterministic: the same input gives byte-identical files on any Python 3 (no random
generator is involved; SEED only names the ordering).

Usage: python3 make_digits.py [--src PATH] [--out DIR]     Python 3 standard library only.
"""
import argparse
import gzip
import hashlib
import os
import sys

SEED = 25
DEFAULT_SRC = "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz"
FRACTIONS = {"test": 0.15, "valid": 0.15}


def read_rows(path):
    """The rows as lists of 65 ints, checked: 64 pixels in 0..16, then a label in 0..9."""
    with gzip.open(path, "rt", encoding="ascii") as f:
        lines = f.read().splitlines()
    rows = []
    for number, line in enumerate(lines, start=1):
        row = [int(v) for v in line.split(",")]
        if len(row) != 65 or not all(0 <= v <= 16 for v in row[:64]) or not 0 <= row[64] <= 9:
            raise ValueError(f"make_digits: {path}:{number}: expected 64 values in 0..16 and a label in 0..9")
        rows.append(row)
    if len(rows) != 1797:
        raise ValueError(f"make_digits: {path}: {len(rows)} rows, expected 1797")
    return rows


def stratified_split(labels):
    """Row index -> 'train', 'valid' or 'test', the same share of every class in each part."""
    part_of = {}
    for label in sorted(set(labels)):
        members = [i for i, y in enumerate(labels) if y == label]
        members.sort(key=lambda i: hashlib.sha256(f"{SEED}:{i}".encode()).digest())
        start = 0
        for part, fraction in FRACTIONS.items():
            size = round(fraction * len(members))
            part_of.update((i, part) for i in members[start:start + size])
            start += size
        part_of.update((i, "train") for i in members[start:])
    return part_of


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--src", default=DEFAULT_SRC)
    parser.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    args = parser.parse_args()

    rows = read_rows(args.src)
    part_of = stratified_split([r[64] for r in rows])
    for part in ("train", "valid", "test"):
        chosen = [r for i, r in enumerate(rows) if part_of[i] == part]
        with open(os.path.join(args.out, f"{part}.csv"), "w", encoding="ascii", newline="\n") as f:
            f.write("".join(",".join(map(str, r)) + "\n" for r in chosen))
        per_class = [sum(r[64] == c for r in chosen) for c in range(10)]
        print(f"{part}.csv: {len(chosen)} rows, per class {per_class}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
