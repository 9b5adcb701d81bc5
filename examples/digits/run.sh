#!/usr/bin/env bash
# The digits example from a fresh clone: install what is missing, build (Release), train the network on the
# bundled UCI digits, then evaluate it again from its model directory and classify a few test images.
# Usage: bash examples/digits/run.sh [extra `digits train` flags, e.g. --seed 3 --epochs 30]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="$root/build"
bash "$root/tools/install-deps.sh"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j2 --target digits
bin="$build/examples/digits/digits"
out="$root/runs/digits"
"$bin" train --out "$out" "$@"
echo
"$bin" eval --model "$out"
echo
head -5 "$root/examples/digits/data/test.csv" >"$out/five.csv"
"$bin" predict --model "$out" "$out/five.csv"
