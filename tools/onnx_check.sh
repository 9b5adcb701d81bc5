#!/usr/bin/env bash
# Runs an exported ONNX model in onnxruntime and compares its outputs with ours (tools/onnx_check.js): installs
# npm's onnxruntime-node (the Linux x64 CPU runtime) into a temporary folder, or reuses ONNX_CHECK_MODULES
# (a folder holding node_modules/onnxruntime-node), then runs node on the model and the check cases.
# Usage: tools/onnx_check.sh MODEL.onnx CASES.json [TOL]   (TOL: the largest absolute difference, default 1e-5)
# Exit status 77 when node or npm is missing (CTest reports the test as skipped), 1 when an output differs.
set -euo pipefail
[[ $# -ge 2 ]] || { echo "usage: $0 MODEL.onnx CASES.json [TOL]" >&2; exit 2; }
for tool in node npm; do
  command -v "$tool" >/dev/null || { echo "onnx_check: skipped: $tool is not installed (apt-get install nodejs npm)"; exit 77; }
done
if [[ -n "${ONNX_CHECK_MODULES:-}" && -d "$ONNX_CHECK_MODULES/node_modules/onnxruntime-node" ]]; then
  modules=$ONNX_CHECK_MODULES/node_modules
else
  dir=$(mktemp -d)
  trap 'rm -rf "$dir"' EXIT
  echo "onnx_check: installing onnxruntime-node into $dir"
  # --ignore-scripts: the package bundles the CPU runtime; its install script only fetches the CUDA provider,
  # from api.nuget.org, which fails where that host is not reachable.
  npm install --prefix "$dir" --no-audit --no-fund --loglevel=error --ignore-scripts onnxruntime-node@1 >/dev/null
  modules=$dir/node_modules
fi
node "$(dirname "${BASH_SOURCE[0]}")/onnx_check.js" "$modules" "$1" "$2" "${3:-1e-5}"
