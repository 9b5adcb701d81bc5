#!/usr/bin/env bash
# `sentiment train` end to end with the checkpoint flags: a run resumed with --resume, the errors (exit
# status 1, one line naming the problem) for a missing or foreign checkpoint, and the NaN guard's three
# behaviours on a learning rate of 1e30; a model with sub-words through predict, eval and attend. Tiny made-up data, so each run takes a fraction of a second.
# Usage: cli_test.sh path/to/sentiment
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../cli_expect.sh"  # fail, expect
source "$(dirname "${BASH_SOURCE[0]}")/tiny_data.sh"  # tiny_sentences
bin=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"

tiny_sentences
config() {  # config(lr [batch_size]): a one-layer d_model 8 model, the default recipe otherwise
  cat <<JSON
{"name": "tiny", "model": {"vocab_size": 0, "max_len": 12, "d_model": 8, "num_heads": 2, "num_layers": 1,
 "dim_feedforward": 16, "dropout": 0.1, "activation": "relu", "norm_first": false, "pooling": "mean",
 "positional": "none", "token_dropout": 0.1, "embedding_std": 1.0, "num_classes": 2},
 "train": {"epochs": 2, "batch_size": ${2:-16}, "optimizer": "adamw", "lr": $1, "weight_decay": 0.05,
 "label_smoothing": 0.1, "warmup_epochs": 0, "schedule": "constant", "clip_grad_norm": 0.0, "val_fraction": 0.2,
 "keep_best": true, "min_freq": 1}}
JSON
}
config 0.002 >tiny.json
config 1e30 >absurd.json
config 0.002 0 >batch0.json

expect 0 "learning_curve.svg, checkpoint-1.safetensors)" train --data data.tsv --config tiny.json --epochs 1 --out run
[[ -f run/checkpoint-1.safetensors ]] || fail "no run/checkpoint-1.safetensors"
# No --data: the checkpoint's (it used to be the default data set, refused as other data).
expect 0 "resuming from run/checkpoint-1.safetensors: 1 of 2 epochs done" train --resume run --epochs 2
[[ -f run/checkpoint-2.safetensors ]] || fail "no run/checkpoint-2.safetensors"
[[ $(wc -l <run/metrics.jsonl) == 2 ]] || fail "metrics.jsonl should hold epochs 1 and 2"
sed 's/great/fine/' data.tsv >other.tsv
expect 1 "data.tsv): data fingerprint" train --data other.tsv --resume run --epochs 3
expect 1 "error: resume: no checkpoint in 'nowhere'" train --data data.tsv --resume nowhere
! grep -q "^data " out.txt || fail "train --resume read the data before finding no checkpoint"
expect 1 "error: resume: no checkpoint in 'data.tsv'" train --resume data.tsv  # not "cannot create data.tsv"
expect 1 "error: resume: run/checkpoint-2.safetensors was trained with seed 0, not 5" train --data data.tsv --resume run --seed 5
expect 1 "error: train: epoch 1, step 2 (batch 2 of 3, lr 1e+30): NonFiniteGuard: step 2: the loss is nan; stopped" \
  train --data data.tsv --config absurd.json --out bad
expect 1 "stopped: all 1 rollbacks used" train --data data.tsv --config absurd.json --out bad --on-nonfinite rollback \
  --max-rollbacks 1
grep -qF "rollback 1 of 1: back to the end of epoch 0, learning rate scaled by 0.5" out.txt || fail "no rollback line"
expect 1 "anomaly: forward of" train --data data.tsv --config absurd.json --out bad --detect-anomaly
# Bad values on the command line, in the config or data: one line naming the value, never a crash.
expect 105 "--epochs: expected a whole number >= 1, got '0'" train --data data.tsv --config tiny.json --epochs 0
expect 105 "--epochs: expected a whole number >= 1, got 'abc'" train --data data.tsv --config tiny.json --epochs abc
expect 105 "--seed: expected a whole number >= 0, got '-1'" train --data data.tsv --config tiny.json --seed -1
expect 105 "--rollback-factor: expected a number in (0, 1), got '0'" train --data data.tsv --rollback-factor 0
expect 105 "--rollback-factor: expected a number in (0, 1), got 'nan'" train --data data.tsv --rollback-factor nan
expect 1 "error: train: batch_size must be >= 1, got 0" train --data data.tsv --config batch0.json --out bad
expect 1 "error: train: epochs must be in [1, 1000000], got 9223372036854775807" train --data data.tsv --config tiny.json \
  --epochs 9223372036854775807 --out bad
sed 's/"constant"/"Cosine"/' tiny.json >schedule.json
expect 1 "error: train: schedule must be cosine or constant, got 'Cosine'" train --data data.tsv --config schedule.json \
  --out bad
sed 's/"val_fraction": 0.2/"val_fraction": -0.5/' tiny.json >val.json
expect 1 "error: train: val_fraction must be in [0, 1), got -0.5" train --data data.tsv --config val.json --out bad
# Model fields are checked with the config, naming the field, before any layer (max_len 0 was an Embedding error).
sed 's/"max_len": 12/"max_len": 0/' tiny.json >maxlen.json
expect 1 "error: model: max_len must be in [1, 1048576], got 0" train --data data.tsv --config maxlen.json --out bad
sed 's/"num_heads": 2/"num_heads": 3/' tiny.json >heads.json
expect 1 "error: model: d_model 8 is not divisible by num_heads 3" train --data data.tsv --config heads.json --out bad
sed 's/"dropout": 0.1/"dropout": -0.1/' tiny.json >dropout.json
expect 1 "error: model: dropout must be in [0, 1), got -0.1" train --data data.tsv --config dropout.json --out bad
config -0.002 >lr.json
expect 1 "error: train: lr must be finite and >= 0, got -0.002" train --data data.tsv --config lr.json --out bad
sed 's/"num_classes": 2/"num_classes": 3/' tiny.json >three.json
expect 1 "error: config 'tiny': model.num_classes must be 2 (labels 0 = negative, 1 = positive), got 3" \
  train --data data.tsv --config three.json --out bad
mkdir confdir
expect 1 "error: config 'confdir' is a directory, expected a JSON file" train --data data.tsv --config confdir --out bad
{ cat data.tsv; printf 'no label here\n'; } >messy.tsv
expect 0 "data messy.tsv: skipped 1 malformed lines" train --data messy.tsv --config tiny.json --epochs 1 --out messy \
  --skip-malformed
cp -r run dirconf && rm dirconf/config.json && mkdir dirconf/config.json
expect 1 "error: model directory 'dirconf': config.json is a directory, expected a file" predict --model dirconf "good"
expect 1 "error: model directory 'nowhere' does not exist or is not a directory" predict --model nowhere "good"
expect 1 "error: model directory 'data.tsv' does not exist or is not a directory" predict --model data.tsv "good"
mkdir -p gptdir && echo '{"kind": "gpt"}' >gptdir/config.json && echo '{}' >gptdir/vocab.json
expect 1 "error: model directory 'gptdir' holds a GPT (vocab.json, no vocab.txt), not a sentiment classifier" \
  predict --model gptdir "good"
head -5 data.tsv >four.tsv
expect 1 "error: eval: 'four.tsv' holds no test sentences" eval --model run --data four.tsv
expect 1 "error: train: cannot create the output directory 'data.tsv/sub'" train --data data.tsv --config tiny.json \
  --out data.tsv/sub
expect 1 "training and 0 test sentences; need at least one of each" train --data four.tsv --config tiny.json --out bad
# A model with sub-words: its setting is saved, and predict, eval and attend read the n-grams too.
sed 's/"num_classes": 2}/"num_classes": 2, "subword_buckets": 64}/' tiny.json >subword.json
expect 0 "model written to sub/" train --data data.tsv --config subword.json --epochs 1 --out sub
grep -qF '"subword_buckets": 64' sub/config.json || fail "sub/config.json does not hold subword_buckets 64"
expect 0 "an unseen filmmaker" predict --model sub "an unseen filmmaker"
expect 0 "accuracy" eval --model sub --data data.tsv
# Without --data, eval reads the file the model was trained on (its checkpoint records it), not the bundled data.
expect 0 "/data.tsv, the file the model was trained on" eval --model sub
grep -qF "data.tsv (12 test sentences)" out.txt || fail "eval --model sub did not evaluate data.tsv's 12 test sentences"
cp -r sub badckpt && printf 'not a checkpoint' >badckpt/checkpoint-1.safetensors
expect 0 "warning: " eval --model badckpt  # the model itself is fine: warned, then the bundled data
grep -qF "(600 test sentences)" out.txt || fail "eval --model badckpt did not fall back to the bundled data"
expect 0 "written to s.svg" attend --model sub "an unseen filmmaker" --out s.svg
grep -qE '^  layer 0: [01]\.[0-9]{3} [01]\.[0-9]{3}$' out.txt || fail "attend printed no entropy for layer 0's 2 heads"
printf 'good film\n\ndull film\n' >three.txt
expect 1 "error: predict: sentence 2 of 3 is empty" predict --model run <three.txt
printf 'good film\r\ndull film\r\n' >crlf.txt
expect 0 "dull film" predict --model run <crlf.txt
! grep -q $'\r' out.txt || fail "predict echoed the CR of a CRLF line"
# --threads after the subcommand too; more than the cores warns.
expect 0 "threads: 2" blas --threads 2
cores=$(getconf _NPROCESSORS_ONLN)
expect 0 "warning: --threads $((cores + 1)) is more than the $cores cores" blas --threads $((cores + 1))
# On a CPU with AVX-512, OpenBLAS's AVX2 (Haswell) kernels are a fallback (at half of SkylakeX's speed on an
# AMD EPYC of family 26 whose environment set them): a warning, and --suggest names SkylakeX; on SkylakeX,
# neither.
if grep -qw avx512f /proc/cpuinfo; then
  OPENBLAS_CORETYPE=Haswell expect 0 "warning: OpenBLAS runs its Haswell kernels on a CPU with AVX-512" blas
  [[ $(OPENBLAS_CORETYPE=Haswell "$bin" blas --suggest) == SkylakeX ]] || fail "blas --suggest on Haswell's kernels"
  OPENBLAS_CORETYPE=SkylakeX expect 0 "kernel core: SkylakeX" blas
  ! grep -q "warning" out.txt err.txt || fail "blas warned on SkylakeX's kernels"
  [[ -z $(OPENBLAS_CORETYPE=SkylakeX "$bin" blas --suggest) ]] || fail "blas --suggest on SkylakeX's kernels"
fi
# Longer than max_len (12): predict and attend say that the model reads only the first 12 tokens.
long="$(printf 'great %.0s' $(seq 20))"
expect 0 "predict: sentence 1 of 1 has 20 tokens; the model reads the first 12" predict --model run "$long"
expect 0 "over 12 tokens (the first 12 of 20) written to a.svg" attend --model run "$long" --out a.svg
# Files and streams (issue 28): every write checked, every read bounded, small messages that say what is wrong.
set +e; "$bin" --threads 1 predict --model run "good film" >/dev/full 2>err.txt; got=$?; set -e
[[ $got == 1 ]] || fail "predict >/dev/full: exit status $got, expected 1"
grep -qF "error: cannot write to stdout: No space left on device" err.txt || fail "predict >/dev/full: no message"
expect 1 "error: attend /dev/full: write failed: No space left on device" attend --model run "good film" --out /dev/full
expect 1 "error: eval /dev/full: write failed: No space left on device" eval --model run --data data.tsv --logits /dev/full
mkdir full && ln -s /dev/full full/learning_curve.svg
expect 1 "full/learning_curve.svg: write failed: No space left on device" train --data data.tsv --config tiny.json --epochs 1 \
  --out full
# config.json is removed first and written last (a symlink to /dev/full in its place would only be removed): its
# write goes through write_file_atomic's temporary config.json.tmp, which stands in for the full disk here, in a
# retrain over a finished model directory. Refused afterwards as having no config.json, not mixed.
cp -r run fullconfig && ln -s /dev/full fullconfig/config.json.tmp
expect 1 "error: train fullconfig/config.json: write failed: No space left on device" train --data data.tsv \
  --config tiny.json --epochs 1 --out fullconfig
[[ ! -e fullconfig/config.json && ! -e fullconfig/config.json.tmp ]] || fail "config.json or its .tmp left behind"
expect 1 "error: model directory 'fullconfig' has no config.json" predict --model fullconfig "good film"
expect 1 "error: config '/missing.json': no such file" train --data data.tsv --config /missing.json --out bad
expect 1 "error: unknown config 'defualt'" train --data data.tsv --config defualt --out bad
expect 1 "error: Lexicon::load: 'confdir' is a directory, expected a file" train --data data.tsv --lexicon confdir --out bad
expect 1 "error: read_examples: '/dev/zero' is larger than the limit of 268435456 bytes" train --data /dev/zero \
  --config tiny.json --out bad
expect 1 "error: read_examples: cannot open 'none.tsv': No such file or directory" train --data none.tsv --config tiny.json
if [[ $(id -u) != 0 ]]; then  # root reads any file
  cp tiny.json locked.json && chmod 000 locked.json
  expect 1 "error: config: cannot open 'locked.json': Permission denied" train --data data.tsv --config locked.json
fi
# --skip-malformed is kept with the model: eval and train --resume read the same messy file the same way.
grep -qF '"skip_malformed": true' messy/config.json || fail "messy/config.json does not record skip_malformed"
expect 0 "data messy.tsv: skipped 1 malformed lines, as training did" eval --model messy --data messy.tsv
expect 0 "resuming from messy/checkpoint-1.safetensors: 1 of 2 epochs done" train --resume messy --epochs 2
# A model directory of earlier versions, with their checkpoint.safetensors (here its metadata alone): eval and
# predict read it as before; --resume names the old format.
cp -r sub old && rm old/checkpoint-*.safetensors
header="{\"__metadata__\":{\"format\":\"tensorgrad-sentiment-checkpoint\",\"data_path\":\"$PWD/data.tsv\"}}"
printf "$(printf '\\x%02x' $((${#header} & 255)) $((${#header} >> 8)) 0 0 0 0 0 0)%s" "$header" >old/checkpoint.safetensors
expect 0 "/data.tsv, the file the model was trained on" eval --model old
expect 0 "a great film" predict --model old "a great film"
expect 1 "error: resume: 'old' holds old/checkpoint.safetensors, a checkpoint of the format before checkpoint-<epoch>" \
  train --resume old
# eval on another file than the training one warns: its test split may overlap the training data.
expect 0 "warning: other.tsv is not the file the model was trained on" eval --model run --data other.tsv
expect 0 "accuracy" eval --model run --data data.tsv
! grep -q "warning" err.txt || fail "eval on the training file warned"
echo "sentiment CLI: resume, checkpoint errors, NaN guard, files and streams OK"
