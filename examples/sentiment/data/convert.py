#!/usr/bin/env python3
"""Convert the UCI Sentiment Labelled Sentences fixtures into one clean TSV.

Input: the fixtures directory of the npm package sentiment@5.0.2 (amazon.json, imdb.json, yelp.json, each
a JSON array of {"text": str, "class": 0|1}). Output: sentences.tsv next to this script (or --out), with
header `text<TAB>label<TAB>source`, rows in order amazon, imdb, yelp, each in file order.

What it fixes, drops and keeps (see README.md for the counts):
  * C1 control characters U+0080..U+009F are cp1252 bytes mis-decoded as Latin-1 (imdb: U+0096 en dash,
    U+0097 em dash, U+0085 ellipsis). They are mapped back to the cp1252 character. U+0085 matters most:
    it is NEL, a line break to many tools.
  * Whitespace: every run of whitespace (spaces, tabs, CR, LF, ...) becomes one space and the text is
    stripped. imdb ends every sentence with two spaces; no row holds a tab or newline, but the fix keeps
    the TSV one-record-per-line whatever the input.
  * Dropped: only invalid rows: a row that is not an object, whose text is not a string or is empty after
    cleaning, or whose label is not the integer 0 or 1 (null, bool, "1", 1.0). In sentiment@5.0.2 that is
    exactly the trailing {"text": "", "class": null} row of each file.
  * Kept: repeated sentences. The reference split (per source, in file order, index % 5 == 4 is test) is
    fixed so that results compare with other frameworks, and it is defined on all 1000 sentences of each
    source; dropping repeats would shift every later index. Repeats are only reported: per source, how
    many rows repeat an earlier one word for word, and how many identical pairs straddle train/test
    (within a source and across sources), each repeated sentence listed with its indices.

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
    kept, dropped, fixed = [], collections.Counter(), collections.Counter()
    for i, row in enumerate(rows):
        why = problem(row)
        if why is not None:
            dropped[why] += 1
            print(f"  {source}[{i}] dropped: {why}: {json.dumps(row, ensure_ascii=True)[:100]}")
            continue
        fixed["cp1252 repaired"] += repair_c1(row["text"]) != row["text"]
        fixed["whitespace normalized"] += " ".join(row["text"].split()) != row["text"]
        kept.append((clean_text(row["text"]), row["class"]))
    return kept, dropped, fixed


def is_test(index):
    """The reference split: the row with 0-based index `index` within its source is test iff index % 5 == 4."""
    return index % 5 == 4


def straddling_pairs(places):
    """Number of pairs among `places` (a list of (source, index)) with one member in train, the other in test."""
    n_test = sum(is_test(i) for _, i in places)
    return n_test * (len(places) - n_test)


def report_repeats(rows):
    """Prints, as information only, the exact repeats among `rows` (a list of (text, label, source, index)).

    Returns {source: (rows repeating an earlier row of that source, identical pairs straddling train/test)}
    and the number of cross-source identical pairs straddling train/test."""
    groups = collections.defaultdict(list)  # text -> [(source, index, label)]
    for text, label, source, index in rows:
        groups[text].append((source, index, label))
    per_source = {}
    for source in SOURCES:
        repeats = straddling = 0
        for text, places in groups.items():
            mine = [(s, i) for s, i, _ in places if s == source]
            if len(mine) < 2:
                continue
            repeats += len(mine) - 1
            straddling += straddling_pairs(mine)
            where = ", ".join(f"{i} {'test' if is_test(i) else 'train'}" for _, i in mine)
            labels = sorted({label for s, _, label in places if s == source})
            print(f"  {source} repeat (kept): {json.dumps(text, ensure_ascii=True)[:70]} at {where}; "
                  f"label {'/'.join(map(str, labels))}")
        per_source[source] = (repeats, straddling)
    cross_straddling = 0
    for text, places in groups.items():
        sources = sorted({s for s, _, _ in places})
        if len(sources) < 2:
            continue
        # pairs from different sources only: all straddling pairs minus those within one source
        within = sum(straddling_pairs([(s, i) for s, i, _ in places if s == src]) for src in sources)
        n_cross = straddling_pairs([(s, i) for s, i, _ in places]) - within
        cross_straddling += n_cross
        where = ", ".join(f"{s}[{i}] {'test' if is_test(i) else 'train'}" for s, i, _ in places)
        print(f"  cross-source repeat (kept): {json.dumps(text, ensure_ascii=True)[:70]} at {where}; "
              f"{n_cross} pair(s) straddle train/test")
    return per_source, cross_straddling


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("fixtures", help="directory holding amazon.json, imdb.json, yelp.json")
    ap.add_argument("--out", default=os.path.join(here, "sentences.tsv"))
    args = ap.parse_args()

    lines = ["text\tlabel\tsource"]
    all_rows = []  # (text, label, source, index within source)
    for source in SOURCES:
        kept, dropped, fixed = convert_source(os.path.join(args.fixtures, source + ".json"), source)
        labels = collections.Counter(label for _, label in kept)
        n_test = sum(is_test(i) for i in range(len(kept)))
        reasons = ", ".join(f"{n} {why}" for why, n in sorted(dropped.items())) or "none"
        print(f"{source}: kept {len(kept)} (label 0: {labels[0]}, label 1: {labels[1]}; "
              f"train {len(kept) - n_test}, test {n_test}), dropped {sum(dropped.values())} ({reasons}); "
              f"{fixed['whitespace normalized']} whitespace normalized, {fixed['cp1252 repaired']} cp1252 repaired")
        lines += [f"{text}\t{label}\t{source}" for text, label in kept]
        all_rows += [(text, label, source, i) for i, (text, label) in enumerate(kept)]

    print("repeated sentences (kept on purpose: the reference split is fixed):")
    per_source, cross_straddling = report_repeats(all_rows)
    for source in SOURCES:
        repeats, straddling = per_source[source]
        print(f"{source}: {repeats} rows repeat an earlier row word for word; "
              f"{straddling} identical pair(s) straddle train/test")
    print(f"total: {sum(r for r, _ in per_source.values())} repeats within a source, "
          f"{sum(s for _, s in per_source.values())} within-source pair(s) and {cross_straddling} cross-source "
          f"pair(s) straddling train/test")

    # newline="\n" so the file is byte-identical on every platform.
    with open(args.out, "w", encoding="utf-8", newline="\n") as f:
        f.write("\n".join(lines) + "\n")
    n_test = sum(is_test(i) for *_, i in all_rows)
    print(f"wrote {len(all_rows)} rows to {args.out} (reference split: train {len(all_rows) - n_test}, "
          f"test {n_test})")


if __name__ == "__main__":
    main()
