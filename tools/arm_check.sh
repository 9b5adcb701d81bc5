#!/usr/bin/env bash
# The ARM check: cross-builds tensorgrad and its core and autograd suites for aarch64 with Debian's cross
# toolchain (cmake/aarch64.cmake, ccache where installed) and runs them whole under qemu-aarch64, side by side:
# the kernel room's NEON paths (Highway) are held to the tolerances the x86 paths are.
# Installs what is missing first (tools/install-deps.sh --arm). Usage: bash tools/arm_check.sh [build-dir]
# (default build-arm). Exits non-zero if a test fails.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build-arm}"
bash "$root/tools/install-deps.sh" --arm
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S "$root" -B "$build" -DCMAKE_TOOLCHAIN_FILE="$root/cmake/aarch64.cmake" -DCMAKE_BUILD_TYPE=Release \
  -DTENSORGRAD_BUILD_EXAMPLES=OFF -DTENSORGRAD_MPI=OFF -DTENSORGRAD_ONNX=OFF "${launcher[@]}" >/dev/null
cmake --build "$build" -j2 --target core_tests autograd_tests

# No -L: the loader and libc are libc6:arm64's (see cmake/aarch64.cmake).
run() { qemu-aarch64 "$build/tests/$1" > "$build/$1.log" 2>&1; }
run core_tests & core=$!
run autograd_tests & autograd=$!
status=0
wait $core || status=1
wait $autograd || status=1
cat "$build/core_tests.log" "$build/autograd_tests.log"
exit $status
