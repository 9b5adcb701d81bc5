#!/usr/bin/env python3
"""Writes the 5 cross-validation files of RESULTS.md's third round, from the 2400 TRAINING sentences only.

Usage: python3 examples/sentiment/cv_files.py OUT_DIR   (writes OUT_DIR/f0.tsv .. f4.tsv)

The reference split's test sentences (every 5th per source) are dropped. The 2400 others, in file order, are
shuffled with Python's random.Random(2026) and dealt into 5 folds of 480 (fold = shuffled position % 5).
f<k>.tsv holds the other 1920 at row positions i % 5 != 4 and fold k at i % 5 == 4, with no source column,
so that `sentiment train --data f<k>.tsv` trains on the 1920 and reports fold k as its "test set": a
validation score that never touches the real test set. `sentiment eval --data f<k>.tsv --logits FILE`
writes the fold's logits.
"""
import random
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data" / "sentences.tsv"


def main(out):
    rows = [r for r in DATA.read_text().split("\n")[1:] if r]
    seen, train = {}, []
    for r in rows:
        text, label, source = r.split("\t")
        i = seen.get(source, 0)
        seen[source] = i + 1
        if i % 5 != 4:
            train.append(f"{text}\t{label}")
    assert len(train) == 2400, len(train)
    order = list(range(len(train)))
    random.Random(2026).shuffle(order)
    fold = [0] * len(train)
    for position, i in enumerate(order):
        fold[i] = position % 5
    out.mkdir(parents=True, exist_ok=True)
    for k in range(5):
        rest = [t for i, t in enumerate(train) if fold[i] != k]
        held_out = [t for i, t in enumerate(train) if fold[i] == k]
        lines = ["text\tlabel"]
        for j, t in enumerate(held_out):
            lines += rest[4 * j:4 * j + 4] + [t]
        (out / f"f{k}.tsv").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(Path(sys.argv[1]))
