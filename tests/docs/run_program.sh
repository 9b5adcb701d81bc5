#!/usr/bin/env bash
# Runs a tutorial program ($1) in a scratch directory and compares what it prints with the expected output
# ($2, the ```text block after it in docs/tutorial.md), exactly; a program without one must only exit 0.
set -euo pipefail
program=$1 expected=${2:-}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
out=$("$program")
[[ -z "$expected" || ! -f "$expected" ]] && exit 0
if ! diff -u "$expected" <(printf '%s\n' "$out"); then
  echo "$(basename "$program"): its output differs from the text block after it in docs/tutorial.md (- page, + program)" >&2
  exit 1
fi
