#!/usr/bin/env bash
# The main job, from a fresh clone: install what is missing, build (Release), train the sentiment
# classifier on the bundled sentences, then show predictions and draw the attention heads.
# Usage: bash examples/sentiment/run.sh [extra `sentiment train` flags, e.g. --config reference --seed 1]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="$root/build"
bash "$root/tools/install-deps.sh"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j2 --target sentiment
bin="$build/examples/sentiment/sentiment"
# Debian's OpenBLAS 0.3.21 does not recognise recent CPUs and falls back to slower kernels: ask the
# program which core this CPU should use (it checks the choice against a plain product at start-up).
if [[ -z "${OPENBLAS_CORETYPE:-}" ]]; then
  core="$("$bin" blas --suggest)"
  [[ -n "$core" ]] && export OPENBLAS_CORETYPE="$core" && echo "using OPENBLAS_CORETYPE=$core"
fi
out="$root/runs/sentiment"
"$bin" train --out "$out" "$@"
echo
"$bin" predict --model "$out" "The food was great and the staff were lovely." "Worst phone I have ever owned." \
  "Not bad at all." "I would not recommend this movie."
"$bin" attend --model "$out" "The acting was not good, but the music was wonderful." --out "$out/attention.svg"
