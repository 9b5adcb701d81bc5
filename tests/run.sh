#!/usr/bin/env bash
# Builds tensorgrad and runs every test: installs missing packages, configures (Release), builds with two
# jobs, runs ctest. Usage: bash tests/run.sh [build-dir [cmake-args...]]
# Extra arguments go to cmake after the defaults, so they win, e.g. the sanitizer build:
#   bash tests/run.sh build-asan -DTENSORGRAD_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build}"
shift $(($# > 0 ? 1 : 0))
bash "$root/tools/install-deps.sh"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build "$build" -j2
ctest --test-dir "$build" --output-on-failure -j2
