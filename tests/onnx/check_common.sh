# Sourced by the onnxruntime checks (tests/onnx/*_check.sh): cli_expect.sh's fail and expect, and require_node.
source "$(dirname "${BASH_SOURCE[0]}")/../cli_expect.sh"
# require_node TEST: exit status 77 (CTest: skipped), naming TEST and the tool, when node or npm is missing.
require_node() {
  local tool
  for tool in node npm; do
    command -v "$tool" >/dev/null || { echo "$1: skipped: $tool is not installed (apt-get install nodejs npm)"; exit 77; }
  done
}
