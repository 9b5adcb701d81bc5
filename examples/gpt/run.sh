#!/usr/bin/env bash
# The GPT example from a fresh clone: install what is missing, build (Release), train the default
# configuration on the bundled fortunes corpus, score it on the test split, then sample from it.
# Usage: bash examples/gpt/run.sh [extra `gpt train` flags, e.g. --seed 1 or --steps 500]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="$root/build"
bash "$root/tools/install-deps.sh"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j2 --target gpt sentiment
bin="$build/examples/gpt/gpt"
# Debian's OpenBLAS 0.3.21 does not recognise recent CPUs and falls back to slower kernels: the sentiment
# program knows which core this CPU should use (and checks the choice against a plain product).
if [[ -z "${OPENBLAS_CORETYPE:-}" ]]; then
  core="$("$build/examples/sentiment/sentiment" blas --suggest)"
  [[ -n "$core" ]] && export OPENBLAS_CORETYPE="$core" && echo "using OPENBLAS_CORETYPE=$core"
fi
out="$root/runs/gpt"
"$bin" train --out "$out" "$@"
echo
"$bin" eval --model "$out"
echo
"$bin" sample --model "$out" --prompt "The meaning of life is" --tokens 300 --seed 0
echo
"$bin" sample --model "$out" --tokens 400 --temperature 0.7 --top-p 0.9 --seed 1
