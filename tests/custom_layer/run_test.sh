#!/usr/bin/env bash
# Runs examples/custom_layer ($1): its exit code must be 0 and each of its three checks must print "passed".
set -euo pipefail
out=$("$1")
echo "$out"
for check in "1. gradcheck in f64" "2. same output as nn::MultiHeadAttention" "3. training"; do
  grep -qE "^${check}.*: passed$" <<<"$out" || { echo "custom_layer: no passed line for '$check'" >&2; exit 1; }
done
