#!/usr/bin/env bash
# `gpt` end to end on a tiny made-up corpus and a one-layer model (each run well under a second): train,
# resume equals an uninterrupted run (byte-identical weights), sample is deterministic per seed, eval;
# and each bad input gets exit status 1 (or CLI11's 105 for a bad flag value) and one line naming it.
# Usage: cli_test.sh path/to/gpt
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../cli_expect.sh"  # fail, expect
source "$(dirname "${BASH_SOURCE[0]}")/tiny_corpus.sh"    # tiny_corpus, tiny_config
bin=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"

tiny_corpus
tiny_config tiny 1 0.1 20 10 >tiny.json


expect 0 "model written to full/" train --data corpus.txt --config tiny.json --out full
grep -qF "learning_curve.svg, checkpoint-20.safetensors)" out.txt || fail "the last line does not name the checkpoint"
for f in model.safetensors vocab.json config.json metrics.jsonl learning_curve.svg checkpoint-20.safetensors; do
  [[ -f full/$f ]] || fail "no full/$f"
done
grep -qF "valid bpc" out.txt || fail "no validation line"
[[ $(wc -l <full/metrics.jsonl) == 2 ]] || fail "metrics.jsonl should hold steps 10 and 20"
# Interrupted after 10 steps, then resumed (data, config and seed from the checkpoint): the same weights.
expect 0 "model written to part/" train --data corpus.txt --config tiny.json --out part --steps 10
expect 0 "resuming from part/checkpoint-10.safetensors: 10 of 20 steps done" train --resume part --steps 20
cmp full/model.safetensors part/model.safetensors || fail "the resumed run's weights differ from the uninterrupted run's"
[[ $(wc -l <part/metrics.jsonl) == 2 ]] || fail "part/metrics.jsonl should hold steps 10 and 20"
expect 1 "error: resume: part/checkpoint-20.safetensors was trained with seed 0, not 5" train --resume part --seed 5
sed 's/"d_model": 16/"d_model": 32/' tiny.json >wide.json
expect 1 "is of another configuration; model.d_model is 16 there, 32 here" train --resume part --config wide.json
expect 1 "error: model directory 'corpus.txt' does not exist or is not a directory" train --resume corpus.txt
mkdir fresh && cp full/config.json fresh/
expect 1 "error: resume: no checkpoint in 'fresh'" train --resume fresh
# Muon for the blocks' matrices: another trajectory, and a resumed run again ends with the same weights.
tiny_config muon 1 0.1 20 10 0.05 >muon.json
expect 0 "Muon (lr 0.05) and AdamW (lr 0.01)" train --data corpus.txt --config muon.json --out mfull
! cmp -s mfull/model.safetensors full/model.safetensors || fail "muon_lr 0.05 trained the same weights as AdamW"
expect 0 "model written to mpart/" train --data corpus.txt --config muon.json --out mpart --steps 10
expect 0 "10 of 20 steps done" train --resume mpart --steps 20
cmp mfull/model.safetensors mpart/model.safetensors || fail "the resumed Muon run's weights differ"
expect 1 "is of another configuration; train.muon_lr is 0.05 there, 0.0 here" train --resume mpart --config tiny.json

# Sampling: streamed after the prompt, the same text for the same seed, other text for another.
expect 0 "the cat" sample --model full --prompt "the cat" --tokens 40 --seed 3
[[ $(head -c 7 out.txt) == "the cat" ]] || fail "sample does not start with the prompt"
cp out.txt seed3.txt
expect 0 "the cat" sample --model full --prompt "the cat" --tokens 40 --seed 3
cmp out.txt seed3.txt || fail "sample with the same seed gave other text"
expect 0 "the cat" sample --model full --prompt "the cat" --tokens 40 --seed 4 --top-k 5 --top-p 0.9 --temperature 0.7
! cmp -s out.txt seed3.txt || fail "sample with another seed and options gave the same text"
[[ $(wc -c <seed3.txt) == 48 ]] || fail "sample printed $(wc -c <seed3.txt) bytes, expected 7 + 40 + a newline"
# Longer than the context (16): the cache starts again from the last half context.
expect 0 "the" sample --model full --prompt "the" --tokens 100 --seed 1
expect 0 "bits per byte" eval --model full
grep -qF "corpus.txt (test split" out.txt || fail "eval did not read the corpus the model was trained on"

# Bad input.
expect 1 "error: sample: --prompt: the character 'é' (bytes c3 a9) at byte offset 7 is not in the model's vocabulary" \
  sample --model full --prompt "the cat$(printf '\xc3\xa9')"
expect 105 "--tokens: expected a number in [1, 100000], got '0'" sample --model full --tokens 0
expect 105 "--tokens: expected a number in [1, 100000], got '1000000000'" sample --model full --tokens 1000000000
expect 105 "--temperature: expected a number in (0, 100], got '0'" sample --model full --temperature 0
expect 105 "--temperature: expected a number in (0, 100], got '-1'" sample --model full --temperature -1
expect 105 "--top-p: expected a number in (0, 1], got '0'" sample --model full --top-p 0
expect 105 "--top-p: expected a number in (0, 1], got '1.5'" sample --model full --top-p 1.5
expect 105 "--rollback-factor: expected a number in (0, 1), got '1'" train --data corpus.txt --rollback-factor 1
expect 1 "error: sample: --top-k 100 is more than the vocabulary's" sample --model full --top-k 100
: >empty.txt
expect 1 "error: corpus 'empty.txt' is empty" train --data empty.txt --splits splits.txt --config tiny.json --out bad
head -c 4096 "$bin" >binary.dat
expect 1 "error: corpus 'binary.dat' is not text: a NUL byte at offset" train --data binary.dat --splits splits.txt \
  --config tiny.json --out bad
printf 'caf\xe9 au lait\n%%\n' >latin1.txt
expect 1 "is not text: byte 0xe9 at offset 3 is not UTF-8" train --data latin1.txt --splits splits.txt --out bad
head -5 splits.txt >short.txt
expect 1 "has 5 lines, fewer than corpus 'corpus.txt' has documents" train --data corpus.txt --splits short.txt --out bad
# A sentiment model directory (its config.json as `sentiment train` writes it, shortened).
mkdir senti
printf '{"name": "default", "model": {"vocab_size": 50, "num_classes": 2}, "train": {"epochs": 8}}\n' >senti/config.json
touch senti/model.safetensors senti/vocab.txt senti/checkpoint.safetensors
for cmd in "sample --model senti" "eval --model senti" "train --resume senti"; do
  expect 1 "error: model directory 'senti' holds a sentiment classifier" $cmd
done
expect 1 "error: model directory 'nowhere' does not exist or is not a directory" sample --model nowhere
expect 1 "error: unknown config 'big'" train --data corpus.txt --config big --out bad
echo '{"model": {"width": 3}}' >width.json
expect 1 "error: config: unknown key 'model.width'" train --data corpus.txt --config width.json --out bad
echo '{"train": {"muon_lr": -1}}' >muon_neg.json
expect 1 "error: train: muon_lr must be finite and >= 0 (0: AdamW alone), got -1" train --data corpus.txt --config muon_neg.json --out bad

# Files and streams (issue 28): every write checked, stdout too, and none half done; every read bounded.
set +e; "$bin" --threads 1 sample --model full --prompt "the" --tokens 5 >/dev/full 2>err.txt; got=$?; set -e
[[ $got == 1 ]] || fail "sample >/dev/full: exit status $got, expected 1"
grep -qF "error: cannot write to stdout: No space left on device" err.txt || fail "sample >/dev/full: no message"
expect 1 "error: gpt: cannot write /dev/full: write failed: No space left on device" eval --model full --logits /dev/full
for f in config.json vocab.json metrics.jsonl learning_curve.svg; do
  mkdir -p "full_$f" && ln -s /dev/full "full_$f/$f"
  expect 1 "full_$f/$f: write failed: No space left on device" train --data corpus.txt --config tiny.json --out "full_$f"
done
limit=67108864
expect 1 "error: corpus: '/dev/zero' is larger than the limit of $limit bytes" train --data /dev/zero --splits splits.txt \
  --config tiny.json --out bad
expect 1 "error: corpus: '/dev/urandom' is larger than the limit of $limit bytes" train --data /dev/urandom \
  --splits splits.txt --config tiny.json --out bad
truncate -s 100M huge.txt
expect 1 "error: corpus: 'huge.txt' is larger than the limit of $limit bytes" train --data huge.txt --splits splits.txt \
  --config tiny.json --out bad
expect 1 "error: splits file: '/dev/zero' is larger than the limit of 16777216 bytes" train --data corpus.txt \
  --splits /dev/zero --config tiny.json --out bad
expect 1 "error: config: '/dev/zero' is larger than the limit of 1048576 bytes" train --data corpus.txt --config /dev/zero
expect 1 "error: config 'nothere.json': no such file" train --data corpus.txt --config nothere.json
cp -r full big && truncate -s 2M big/config.json
expect 1 "error: model directory 'big': 'big/config.json' is larger than the limit of 1048576 bytes" sample --model big
# Sizes in a config.json are bounded before anything is allocated, a model directory's too.
sed 's/"num_layers": 1,/"num_layers": 100000,/' tiny.json >deep.json
expect 1 "error: model: num_layers must be in [1, 1024], got 100000" train --data corpus.txt --config deep.json --out bad
sed 's/"d_model": 16,/"d_model": 65536,/; s/"num_heads": 2,/"num_heads": 1,/' tiny.json >wide.json
expect 1 "error: model: up to 1.72e+10 weights, more than the 1073741824 allowed" train --data corpus.txt \
  --config wide.json --out bad
cp -r full deep && sed -i 's/"num_layers": 1\b/"num_layers": 100000/' deep/config.json
grep -qF '"num_layers": 100000' deep/config.json || fail "deep/config.json was not changed"
expect 1 "error: model directory 'deep': model: num_layers must be in [1, 1024], got 100000" sample --model deep
echo "gpt CLI: train, resume, sample, eval, bad input, files and streams OK"
