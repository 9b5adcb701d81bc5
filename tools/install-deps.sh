#!/usr/bin/env bash
# Installs the Debian packages tensorgrad builds with, skipping what is already there.
# Usage: bash tools/install-deps.sh [--torch] [--fuzz] [--bench] [--arm] [--data] [--mpi] [--onnx] [--docs]
# (--torch adds python3-torch, only needed to regenerate fixtures and run the PyTorch side of the benchmarks;
# --fuzz adds clang and its libFuzzer/sanitizer runtimes for tests/fuzz/run.sh; --bench adds Google Benchmark
# and python3-torch for bench/run.sh; --arm adds the aarch64 cross toolchain, qemu-user and the arm64 libraries
# (Debian multiarch) for tools/arm_check.sh; --data adds fortunes and python3-sklearn, the sources that
# examples/gpt/data and examples/digits/data were converted from once (the converted files are committed);
# --mpi adds Open MPI, its headers and mpirun, for distributed/ (TENSORGRAD_MPI) and its tests; --onnx adds ONNX
# and protobuf for onnx/ (TENSORGRAD_ONNX), and node and npm, unless both are already on the PATH (nodesource's
# nodejs bundles npm and conflicts with Debian's), for tools/onnx_check.sh; --docs adds doxygen, for the API
# reference (tools/docs.sh) and its test.
# The sanitizer build with g++ needs nothing extra: libasan and libubsan come with it.)
set -euo pipefail
packages=(g++ cmake make libopenblas-dev libfmt-dev doctest-dev nlohmann-json3-dev libcli11-dev libhwy-dev)
for arg in "$@"; do
  case "$arg" in
    --torch) packages+=(python3-torch python3-numpy) ;;
    --fuzz) packages+=(clang-14 libclang-rt-14-dev) ;;
    --bench) packages+=(libbenchmark-dev python3-torch python3-numpy) ;;
    --arm) packages+=(g++-aarch64-linux-gnu qemu-user ccache libopenblas-dev:arm64 libfmt-dev:arm64 libhwy-dev:arm64) ;;
    --data) packages+=(fortunes python3-sklearn) ;;
    --mpi) packages+=(libopenmpi-dev openmpi-bin) ;;
    --docs) packages+=(doxygen) ;;
    --onnx)
      packages+=(libonnx-dev libprotobuf-dev)
      command -v node >/dev/null && command -v npm >/dev/null || packages+=(nodejs npm) ;;
    *) echo "install-deps.sh: unknown option '$arg' (expected --torch, --fuzz, --bench, --arm, --data, --mpi, --onnx or --docs)" >&2; exit 2 ;;
  esac
done
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0
echo "installing: ${missing[*]}"
sudo=""
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "need root to install: apt-get install ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
# The :arm64 packages need their architecture known to dpkg before apt-get update reads its lists.
if [[ " ${missing[*]}" == *:arm64* ]] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
  $sudo dpkg --add-architecture arm64
fi
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
