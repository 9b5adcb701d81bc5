#!/usr/bin/env python3
"""Convert the UCI Sentiment Labelled Sentences fixtures into one clean TSV.

Input: the fixtures directory of the npm package sentiment@5.0.2 (amazon.json, imdb.json, yelp.json, each
a JSON array of {"text": str, "class": 0|1}). Output: sentences.tsv next to this script (or --out), with
header `text<TAB>label<TAB>source`, rows in order amazon, imdb, yelp, each in file order.

What it fixes and what it drops (see README.md for the counts):
  * C1 control characters U+0080..U+009F are cp1252 bytes mis-decoded as Latin-1 (imdb: U+0096 en dash,
    U+0097 em dash, U+0085 ellipsis). They are mapped back to the cp1252 character. U+0085 matters most:
    it is NEL, a line break to many tools.
  * Whitespace: every run of whitespace (spaces, tabs, CR, LF, ...) becomes one space and the text is
    stripped. imdb ends every sentence with two spaces; no row holds a tab or newline, but the fix keeps
    the TSV one-record-per-line whatever the input.
  * Dropped: a row that is not an object, whose text is not a string or is empty after cleaning, whose
    label is not the integer 0 or 1 (null, bool, "1", 1.0), or whose cleaned text already appeared in the
    same source (first occurrence kept: a repeat adds nothing, and in train and test it lets the model
    score by memorising). Duplicates across sources are kept: sources are split separately.

Python 3 standard library only; the output depends only on the input files.
Usage: python3 convert.py FIXTURES_DIR [--out PATH]
"""
import argparse
import collections
import json
import os
import sys

SOURCES = ("amazon", "imdb", "yelp")


def repair_c1(text):
    """Map U+0080..U+009F back to the cp1252 character they were decoded from (unmapped ones stay)."""
    out = []
    for ch in text:
        if 0x80 <= ord(ch) <= 0x9F:
            try:
                ch = bytes([ord(ch)]).decode("cp1252")
            except UnicodeDecodeError:
                pass
        out.append(ch)
    return "".join(out)


def clean_text(text):
    """Repair mojibake first (so NEL is not taken for whitespace), then collapse whitespace."""
    return " ".join(repair_c1(text).split())


def problem(row):
    """Why `row` is not a valid example, or None. Lists every problem, joined by ' and '."""
    if not isinstance(row, dict):
        return "not an object"
    problems = []
    text = row.get("text")
    if not isinstance(text, str):
        problems.append("text missing or not a string")
    elif not clean_text(text):
        problems.append("empty text")
    label = row.get("class")
    if type(label) is not int or label not in (0, 1):  # type() check rejects true/false
        problems.append(f"label {json.dumps(label)} not 0/1")
    return " and ".join(problems) or None


def convert_source(path, source):
    """Returns (kept rows as (text, label), Counter of drop reasons, Counter of fixes applied to kept rows)."""
    with open(path, encoding="utf-8") as f:
        rows = json.load(f)
    if not isinstance(rows, list):
        sys.exit(f"convert.py: {path}: expected a JSON array")
    kept, dropped, seen, fixed = [], collections.Counter(), set(), collections.Counter()
    for i, row in enumerate(rows):
        why = problem(row)
        if why is None:
            text = clean_text(row["text"])
            if text in seen:
                why = "duplicate of an earlier sentence"
        if why is not None:
            dropped[why] += 1
            print(f"  {source}[{i}] dropped: {why}: {json.dumps(row, ensure_ascii=True)[:100]}")
            continue
        seen.add(text)
        fixed["cp1252 repaired"] += repair_c1(row["text"]) != row["text"]
        fixed["whitespace normalized"] += " ".join(row["text"].split()) != row["text"]
        kept.append((text, row["class"]))
    return kept, dropped, fixed


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("fixtures", help="directory holding amazon.json, imdb.json, yelp.json")
    ap.add_argument("--out", default=os.path.join(here, "sentences.tsv"))
    args = ap.parse_args()

    lines = ["text\tlabel\tsource"]
    total = 0
    for source in SOURCES:
        kept, dropped, fixed = convert_source(os.path.join(args.fixtures, source + ".json"), source)
        labels = collections.Counter(label for _, label in kept)
        reasons = ", ".join(f"{n} {why}" for why, n in sorted(dropped.items())) or "none"
        print(f"{source}: kept {len(kept)} (label 0: {labels[0]}, label 1: {labels[1]}), "
              f"dropped {sum(dropped.values())} ({reasons}); "
              f"{fixed['whitespace normalized']} whitespace normalized, {fixed['cp1252 repaired']} cp1252 repaired")
        lines += [f"{text}\t{label}\t{source}" for text, label in kept]
        total += len(kept)

    # newline="\n" so the file is byte-identical on every platform.
    with open(args.out, "w", encoding="utf-8", newline="\n") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {total} rows to {args.out}")


if __name__ == "__main__":
    main()
