#!/usr/bin/env bash
# Runs Doxygen (docs/Doxyfile) over the public headers into a scratch directory and fails on every warning in
# the files under the folders given as arguments (e.g. nn optim): a public symbol without a doc comment
# (WARN_IF_UNDOCUMENTED), or a doc comment Doxygen cannot read. Warnings elsewhere are counted, not failed.
# Usage: doxygen_check.sh SOURCE_DIR FOLDER...   (the test doxygen_undocumented, tests/CMakeLists.txt)
set -euo pipefail
source_dir=$1
shift
cd "$source_dir"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
start=$SECONDS
{ cat docs/Doxyfile; echo "OUTPUT_DIRECTORY = $out"; echo "WARN_LOGFILE = $out/warnings.log"; } | doxygen - >/dev/null
# One line per warning (an inherited member is reported once per subclass: counted once), paths from the root.
sort -u "$out/warnings.log" | grep ': warning: ' | sed "s|^$PWD/||" >"$out/unique.log" || true
pattern="^($(IFS='|'; echo "$*"))/"
failed=$(grep -cE "$pattern" "$out/unique.log" || true)
others=$(grep -cvE "$pattern" "$out/unique.log" || true)
echo "doxygen: $((SECONDS - start)) s; $failed warning(s) in $*, $others elsewhere (not checked)"
if [[ $failed -gt 0 ]]; then
  grep -E "$pattern" "$out/unique.log"
  exit 1
fi
