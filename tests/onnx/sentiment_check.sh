#!/usr/bin/env bash
# `sentiment export` end to end: five small models trained for one epoch on the bundled data (one post-norm
# network with relu, learned positions and mean pooling; a pre-norm gelu ensemble of two with sub-words, the
# lexicon, the embedding LayerNorm, scaled query/key weights and mean+max pooling, as the default recipe; one
# network with learned positions, summed sub-words and max pooling; a bidirectional two-layer LSTM and GRU,
# each an ensemble of two with the recipe's inputs), each exported and run by onnxruntime (tools/onnx_check.sh) on the whole test split in batches
# of 1 to 32 padded sentences: every logit within 1e-5 of ours. Exit status 77 (skipped) without node or npm.
# Usage: sentiment_check.sh path/to/sentiment path/to/tools/onnx_check.sh
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/check_common.sh"  # fail, expect, require_node
bin=$1
check=$2
require_node onnx_sentiment
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
if [[ -z "${ONNX_CHECK_MODULES:-}" ]]; then  # one onnxruntime install for the three models
  npm install --prefix npm --no-audit --no-fund --loglevel=error --ignore-scripts onnxruntime-node@1 >/dev/null
  export ONNX_CHECK_MODULES=$dir/npm
fi
config() {  # config(model fields): d_model 8, 2 layers, 1 epoch
  cat <<JSON
{"name": "tiny", "model": {"vocab_size": 0, "max_len": 48, "d_model": 8, "num_heads": 2, "num_layers": 2,
 "dim_feedforward": 16, "dropout": 0.1, "num_classes": 2, "token_dropout": 0.1, "embedding_std": 0.1, $1},
 "train": {"epochs": 1, "batch_size": 32, "optimizer": "adamw", "lr": 0.002, "weight_decay": 0.05,
 "label_smoothing": 0.1, "warmup_epochs": 0, "schedule": "constant", "clip_grad_norm": 0.0, "val_fraction": 0.1,
 "keep_best": false, "min_freq": 1}}
JSON
}
config '"activation": "relu", "norm_first": false, "pooling": "mean", "positional": "learned"' >plain.json
config '"activation": "gelu", "norm_first": true, "pooling": "mean+max", "positional": "none", "ensemble": 2,
 "subword_buckets": 64, "lexicon_weight": 2, "embedding_norm": true, "qk_init_scale": 2' >recipe.json
config '"activation": "relu", "norm_first": false, "pooling": "max", "positional": "learned", "subword_buckets": 64,
 "subword_combine": "sum"' >sum.json
# A bidirectional two-layer LSTM and GRU with the default recipe's inputs, as ONNX's LSTM and GRU ops.
rnn='"activation": "relu", "norm_first": false, "pooling": "mean+max", "positional": "none", "ensemble": 2,
 "subword_buckets": 64, "lexicon_weight": 2, "embedding_norm": true, "hidden_size": 6, "bidirectional": true'
config "$rnn, \"architecture\": \"lstm\"" >lstm.json
config "$rnn, \"architecture\": \"gru\"" >gru.json
for name in plain recipe sum lstm gru; do
  expect 0 "model written to $name/" train --config $name.json --out $name
  expect 0 "$name.onnx written (opset 17" export --model $name --out $name.onnx --cases $name.json.cases
  grep -qF "batches of the test split" out.txt || fail "export --cases wrote no cases"
  bash "$check" $name.onnx $name.json.cases 1e-5 || fail "onnxruntime differs from sentiment on $name"
done
# The check can fail: one logit moved by 2e-5 is caught, naming the case and the element.
node -e "const fs = require('fs'); const c = JSON.parse(fs.readFileSync('plain.json.cases'));
  c.cases[3].outputs[0].data[1] += 2e-5; fs.writeFileSync('bad.cases', JSON.stringify(c));"
if bash "$check" plain.onnx bad.cases 1e-5 >out.txt 2>err.txt; then fail "onnx_check passed a moved logit"; fi
grep -qF "case 3: output logits[1] is" err.txt || fail "onnx_check did not name the moved logit"
expect 1 "error: model directory 'nowhere'" export --model nowhere --out x.onnx
