#!/usr/bin/env bash
# `gpt export` end to end: a two-layer GPT trained for 20 steps on a tiny made-up corpus, exported and run by
# onnxruntime (tools/onnx_check.sh) on windows of the validation split, 1 to 8 windows of 5 to block_size
# bytes: every logit within 1e-5 of ours. Exit status 77 (skipped) without node or npm.
# Usage: gpt_check.sh path/to/gpt path/to/tools/onnx_check.sh
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/check_common.sh"  # fail, expect, require_node
source "$(dirname "${BASH_SOURCE[0]}")/../gpt/tiny_corpus.sh"
bin=$1
check=$2
require_node onnx_gpt
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"

tiny_corpus
tiny_config tiny 2 0.1 20 10 >tiny.json
expect 0 "model written to run/" train --data corpus.txt --config tiny.json --out run
expect 0 "run.onnx written (opset 17" export --model run --out run.onnx --data corpus.txt --cases run.cases
grep -qF "9 batches of the validation split" out.txt || fail "export --cases wrote no cases"
bash "$check" run.onnx run.cases 1e-5 || fail "onnxruntime differs from gpt"
