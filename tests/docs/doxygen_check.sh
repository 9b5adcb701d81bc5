#!/usr/bin/env bash
# Runs Doxygen (docs/Doxyfile: the public headers, the tutorial and the main page) into a scratch directory and
# fails on any warning: a public symbol without a doc comment (WARN_IF_UNDOCUMENTED), or a comment Doxygen
# cannot read. Usage: doxygen_check.sh SOURCE_DIR   (the test doxygen_undocumented, tests/CMakeLists.txt)
set -euo pipefail
cd "$1"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
start=$SECONDS
{ cat docs/Doxyfile; echo "OUTPUT_DIRECTORY = $out"; echo "WARN_LOGFILE = $out/warnings.log"; } | doxygen - >/dev/null
# One line per warning (an inherited member is reported once per subclass), paths from the root. Doxygen 1.9.4
# says "Internal inconsistency: scope for class fmt::formatter<...> not found" for our specialisations of fmt's
# formatter (a namespace it does not read): nothing to document there, so not counted.
sort -u "$out/warnings.log" | grep ': warning: ' | grep -v 'Internal inconsistency: scope for class fmt::formatter<' |
  sed "s|^$PWD/||" >"$out/unique.log" || true
count=$(wc -l <"$out/unique.log")
echo "doxygen: $((SECONDS - start)) s, $count warning(s)"
if [[ $count -gt 0 ]]; then
  cat "$out/unique.log"
  echo "doxygen_check.sh: document these (house style: shapes, what it throws, the source of the maths)" >&2
  exit 1
fi
