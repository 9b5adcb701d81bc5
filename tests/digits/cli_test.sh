#!/usr/bin/env bash
# `digits` end to end on a small slice of the bundled data with the tiny configuration: train, a resumed run
# ending with the weights of an uninterrupted one, eval, predict, and the errors (exit status 1, one line
# naming the file or value) for bad CSV files, model directories, configurations and failed writes.
# Usage: cli_test.sh path/to/digits path/to/examples/digits/data
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../cli_expect.sh"  # fail, expect
bin=$1
data=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"

mkdir small
head -300 "$data/train.csv" >small/train.csv
head -60 "$data/valid.csv" >small/valid.csv
head -60 "$data/test.csv" >small/test.csv


expect 0 "model written to run/" train --data small --config tiny --epochs 2 --out run
for f in config.json model.safetensors metrics.csv learning_curve.svg filters.svg misclassified.svg \
  checkpoint-2.safetensors; do
  [[ -f run/$f ]] || fail "no run/$f"
done
[[ $(wc -l <run/metrics.csv) == 3 ]] || fail "metrics.csv should hold a header and epochs 1 and 2"
grep -qF "the 4 filters of the first layer" run/filters.svg || fail "filters.svg has no title"
[[ $(ls run | grep -c '^checkpoint-') == 1 ]] || fail "more than the newest checkpoint kept"

# Interrupted after epoch 1, resumed to 2: the same weights, bit for bit, as the uninterrupted run.
expect 0 "model written to part/" train --data small --config tiny --epochs 1 --out part
expect 0 "resuming from part/checkpoint-1.safetensors: 1 of 2 epochs done" train --resume part --epochs 2
cmp -s part/model.safetensors run/model.safetensors || fail "resumed weights differ from the uninterrupted run's"
[[ $(wc -l <part/metrics.csv) == 3 ]] || fail "part/metrics.csv should hold epochs 1 and 2"
expect 1 "error: resume: part/checkpoint-2.safetensors has 2 epochs done, more than the 1 asked for" \
  train --resume part --epochs 1
cp -r small other && sed -i '1s/^0,0,/0,1,/' other/train.csv
expect 1 "was trained on other data" train --resume part --data other --epochs 3
expect 1 "error: model directory 'nowhere' does not exist" train --resume nowhere
expect 108 "--seed excludes --resume" train --resume part --seed 3

expect 0 "accuracy" eval --model run
grep -qF "small/test.csv (60 images): accuracy" out.txt || fail "eval did not read the model's test split"
expect 0 "misclassified digits" eval --model run --csv small/valid.csv --draw pics
[[ -f pics/filters.svg && -f pics/misclassified.svg ]] || fail "eval --draw wrote no pictures"

expect 0 "row  digit  probability  label" predict --model run small/test.csv
[[ $(wc -l <out.txt) == 61 ]] || fail "predict should print a header and 60 rows"
head -5 small/test.csv | cut -d, -f1-64 >pixels.csv  # head first: a `| head` can end cut by SIGPIPE (pipefail)
expect 0 "row  digit  probability" predict --model run pixels.csv
[[ $(wc -l <out.txt) == 6 ]] && ! grep -q label out.txt || fail "predict on 64 columns: a header and 5 rows, no labels"

# Bad CSV files: the file, the line and the value at fault.
printf '1,2,3\n' >short.csv
expect 1 "error: digits: short.csv:1: 3 values, expected 64 pixels, or 64 pixels and a label (65)" \
  predict --model run short.csv
{ head -1 small/test.csv; head -1 pixels.csv; } >mixed.csv
expect 1 "error: digits: mixed.csv:2: 64 values, but line 1 has 65" predict --model run mixed.csv
sed '3s/^0,0,[0-9]*,/0,0,17,/' small/test.csv >bright.csv
expect 1 "error: digits: bright.csv:3: pixel 3 is 17, expected 0..16" eval --model run --csv bright.csv
sed '2s/^0,/-1,/' small/test.csv >negative.csv
expect 1 "error: digits: negative.csv:2: pixel 1 is -1, expected 0..16" predict --model run negative.csv
sed '1s/,[0-9]$/,12/' small/test.csv >label.csv
expect 1 "error: digits: label.csv:1: label 12 is outside 0..9" eval --model run --csv label.csv
sed '4s/^0,/x,/' small/test.csv >text.csv
expect 1 "error: digits: text.csv:4: value 1 is not a whole number: 'x'" predict --model run text.csv
printf '1,\0\001\377,3\n' >binary.csv  # a value of binary bytes is quoted escaped, in full (a NUL cut it short)
expect 1 "error: digits: binary.csv:1: value 2 is not a whole number: '\\x00\\x01\\xFF'" predict --model run binary.csv
expect 1 "error: digits: pixels.csv:1: 64 values, expected 65 (64 pixels and a label)" eval --model run --csv pixels.csv
expect 1 "error: digits: cannot open 'missing.csv': No such file or directory" predict --model run missing.csv
: >empty.csv
expect 1 "error: digits: 'empty.csv' holds no images" predict --model run empty.csv
expect 1 "error: digits: data directory 'nodata' does not exist" train --data nodata --config tiny --out bad

# Model directories that are not (whole) digits models.
expect 1 "error: model directory 'absent' does not exist" predict --model absent pixels.csv
expect 1 "error: model directory 'pixels.csv' is not a directory" eval --model pixels.csv
mkdir foreign && printf '{"name": "tiny", "model": {"d_model": 8}}\n' >foreign/config.json
expect 1 "error: model directory 'foreign' is not a digits model" eval --model foreign
mkdir -p bare
expect 1 "error: model directory 'bare' has no config.json" predict --model bare pixels.csv
cp -r run unfinished && rm unfinished/model.safetensors
expect 1 "error: model directory 'unfinished' has no model.safetensors" predict --model unfinished pixels.csv
cp -r run wide && sed -i 's/"channels1": 4/"channels1": 5/' wide/config.json
expect 1 "error: model directory 'wide': cannot load model.safetensors" predict --model wide pixels.csv

# Configurations and the command line.
printf '{"model": {"channels1": 4, "kernel": 5}}\n' >unknown.json
expect 1 "error: config file 'unknown.json': model: unknown field 'kernel'" train --data small --config unknown.json --out bad
printf '{"train": {"lr": -1}}\n' >lr.json
expect 1 "error: train: lr must be finite and > 0, got -1" train --data small --config lr.json --out bad
expect 1 "error: unknown config 'huge'" train --data small --config huge --out bad
printf '{"name": "absurd", "model": {"channels1": 4, "channels2": 8}, "train": {"lr": 1e30, "epochs": 1}}\n' >absurd.json
expect 1 "(the checkpoint of epoch 0 in absurd is intact; lower the learning rate)" train --data small \
  --config absurd.json --out absurd
# Divergence shows as a non-finite loss (the guard) or as batch_norm refusing a channel that holds ±inf.
grep -qE "error: train: epoch 1, batch [0-9]+ of 10: (NonFiniteGuard: step [0-9]+: |batch_norm: channel [0-9]+ of .* holds ±inf)" \
  err.txt || fail "no NaN guard or batch_norm error"
expect 105 "--epochs: expected a number in [1, 1000000], got '0'" train --data small --epochs 0

# A failed write stops with exit status 1 naming the file; the previous file is intact.
cp -r run blocked && rm blocked/config.json && mkdir -p blocked/config.json/inside
expect 1 "error: digits: cannot write blocked/config.json: rename failed" train --data small --config tiny --out blocked
[[ ! -e blocked/model.safetensors ]] || fail "a new run in blocked/ kept the previous run's model.safetensors"
mkdir -p drawn/misclassified.svg/inside
expect 1 "error: digits: cannot write drawn/misclassified.svg" eval --model run --draw drawn
expect 1 "error: train: cannot create the output directory 'pixels.csv/sub'" train --data small --config tiny \
  --out pixels.csv/sub

# Files and streams (issue 28): every write checked, stdout too, and none half done; every read bounded.
set +e; "$bin" --threads 1 predict --model run small/test.csv >/dev/full 2>err.txt; got=$?; set -e
[[ $got == 1 ]] || fail "predict >/dev/full: exit status $got, expected 1"
grep -qF "error: cannot write to stdout: No space left on device" err.txt || fail "predict >/dev/full: no message"
for f in config.json metrics.csv learning_curve.svg filters.svg; do
  mkdir -p "full_$f" && ln -s /dev/full "full_$f/$f"
  expect 1 "full_$f/$f: write failed: No space left on device" train --data small --config tiny --epochs 1 \
    --out "full_$f"
done
# A resume that extends a finished run and fails part-way (a full disk) leaves no model.safetensors: eval refuses
# the directory rather than loading the old run's weights under the new run's config.json.
cp -r part extend && rm extend/metrics.csv && ln -s /dev/full extend/metrics.csv
expect 1 "extend/metrics.csv: write failed: No space left on device" train --resume extend --epochs 3
expect 1 "error: model directory 'extend' has no model.safetensors" eval --model extend
mkdir -p fulldraw && ln -s /dev/full fulldraw/misclassified.svg
expect 1 "error: digits: cannot write fulldraw/misclassified.svg: write failed: No space left on device" \
  eval --model run --draw fulldraw
limit=67108864
expect 1 "error: digits: '/dev/zero' is larger than the limit of $limit bytes" predict --model run /dev/zero
expect 1 "error: digits: '/dev/urandom' is larger than the limit of $limit bytes" eval --model run --csv /dev/urandom
truncate -s 100M huge.csv
expect 1 "error: digits: 'huge.csv' is larger than the limit of $limit bytes" predict --model run huge.csv
cp -r small zero && ln -sf /dev/zero zero/valid.csv
expect 1 "error: digits: 'zero/valid.csv' is larger than the limit of $limit bytes" train --data zero --out bad
expect 1 "error: config: '/dev/zero' is larger than the limit of 1048576 bytes" train --data small --config /dev/zero
expect 1 "error: config 'nothere.json': no such file" train --data small --config nothere.json
cp -r run big && truncate -s 2M big/config.json
expect 1 "error: model directory 'big': 'big/config.json' is larger than the limit of 1048576 bytes" eval --model big
# Sizes in a config.json are bounded before anything is allocated, a model directory's too.
printf '{"model": {"channels1": 100000}}\n' >wide.json
expect 1 "error: model: channels1 and channels2 must be in [1, 1024], got 100000 and" train --data small \
  --config wide.json --out bad
cp -r run huge && sed -i 's/"channels2": 8/"channels2": 100000/' huge/config.json
expect 1 "error: model: channels1 and channels2 must be in [1, 1024], got 4 and 100000" predict --model huge pixels.csv
echo "digits CLI: train, resume, eval, predict, bad inputs, files and streams OK"
