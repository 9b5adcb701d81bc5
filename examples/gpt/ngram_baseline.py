#!/usr/bin/env python3
"""The GPT example's baseline: a byte n-gram model with interpolated modified Kneser-Ney smoothing.

Trained on the train split of data/fortunes.txt, its order chosen on the valid split (orders 1, 2, ... until
one fails to improve, at most --max-order), it reports test bits per byte. The data convention is the one data/README.md fixes
for the GPT too:
  - a split is one byte stream: its documents in file order, each followed by "\\n%\\n" (as in the file);
  - every byte of the stream is predicted once, from the bytes before it in the same stream (the first
    from none), and counted, separators included; bits per character = total bits / stream bytes;
  - the vocabulary is the set of distinct bytes of fortunes.txt (all splits).

Smoothing after Chen & Goodman, "An Empirical Study of Smoothing Techniques for Language Modeling"
(1998), section 3.5: three discounts per order (for counts 1, 2 and 3+) from the counts of counts, raw
counts at the highest order, continuation counts (distinct left neighbours) below it, and the uniform
distribution over the vocabulary at the bottom.

Usage: python3 ngram_baseline.py [--data DIR] [--max-order N]   prints one JSON line
       python3 ngram_baseline.py --selftest                       checks that distributions sum to 1
Python 3 standard library only.
"""
import argparse
import collections
import json
import math
import os
import sys


def ngram_counts(text, n):
    """Counts of every n-byte substring of text."""
    return collections.Counter(text[i:i + n] for i in range(len(text) - n + 1))


def continuation_counts(longer):
    """For each k-gram g: how many distinct bytes x precede it, from the (k+1)-gram counts."""
    return collections.Counter(g[1:] for g in longer)


class Level:
    """One order of the model: counts of k-grams, per-context sums, and the three discounts."""

    def __init__(self, counts):
        self.counts = counts
        of_counts = collections.Counter(c for c in counts.values() if c <= 4)
        self.discounts = self._discounts(*(of_counts[i] for i in (1, 2, 3, 4)))
        # context -> [sum of counts, weight left for the lower order]
        self.contexts = {}
        for gram, c in counts.items():
            entry = self.contexts.setdefault(gram[:-1], [0, 0.0])
            entry[0] += c
            entry[1] += self.discounts[min(c, 3) - 1]

    @staticmethod
    def _discounts(n1, n2, n3, n4):
        """D1, D2, D3+ (Chen & Goodman eq. 26), each kept in [0, count] so that the weights stay a
        distribution; one discount n1/(n1+2 n2) for all when a count of counts is 0 (tiny corpora)."""
        if min(n1, n2, n3, n4) == 0:
            y = n1 / (n1 + 2 * n2) if n1 + 2 * n2 else 0.5
            return (y, y, y)
        y = n1 / (n1 + 2 * n2)
        d = (1 - 2 * y * n2 / n1, 2 - 3 * y * n3 / n2, 3 - 4 * y * n4 / n3)
        return tuple(min(max(di, 0.0), i + 1.0) for i, di in enumerate(d))

    def mix(self, context, byte, lower):
        """p(byte | context) at this order, interpolated with the lower order's probability."""
        entry = self.contexts.get(context)
        if entry is None:
            return lower
        c = self.counts.get(context + byte, 0)
        own = c - self.discounts[min(c, 3) - 1] if c else 0.0
        return (own + entry[1] * lower) / entry[0]


class KneserNey:
    """Interpolated modified Kneser-Ney over bytes; levels[k-1] holds the k-grams."""

    def __init__(self, levels, vocab_size):
        self.levels = levels
        self.uniform = 1.0 / vocab_size

    @property
    def order(self):
        return len(self.levels)

    def prob(self, history, byte):
        """p(byte | the last order-1 bytes of history); history and byte are bytes objects."""
        p = self.uniform
        for k, level in enumerate(self.levels, start=1):
            if k - 1 > len(history):
                break
            p = level.mix(history[len(history) - (k - 1):], byte, p)
        return p

    def bits(self, stream):
        """Total -log2 p over every byte of stream, each predicted from the bytes before it."""
        n = self.order
        total = 0.0
        for i in range(len(stream)):
            total -= math.log2(self.prob(stream[max(0, i - n + 1):i], stream[i:i + 1]))
        return total


class OrderSearch:
    """Builds the models of order 1, 2, ... on the same text, reusing the counts of the lower orders."""

    def __init__(self, text, vocab_size):
        self.text, self.vocab_size = text, vocab_size
        self.below = []  # Levels of continuation counts, orders 1 .. n-1
        self.top_counts = None

    def next_model(self):
        n = len(self.below) + (1 if self.top_counts is None else 2)
        counts = ngram_counts(self.text, n)
        if self.top_counts is not None:
            self.below.append(Level(continuation_counts(counts)))
        self.top_counts = counts
        return KneserNey(self.below + [Level(counts)], self.vocab_size)


def load(data_dir):
    """The three split streams and the corpus vocabulary size, per data/README.md."""
    with open(os.path.join(data_dir, "fortunes.txt"), "rb") as f:
        corpus = f.read()
    with open(os.path.join(data_dir, "splits.txt"), encoding="ascii") as f:
        splits = f.read().split()
    docs = corpus.split(b"\n%\n")
    if docs[-1] != b"" or len(docs) - 1 != len(splits):
        raise ValueError(f"ngram_baseline: {len(docs) - 1} documents but {len(splits)} split labels")
    streams = {s: b"".join(d + b"\n%\n" for d, t in zip(docs, splits) if t == s) for s in ("train", "valid", "test")}
    return streams, len(set(corpus))


def run(data_dir, max_order):
    streams, vocab_size = load(data_dir)
    search = OrderSearch(streams["train"], vocab_size)
    valid_bpc, best = {}, None
    for n in range(1, max_order + 1):
        model = search.next_model()
        valid_bpc[n] = model.bits(streams["valid"]) / len(streams["valid"])
        print(f"order {n}: valid {valid_bpc[n]:.4f} bits/char", file=sys.stderr)
        if best is not None and valid_bpc[n] >= valid_bpc[best.order]:
            break
        best = model
    test_bpc = best.bits(streams["test"]) / len(streams["test"])
    return {"order": best.order, "valid_bpc": {str(k): round(v, 4) for k, v in valid_bpc.items()},
            "test_bpc": round(test_bpc, 4), "vocab": vocab_size,
            "bytes": {s: len(v) for s, v in streams.items()}}


def selftest(data_dir):
    """Every distribution over the vocabulary sums to 1 within 1e-9, for seen, unseen and short contexts, on
    a toy text (where the single-discount fallback is taken) and on the first 200 kB of the corpus."""
    toy = b"the cat sat on the mat.\n%\nthe dog sat on the log; a cat, a dog.\n%\nzzz\n%\n" * 3 + b"cattle\n%\n"
    with open(os.path.join(data_dir, "fortunes.txt"), "rb") as f:
        corpus = f.read(200_000)
    histories = [b"", b"t", b"th", b"the c", b"on the ", b"\n%\n", b"qqqq", b"at", b"cat, a d", b"zz", b"\t\t-- "]
    worst = 0.0
    for text in (toy, corpus):
        vocab = [bytes([b]) for b in sorted(set(text))]
        search = OrderSearch(text, len(vocab))
        for _ in range(6):
            model = search.next_model()
            for h in histories:
                worst = max(worst, abs(sum(model.prob(h, w) for w in vocab) - 1.0))
    ok = worst < 1e-9
    print(f"selftest: largest |sum p - 1| over 2 texts, orders 1-6, {len(histories)} contexts: {worst:.2e} "
          f"({'ok' if ok else 'FAILED'})")
    return 0 if ok else 1


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default=os.path.join(here, "data"))
    parser.add_argument("--max-order", type=int, default=32)
    parser.add_argument("--selftest", action="store_true")
    args = parser.parse_args()
    if args.selftest:
        return selftest(args.data)
    print(json.dumps(run(args.data, args.max_order)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
