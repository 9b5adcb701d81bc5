#!/usr/bin/env bash
# `mpirun -np N sentiment train` on tiny made-up data and a one-layer model without dropout (4 epochs of 5
# AdamW steps, a global batch of 8 over 38 training sentences: a last batch of 6): the weights of 2 ranks and
# of 3 (uneven shares, each rank's loss weighted by its share) equal one process's to 1e-6, but the attention's
# key bias (below); so do those of a global batch of 37 at np=2, whose last batch of 1 leaves rank 1 no rows,
# and, to 1e-5, of an ensemble of 2 networks on folds (at np=2, members on 2 threads per rank, each rank a
# share of each member's batches; one process trains them one after the other); rank 0 alone prints and
# writes; a checkpoint written by 2 ranks resumes in one process and one written by one process at np=3, both
# ending with one process's weights, and one resumed at np=2 ends bit-equal to np=2 throughout; an LSTM's
# weights at np=2 equal one process's to 1e-5; an error, on every rank or on one, ends the job with the rank
# named.
# Usage: sentiment_mpirun_test.sh path/to/sentiment mpiexec [mpiexec flags...]
set -euo pipefail
here=$(dirname "${BASH_SOURCE[0]}")
source "$here/../cli_expect.sh"   # fail, expect, mpirun_expect
source "$here/weights_close.sh"
source "$here/../sentiment/tiny_data.sh"  # tiny_sentences
bin=$1
shift
mpi=("$@")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"

tiny_sentences
config() {  # config(batch_size [ensemble ensemble_data val_fraction])
  cat <<JSON
{"name": "tiny", "model": {"vocab_size": 0, "max_len": 12, "d_model": 8, "num_heads": 2, "num_layers": 1,
 "dim_feedforward": 16, "dropout": 0.0, "activation": "relu", "norm_first": false, "pooling": "mean",
 "positional": "none", "token_dropout": 0.0, "embedding_std": 1.0, "num_classes": 2, "ensemble": ${2:-1}},
 "train": {"epochs": 4, "batch_size": $1, "optimizer": "adamw", "lr": 0.01, "weight_decay": 0.05,
 "label_smoothing": 0.1, "warmup_epochs": 0, "schedule": "constant", "clip_grad_norm": 1.0,
 "val_fraction": ${4:-0.2}, "keep_best": false, "min_freq": 1, "ensemble_data": "${3:-shared}"}}
JSON
}
config 8 >tiny.json
config 37 >big.json
config 8 2 folds 0 >folds.json

# The key bias (in_proj_bias[d_model, 2 d_model)) adds q·b_k to every score of a query's row, which softmax
# ignores: its gradient is 0 but for rounding, which Adam scales up to steps of about lr in either direction
# (as in gpt_mpirun_test.sh). It changes no output and is left out; every other weight agrees to about 1e-7.
close() { weights_close "$1" "$2" 1e-6 'self_attn\.in_proj_bias' 8 16; }
expect 0 "model written to one/" train --data data.tsv --config tiny.json --out one
grep "^epoch " out.txt | sed 's/ *[0-9.]*s  *[0-9]* sent\/s//' >one.log
mpirun_expect 0 "data-parallel: 2 ranks (mpirun), each a share of every 8-sentence batch" 2 1 \
  train --data data.tsv --config tiny.json --out two
[[ $(grep -c "model written to two/" out.txt) == 1 ]] || fail "not rank 0 alone printed the result"
# The epoch lines (time and speed aside) are the whole batch's, the same as one process's to their digits.
diff one.log <(grep "^epoch " out.txt | sed 's/ *[0-9.]*s  *[0-9]* sent\/s//') ||
  fail "the epoch lines of 2 ranks differ from one process's"
close one/model.safetensors two/model.safetensors
[[ $(ls two) == "$(ls one)" && $(wc -l <two/metrics.jsonl) == 4 ]] || fail "two/ holds other files than one/"
[[ $(ls) == "$(printf '%s\n' big.json data.tsv err.txt folds.json one one.log out.txt tiny.json two)" ]] ||
  fail "files written outside the model directory: $(ls)"
mpirun_expect 0 "model written to three/" 3 1 train --data data.tsv --config tiny.json --out three
close one/model.safetensors three/model.safetensors
expect 0 "model written to big1/" train --data data.tsv --config big.json --out big1
mpirun_expect 0 "model written to big2/" 2 1 train --data data.tsv --config big.json --out big2
close big1/model.safetensors big2/model.safetensors
expect 0 "model written to folds1/" train --data data.tsv --config folds.json --out folds1
mpirun_expect 0 "model written to folds2/" 2 2 train --data data.tsv --config folds.json --out folds2
# One query weight of member 0 differs by 3e-6 (7e-6 at np=3), the same with or without threads or clipping:
# rounding that Adam scales up where the gradient is small, as for the key bias.
weights_close folds1/model.safetensors folds2/model.safetensors 1e-5 'self_attn\.in_proj_bias' 8 16
# An LSTM (model.architecture lstm, bidirectional): the same data-parallel path, every weight to 1e-5
# (1.2e-6 seen: its longer chains of rounding, scaled by Adam).
sed 's/"model": {/"model": {"architecture": "lstm", "hidden_size": 6, "bidirectional": true, /' tiny.json >lstm.json
expect 0 "model written to lstm1/" train --data data.tsv --config lstm.json --out lstm1
mpirun_expect 0 "model written to lstm2/" 2 1 train --data data.tsv --config lstm.json --out lstm2
weights_close lstm1/model.safetensors lstm2/model.safetensors 1e-5
# Stopped after 2 epochs at np=2, resumed in one process (data, config and seed from the checkpoint); and the
# other way round at np=3.
mpirun_expect 0 "model written to part/" 2 1 train --data data.tsv --config tiny.json --out part --epochs 2
expect 0 "resuming from part/checkpoint-2.safetensors: 2 of 4 epochs done" train --resume part --epochs 4
close one/model.safetensors part/model.safetensors
# At the same number of ranks a resume is exact: 2 + 2 epochs at np=2 write two/'s bytes.
mpirun_expect 0 "model written to half/" 2 1 train --data data.tsv --config tiny.json --out half --epochs 2
mpirun_expect 0 "resuming from half/checkpoint-2.safetensors: 2 of 4 epochs done" 2 1 train --resume half --epochs 4
cmp two/model.safetensors half/model.safetensors || fail "np=2 stopped after 2 epochs and resumed differs from np=2"
expect 0 "model written to back/" train --data data.tsv --config tiny.json --out back --epochs 2
mpirun_expect 0 "resuming from back/checkpoint-2.safetensors: 2 of 4 epochs done" 3 1 train --resume back --epochs 4
close one/model.safetensors back/model.safetensors
mpirun_expect 1 "of 2: read_examples: cannot open 'missing.tsv'" 2 1 train --data missing.tsv --config tiny.json --out bad
# The error on rank 1 alone (mpirun's `prog args : prog other-args`): rank 0, waiting for it in the first
# step's allreduce, is ended too (MPI_Abort), not left hanging.
set +e
timeout 60 "${mpi[@]}" -np 1 "$bin" --threads 1 train --data data.tsv --config tiny.json --out solo : \
  -np 1 "$bin" --threads 1 train --data missing.tsv --config tiny.json --out solo >out.txt 2>err.txt
got=$?
set -e
[[ $got == 1 ]] || fail "an error on rank 1 alone: exit status $got, expected 1 (124: a hang)"
grep -qF "error: rank 1 of 2: read_examples: cannot open 'missing.tsv'" err.txt || fail "rank 1's error not printed"
echo "sentiment under mpirun: np=2 and np=3 equal np=1, checkpoints resume at another number of ranks"
