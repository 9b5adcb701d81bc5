#!/usr/bin/env bash
# `mpirun -np N gpt train` on a tiny corpus and model (no dropout, 20 AdamW steps, a global batch of 8): the
# weights of 2 ranks (4 windows each) and of 3 ranks (3, 3 and 2 windows, each rank's loss weighted by its
# share) equal one process's to 1e-6, all but the attention's key bias (below); rank 0 alone prints; a checkpoint written by 2 ranks resumes in one
# process and ends with the same weights; a batch smaller than the ranks is an error on every rank.
# Usage: gpt_mpirun_test.sh path/to/gpt mpiexec [mpiexec flags...]
set -euo pipefail
here=$(dirname "${BASH_SOURCE[0]}")
source "$here/../cli_expect.sh"   # fail, expect, mpirun_expect
source "$here/../gpt/tiny_corpus.sh"
source "$here/weights_close.sh"
bin=$1
shift
mpi=("$@")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"

tiny_corpus
tiny_config tiny 1 0.0 20 10 >tiny.json

# The key bias (in_proj_bias[d_model, 2 d_model)) adds q·b_k to every score of a query's row, which softmax
# ignores: its gradient is 0 but for rounding, ~1e-9, which Adam scales up to steps of about lr in either
# direction. Those weights differ between any two summation orders (1e-4 here after 20 steps), change no
# output, and are left out; every other weight agrees to about 6e-8.
close() { weights_close "$1" "$2" 1e-6 'self_attn\.in_proj_bias' 16 32; }
expect 0 "model written to one/" train --data corpus.txt --config tiny.json --out one
grep "^step " out.txt >one.log
mpirun_expect 0 "data-parallel: 2 ranks (mpirun), each a share of the 8-window batch" 2 1 \
  train --data corpus.txt --config tiny.json --out two
[[ $(grep -c "model written to two/" out.txt) == 1 ]] || fail "not rank 0 alone printed the result"
[[ $(grep -c "^step " out.txt) == 2 ]] || fail "expected 2 evaluation lines (rank 0's), got $(grep -c "^step " out.txt)"
close one/model.safetensors two/model.safetensors
# The loss printed is the whole batch's (the tok/s column aside), the same as one process's to its 4 digits.
diff <(sed 's/ *[0-9]* tok\/s//' one.log) <(grep "^step " out.txt | sed 's/ *[0-9]* tok\/s//') ||
  fail "the evaluation lines of 2 ranks differ from one process's"
mpirun_expect 0 "model written to three/" 3 1 train --data corpus.txt --config tiny.json --out three
close one/model.safetensors three/model.safetensors
# Stopped after 10 steps at np=2, resumed in one process (data, config and seed from the checkpoint).
mpirun_expect 0 "model written to part/" 2 1 train --data corpus.txt --config tiny.json --out part --steps 10
expect 0 "resuming from part/checkpoint-10.safetensors: 10 of 20 steps done" train --resume part --steps 20
close one/model.safetensors part/model.safetensors
sed 's/"batch_size": 8/"batch_size": 2/' tiny.json >small.json
mpirun_expect 1 "error: rank 2 of 3: train: batch_size 2 is smaller than the 3 ranks" 3 1 \
  train --data corpus.txt --config small.json --out small
echo "gpt under mpirun: np=2 and np=3 equal np=1, np=2's checkpoint resumes at np=1"
