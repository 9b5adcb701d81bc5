#!/usr/bin/env python3
"""Convert the AFINN-165 sentiment lexicon shipped by the npm package sentiment@5.0.2 into afinn.tsv.

Input: the package's languages/en/labels.json, a JSON object {word or phrase: valence}, valence an integer
in -5..5 (Finn Årup Nielsen's AFINN-165). Output: afinn.tsv next to this script (or --out), one
`word<TAB>valence` line per entry, sorted by word, no header.

Kept: the entries that are one token of the sentiment tokenizer (text.h: a maximal run of [a-z0-9']), the only
ones a token can match. Dropped, and listed: phrases ("fed up", "does not work") and entries with other
characters ("cover-up"). A valence that is not an integer in -5..5 is an error.

Python 3 standard library only; the output depends only on the input file.
Usage: python3 lexicon.py LABELS_JSON [--out PATH]
"""
import argparse
import json
import os
import re
import sys

TOKEN = re.compile(r"[a-z0-9']+")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("labels", help="package/languages/en/labels.json of sentiment@5.0.2")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "afinn.tsv"))
    args = ap.parse_args()
    with open(args.labels, encoding="utf-8") as f:
        labels = json.load(f)
    kept, dropped = {}, []
    for word, valence in labels.items():
        if not (type(valence) is int and -5 <= valence <= 5):
            sys.exit(f"{args.labels}: '{word}' has valence {valence!r}, not an integer in -5..5")
        if TOKEN.fullmatch(word):
            kept[word] = valence
        else:
            dropped.append(word)
    with open(args.out, "w", encoding="utf-8", newline="\n") as f:
        for word in sorted(kept):
            f.write(f"{word}\t{kept[word]}\n")
    print(f"{len(labels)} entries: {len(kept)} single tokens written to {args.out}, {len(dropped)} dropped "
          f"(not one token): {', '.join(sorted(dropped))}")


if __name__ == "__main__":
    main()
