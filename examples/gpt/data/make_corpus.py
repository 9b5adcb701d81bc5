#!/usr/bin/env python3
"""Builds the GPT example's corpus from Debian's `fortunes` data files, once.

Reads the fortune files listed in FILES from /usr/share/games/fortunes (packages `fortunes` and
`fortunes-min`, 1:1.99.1-7.3; `fortunes-off` is never read), cleans each document (one fortune), drops
the empty, picture-like, offensive, untranslated foreign and repeated ones, and writes next to this script:

  fortunes.txt  UTF-8, LF. Every document is followed by the line "%", so the file is
                doc + "\\n%\\n" + doc + "\\n%\\n" + ... ; no document contains a line that is exactly "%".
  splits.txt    one line per document of fortunes.txt, in the same order: train, valid or test.

Repeats are found on a loose key (the letters and digits, lowercased), so copies that differ only in
spacing, case or punctuation count as one: the first is kept. The split is by document, from its text:
the first 8 bytes of SHA-256 of the UTF-8 of its body (the document without its attribution lines, those
starting with optional whitespace and "--", reduced to the loose key), as a big-endian integer, modulo
100: below 90 is train, below 95 valid, the rest test. So a quotation that appears twice with different
attributions lands in one part. It does not depend on the order of the files or on a random generator.

Deterministic: the same package files give byte-identical outputs (no randomness, no dependence on dict
order, locale or time; made with Debian's Python 3.11). README.md says which files are used and why the others are not.

Usage: python3 make_corpus.py [--src DIR] [--out DIR]
"""
import argparse
import hashlib
import os
import re
import sys
import unicodedata

# Whole files, in this order. Left out (see README.md): ascii-art (pictures), translate-me (not English),
# ethnic and men-women (jokes about groups of people), zippy (shouted non-sequiturs), and the IRC and
# mailing-list logs debian, knghtbrd, linux, linuxcookie, perl (nicknames and shell sessions, not prose).
FILES = [
    "art", "computers", "cookie", "definitions", "disclaimer", "drugs", "education", "food",
    "fortunes", "goedel", "humorists", "kids", "law", "literature", "love", "magic", "medicine",
    "miscellaneous", "news", "paradoxum", "people", "pets", "platitudes", "politics", "pratchett",
    "riddles", "science", "songs-poems", "sports", "startrek", "tao", "wisdom", "work",
]

# Documents with slurs, vulgarity or explicit sex. A word list, so it also takes a few harmless documents
# (a Shakespeare title, "therapist"); losing those is the price of not reading 12 000 documents by eye.
OFFENSIVE = re.compile(r"\b(fuck\w*|shit\w*|cunt\w*|nigger\w*|negro\w*|faggot\w*|fags?|whore\w*|sluts?|"
                       r"bitch(es|y)?|penis\w*|orgasm\w*|porn\w*|rap(e|ed|es|ing|ist))\b", re.IGNORECASE)

# Documents not in English and without an English translation beside them, by their first line.
# (Foreign quotations that carry a translation, such as "Alea iacta est. [The die is cast]", stay.)
NOT_ENGLISH = {
    "C'est magnifique, mais ce n'est pas l'Informatique.",  # computers: French
    "L'hasard ne favorise que l'esprit prepare.",  # miscellaneous: French
    "Es brilig war.  Die schlichte Toven",  # songs-poems: Jabberwocky in German
    "Euch ist bekannt, was wir beduerfen;",  # songs-poems: Goethe, German
    "Il brilgue: les tôves libricilleux",  # songs-poems: Jabberwocky in French and German
}

# Overstruck accents (e.g. "e\b'" printed é on a teletype) become Unicode combining marks.
ACCENTS = {"'": "\u0301", "`": "\u0300", "^": "\u0302", '"': "\u0308", ",": "\u0327", "~": "\u0303"}


def split_documents(text):
    """Documents of a fortune file: the text between lines that are exactly '%'."""
    docs, lines = [], []
    for line in text.split("\n"):
        if line == "%":
            docs.append("\n".join(lines))
            lines = []
        else:
            lines.append(line)
    docs.append("\n".join(lines))
    return docs


def repair_mojibake(text):
    """Undoes UTF-8 that was decoded as Latin-1 and encoded again (once or more), as in 'donÃ¢ÂÂt'."""
    while any("\u0080" <= c <= "\u00ff" for c in text):
        try:
            fixed = text.encode("latin-1").decode("utf-8")
        except (UnicodeEncodeError, UnicodeDecodeError):
            break
        if fixed == text:
            break
        text = fixed
    return text


def resolve_overstrike(line):
    """Replays backspaces as a printer would: underlines and bold vanish, overstruck accents combine."""
    if "\b" not in line:
        return line
    cells, cursor = [], 0
    for c in line:
        if c == "\b":
            cursor = max(0, cursor - 1)
            continue
        if cursor < len(cells):
            cells[cursor].append(c)
        else:
            cells.append([c])
        cursor += 1
    out = []
    for cell in cells:
        base = [c for c in cell if c != "_" and c not in ACCENTS] or [c for c in cell if c != "_"] or ["_"]
        marks = "".join(ACCENTS[c] for c in cell if c in ACCENTS and c != base[-1])
        out.append(unicodedata.normalize("NFC", base[-1] + marks))
    return "".join(out)


def clean(doc):
    """Whitespace normalisation plus the three repairs; the wording is never changed."""
    doc = repair_mojibake(doc.replace("\r\n", "\n").replace("\x07", ""))
    lines = [resolve_overstrike(line).rstrip() for line in doc.split("\n")]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


def looks_like_text(doc):
    """False for ASCII art and line noise: fewer than half of the visible characters are letters."""
    visible = [c for c in doc if not c.isspace()]
    return sum(c.isalpha() for c in visible) * 2 >= len(visible)


def drop_reason(doc, seen):
    """Why a cleaned document is left out, or None to keep it."""
    if not doc:
        return "empty"
    if not looks_like_text(doc):
        return "not text"
    if OFFENSIVE.search(doc):
        return "offensive"
    if doc.split("\n")[0] in NOT_ENGLISH:
        return "not English"
    return "repeat" if loose_key(doc) in seen else None


def loose_key(text):
    """The letters and digits of text, lowercased: equal for copies that differ in spacing or punctuation."""
    return "".join(c for c in text.lower() if c.isalnum())


def split_of(doc):
    body = "\n".join(line for line in doc.split("\n") if not line.lstrip().startswith("--"))
    bucket = int.from_bytes(hashlib.sha256(loose_key(body).encode("utf-8")).digest()[:8], "big") % 100
    return "train" if bucket < 90 else "valid" if bucket < 95 else "test"


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--src", default="/usr/share/games/fortunes")
    parser.add_argument("--out", default=here)
    args = parser.parse_args()

    seen, kept = set(), []
    for name in FILES:
        with open(os.path.join(args.src, name), encoding="utf-8", newline="") as f:
            raw = split_documents(f.read())
        counts = dict.fromkeys(["empty", "not text", "offensive", "not English", "repeat"], 0)
        for doc in map(clean, raw):
            reason = drop_reason(doc, seen)
            if reason:
                counts[reason] += 1
                continue
            seen.add(loose_key(doc))
            kept.append(doc)
        kept_here = len(raw) - sum(counts.values())
        print(f"{name:14s} kept {kept_here:5d}  dropped " + ", ".join(f"{v} {k}" for k, v in counts.items() if v))

    assert all("\n%\n" not in "\n" + d + "\n" for d in kept), "a document holds a '%' line"
    corpus = "".join(d + "\n%\n" for d in kept)
    splits = [split_of(d) for d in kept]
    with open(os.path.join(args.out, "fortunes.txt"), "w", encoding="utf-8", newline="\n") as f:
        f.write(corpus)
    with open(os.path.join(args.out, "splits.txt"), "w", encoding="ascii", newline="\n") as f:
        f.write("".join(s + "\n" for s in splits))

    print(f"fortunes.txt: {len(kept)} documents, {len(corpus.encode('utf-8'))} bytes, "
          f"{len(set(corpus.encode('utf-8')))} distinct bytes")
    for part in ("train", "valid", "test"):
        docs = [d for d, s in zip(kept, splits) if s == part]
        size = sum(len(d.encode("utf-8")) + 3 for d in docs)
        print(f"  {part:5s} {len(docs):6d} documents {size:8d} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
