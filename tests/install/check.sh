#!/usr/bin/env bash
# Installs the built tree into a temporary prefix, builds the consumer project against it with
# find_package(tensorgrad), and checks its output, and when the install holds tensorgrad::onnx, that it
# exports a layer. Usage: check.sh BUILD_DIR
set -euo pipefail
build="$1"
here="$(cd "$(dirname "$0")" && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
cmake -S "$here/consumer" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$tmp/prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$tmp/consumer" -j2 >/dev/null
out="$("$tmp/consumer/consumer")"
[[ "$out" == "2 4 6" ]] || { echo "consumer printed '$out', expected '2 4 6'"; exit 1; }
echo "installed tensorgrad builds and runs in another project: $out"
if [[ -x "$tmp/consumer/consumer_onnx" ]]; then  # built when the install holds tensorgrad::onnx
  "$tmp/consumer/consumer_onnx" "$tmp/dense.onnx" >/dev/null
  [[ -s "$tmp/dense.onnx" ]] || { echo "consumer_onnx wrote no $tmp/dense.onnx"; exit 1; }
  echo "installed tensorgrad::onnx exports from another project"
fi
