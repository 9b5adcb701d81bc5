#!/usr/bin/env bash
# `sentiment` with model.architecture lstm and gru (tiny two-layer bidirectional RNNs, an ensemble of 2 on
# folds): train, eval, predict, a resume equal to the uninterrupted run, export, and attend refused naming
# the architecture; an unknown architecture listing the allowed ones. Tiny made-up data, so each run takes a fraction of a second.
# Usage: rnn_cli_test.sh path/to/sentiment
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../cli_expect.sh"  # fail, expect
source "$(dirname "${BASH_SOURCE[0]}")/tiny_data.sh"  # tiny_sentences
bin=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"

tiny_sentences
config() {  # config(architecture [ensemble ensemble_data val_fraction]): d_model 8, hidden_size 6, 2 layers
  cat <<JSON
{"name": "tiny-$1", "model": {"architecture": "$1", "hidden_size": 6, "bidirectional": true, "vocab_size": 0,
 "max_len": 12, "d_model": 8, "num_heads": 2, "num_layers": 2, "dim_feedforward": 16, "dropout": 0.1,
 "activation": "relu", "norm_first": false, "pooling": "mean+max", "positional": "none", "token_dropout": 0.1,
 "embedding_std": 1.0, "num_classes": 2, "ensemble": ${2:-1}},
 "train": {"epochs": 4, "batch_size": 8, "optimizer": "adamw", "lr": 0.02, "weight_decay": 0.05,
 "label_smoothing": 0.1, "warmup_epochs": 0, "schedule": "constant", "clip_grad_norm": 1.0, "val_fraction": ${4:-0.2},
 "keep_best": false, "min_freq": 1, "ensemble_data": "${3:-shared}"}}
JSON
}
for arch in lstm gru; do
  config $arch >$arch.json
  config $arch 2 folds 0 >$arch-folds.json
  expect 0 "config 'tiny-$arch': bidirectional $arch, d_model 8, hidden_size 6, 2 layers, 4 epochs, seed 0" \
    train --data data.tsv --config $arch.json --out $arch
  grep -qF '"architecture": "'$arch'"' $arch/config.json || fail "$arch/config.json does not hold its architecture"
  # Its 5 recurrent tensors per layer and direction under PyTorch's names (biases, then weights).
  grep -qF '"rnn.weight_hh_l1_reverse"' <(head -c 4096 $arch/model.safetensors) || fail "no rnn.weight_hh_l1_reverse"
  expect 0 "accuracy 1.0000" eval --model $arch --data data.tsv
  expect 0 "positive" predict --model $arch "the film 3 was great"
  grep -qE '^positive  0\.[6-9]' out.txt || fail "$arch does not call a training sentence positive"
  expect 0 "negative" predict --model $arch "the film 3 was dull"
  # Resumed after 2 of 4 epochs: the same weights as the run straight through.
  expect 0 "model written to half/" train --data data.tsv --config $arch.json --epochs 2 --out half
  expect 0 "resuming from half/checkpoint-2.safetensors: 2 of 4 epochs done" train --resume half --epochs 4
  cmp -s $arch/model.safetensors half/model.safetensors || fail "$arch resumed after epoch 2 differs from one run"
  rm -r half
  expect 0 "model written to $arch-folds/" train --data data.tsv --config $arch-folds.json --out $arch-folds
  grep -qF '"members.1.rnn.weight_ih_l0"' <(head -c 8192 $arch-folds/model.safetensors) || fail "no members.1.rnn"
  expect 0 "accuracy 1.0000" eval --model $arch-folds --data data.tsv
  expect 1 "error: attend: model '$arch' has architecture $arch, which has no attention to draw; attend needs a transformer" \
    attend --model $arch "the film was great" --out a.svg
  [[ ! -e a.svg ]] || fail "attend wrote a picture of an RNN"
  # (onnxruntime runs the exported LSTM and GRU in tests/onnx/sentiment_check.sh.)
  set +e
  "$bin" export --model $arch --out $arch.onnx >out.txt 2>err.txt
  set -e
  grep -qF "this build has no ONNX export" err.txt || grep -qF "$arch.onnx written (opset 17" out.txt ||
    fail "export of an RNN model: neither written nor refused for want of ONNX"
done
sed 's/"architecture": "lstm"/"architecture": "rnn"/' lstm.json >rnn.json
expect 1 "error: model: architecture must be transformer, lstm or gru, got 'rnn'" train --data data.tsv --config rnn.json \
  --out bad
sed 's/"hidden_size": 6/"hidden_size": 0/' lstm.json >zero.json
expect 1 "error: model: hidden_size must be in [1, 1048576], got 0" train --data data.tsv --config zero.json --out bad
echo "sentiment CLI with lstm and gru: train, eval, predict, resume, ensemble, export; attend refused OK"
