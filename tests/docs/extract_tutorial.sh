#!/usr/bin/env bash
# Writes the programs of a tutorial in Markdown ($1) to a directory ($2): each ```cpp block as program_<n>.cpp
# and the ```text block right after it, if any, as program_<n>.expected (n = 1, 2, ... in page order), and
# removes the files of programs the page no longer has. Run by CMake at configure time (tests/CMakeLists.txt).
set -euo pipefail
page=$1 out=$2
mkdir -p "$out"
rm -f "$out"/program_*.cpp "$out"/program_*.expected
awk -v out="$out" '
  /^```cpp[[:space:]]*$/ { n++; file = out "/program_" n ".cpp"; inside = 1; last = n; next }
  /^```text[[:space:]]*$/ && last == n && n > 0 { file = out "/program_" n ".expected"; inside = 1; next }
  /^```/ { if (inside) { close(file); inside = 0; if (file ~ /expected$/) last = -1 } else last = -1; next }
  inside { print > file; next }
  # Prose between a program and its output ("It prints:") is allowed; another block breaks the pairing.
' "$page"
ls "$out"/program_*.cpp >/dev/null 2>&1 || { echo "extract_tutorial.sh: no \`\`\`cpp block in $page" >&2; exit 1; }
