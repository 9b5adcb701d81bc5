#!/usr/bin/env bash
# Builds the API reference: Doxygen (docs/Doxyfile) over the public headers, HTML in build/docs/html
# (open build/docs/html/index.html). Usage: bash tools/docs.sh [output-dir] (default build/docs).
# Needs doxygen: bash tools/install-deps.sh --docs.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-build/docs}
command -v doxygen >/dev/null || { echo "docs.sh: doxygen is missing: bash tools/install-deps.sh --docs" >&2; exit 1; }
mkdir -p "$out"
# The Doxyfile's paths are relative to the repository root; the output directory is set here.
{ cat docs/Doxyfile; echo "OUTPUT_DIRECTORY = $out"; } | doxygen -
echo "docs.sh: $out/html/index.html"
