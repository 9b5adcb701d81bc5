#!/usr/bin/env bash
# Builds the benchmarks and runs them all, tensorgrad and PyTorch alternately (so machine load hits both),
# then prints tensorgrad / PyTorch ratios. Results go to $out (default /tmp/tensorgrad-bench).
# Usage: bash bench/run.sh [quick|layers|gpt|ddp]   quick: S and M only, 1 thread, fewer steps, no layers;
#                                               layers: the layer benchmarks alone (Conv2d, LSTM; issue 25);
#                                               gpt: the GPT benchmark alone (issue 24; GPT_STEPS=n for fewer steps)
#                                               ddp: data-parallel GPT training alone (issue 27), see run_ddp
# LAYER_STEPS and LAYER_WARMUP (default 20 and 3) set the layer benchmarks' repetitions, LAYER_ONLY (comma-separated
# case names, e.g. conv2d_digits2) the cases to run.
# Installs libbenchmark-dev and Debian's python3-torch (/usr/bin/python3) if missing. OPENBLAS_CORETYPE is set to the
# core this CPU supports (tensorgrad's suggestion) for both sides unless already set (not in ddp mode).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD:-$root/build-bench}"
out="${OUT:-/tmp/tensorgrad-bench}"
py=/usr/bin/python3
mode="${1:-full}"
[[ $mode =~ ^(full|quick|layers|gpt|ddp)$ ]] || { echo "usage: bash bench/run.sh [quick|layers|gpt|ddp]" >&2; exit 2; }
deps=(--bench)
[[ $mode == ddp ]] && deps+=(--mpi)
bash "$root/tools/install-deps.sh" "${deps[@]}"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DTENSORGRAD_BUILD_BENCH=ON -DTENSORGRAD_BUILD_TESTS=OFF \
  ${CMAKE_ARGS:-} >/dev/null
targets="bench_step bench_micro bench_layers sentiment"
[[ $mode == layers ]] && targets="bench_layers sentiment"
[[ $mode == gpt ]] && targets="bench_gpt sentiment"
[[ $mode == ddp ]] && targets="bench_ddp"
cmake --build "$build" -j2 --target $targets
mkdir -p "$out"

# Data-parallel training of the GPT default (issue 27): np=1 and np=2 of 1 thread each (weak scaling: the same
# batch per rank), tensorgrad under mpirun and PyTorch DDP over Gloo alternately, with DDP's default bucket (25 MB:
# the whole model in one, which starts when the backward ends) and with DDP_BUCKET bytes (default 824576, a
# quarter of the model's gradients: the first buckets' allreduces overlap the rest of the backward). DDP_REPS
# rounds (default 1), DDP_STEPS timed steps (default 20). OPENBLAS_CORETYPE is left as the environment has it
# (each line names the core tensorgrad ran on).
run_ddp() {
  : >"$out/ddp.jsonl"
  export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
  local mpi=(mpirun --allow-run-as-root --oversubscribe --mca btl self,vader)
  local flags=(--config default --steps "${DDP_STEPS:-20}" --warmup 3)
  for _ in $(seq "${DDP_REPS:-1}"); do
    for bucket in $((25 << 20)) "${DDP_BUCKET:-824576}"; do
      for np in 1 2; do
        "${mpi[@]}" -np $np "$build/bench/bench_ddp" "${flags[@]}" --bucket-bytes "$bucket" | tee -a "$out/ddp.jsonl"
        $py "$root/bench/torch_ddp.py" --ranks $np "${flags[@]}" --bucket-bytes "$bucket" | tee -a "$out/ddp.jsonl"
      done
    done
  done
}
if [[ $mode == ddp ]]; then
  run_ddp
  $py "$root/bench/report.py" "$out" ddp  # only this run's table
  exit 0
fi
if [[ -z "${OPENBLAS_CORETYPE:-}" ]]; then
  core="$("$build/examples/sentiment/sentiment" blas --suggest)"
  [[ -n "$core" ]] && export OPENBLAS_CORETYPE="$core"
fi
echo "OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-<unset>}"
# The core in use, and a warning now (not at the sentiment run's start) if a core set in the environment is
# narrower than this CPU's.
"$build/examples/sentiment/sentiment" blas | grep -E '^(kernel core|warning):' || true

# Forward + backward of Conv2d and LSTM (issue 25) at 1 and 2 threads, tensorgrad and PyTorch alternately.
run_layers() {
  : >"$out/layers.jsonl"
  for threads in 1 2; do
    export OMP_NUM_THREADS=$threads OPENBLAS_NUM_THREADS=$threads
    local flags=(--threads "$threads" --steps "${LAYER_STEPS:-20}" --warmup "${LAYER_WARMUP:-3}" --only "${LAYER_ONLY:-}")
    "$build/bench/bench_layers" "${flags[@]}" | tee -a "$out/layers.jsonl"
    $py "$root/bench/torch_layers.py" "${flags[@]}" | tee -a "$out/layers.jsonl"
  done
}
if [[ $mode == layers ]]; then
  run_layers
  $py "$root/bench/report.py" "$out" layers  # only this run's table: $out may hold an earlier full run's
  exit 0
fi

if [[ $mode == gpt ]]; then
  # Training steps of both configurations, then generation at context 256 (1 thread), each side alternately.
  : >"$out/gpt.jsonl"
  steps="${GPT_STEPS:-20}"
  for threads in 1 2; do
    export OMP_NUM_THREADS=$threads OPENBLAS_NUM_THREADS=$threads
    for c in default nano; do
      n=$steps; [[ $c == nano ]] && n=$(( (steps + 1) / 2 ))
      "$build/bench/bench_gpt" --config $c --threads $threads --steps $n --warmup 2 | tee -a "$out/gpt.jsonl"
      $py "$root/bench/torch_gpt.py" --config $c --threads $threads --steps $n --warmup 2 | tee -a "$out/gpt.jsonl"
    done
  done
  export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
  for m in cache nocache; do
    "$build/bench/bench_gpt" --generate $m --threads 1 --reps 3 | tee -a "$out/gpt.jsonl"
    $py "$root/bench/torch_gpt.py" --generate $m --threads 1 --reps 3 | tee -a "$out/gpt.jsonl"
  done
  $py "$root/bench/report.py" "$out" gpt  # only this run's tables: $out may hold an earlier full run's
  exit 0
fi

: >"$out/step.jsonl"

threads_list="1 2"; configs="S M L"
[[ "$mode" == quick ]] && threads_list="1" && configs="S M"
for threads in $threads_list; do
  # PyTorch's pools (OpenMP's and OpenBLAS's) get the count; tensorgrad takes it from --threads (its OpenBLAS
  # runs on one thread and it splits the products over its own pool).
  export OMP_NUM_THREADS=$threads OPENBLAS_NUM_THREADS=$threads
  for c in $configs; do
    steps=20 warmup=3
    [[ $c == L ]] && steps=5 warmup=1
    [[ $mode == quick ]] && steps=10
    "$build/bench/bench_step" --config "$c" --threads "$threads" --steps $steps --warmup $warmup | tee -a "$out/step.jsonl"
    $py "$root/bench/torch_step.py" --config "$c" --threads "$threads" --steps $steps --warmup $warmup | tee -a "$out/step.jsonl"
  done
done

export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
# Interleaved in random order, medians of 3: run in order (every matmul size before every raw sgemm), a drift
# of the machine's speed showed as a 20-30 % gap between the two (bench/RESULTS.md). Each warms up first, as
# torch_micro.py's timed() does: without, cross_entropy's (4096, 5000) ran one timed call and that call's
# first page faults of its 82 MB buffers (300 ms instead of 60-80).
"$build/bench/bench_micro" --threads 1 --benchmark_format=json --benchmark_out="$out/micro.json" \
  --benchmark_out_format=json --benchmark_min_time=0.1 --benchmark_min_warmup_time=0.1 --benchmark_repetitions=3 \
  --benchmark_enable_random_interleaving=true --benchmark_report_aggregates_only=true >/dev/null
$py "$root/bench/torch_micro.py" --threads 1 | tee "$out/torch_micro.jsonl"

if [[ $mode == full ]]; then run_layers; else rm -f "$out/layers.jsonl"; fi

epochs=3
[[ $mode == quick ]] && epochs=2
: >"$out/sentiment.jsonl"
for threads in $threads_list; do
  export OMP_NUM_THREADS=$threads OPENBLAS_NUM_THREADS=$threads
  "$build/examples/sentiment/sentiment" --threads "$threads" train --config reference --epochs $epochs \
    --out "$out/sentiment-run" >/dev/null
  $py -c "import json,statistics,sys; s=[json.loads(l)['seconds'] for l in open(sys.argv[1])]; \
print(json.dumps({'impl':'tensorgrad','name':'sentiment_epoch','threads':$threads,'seconds':round(statistics.median(s),3),'epochs':s}))" \
    "$out/sentiment-run/metrics.jsonl" | tee -a "$out/sentiment.jsonl"
  $py "$root/bench/torch_sentiment.py" --epochs $epochs --threads "$threads" | tee -a "$out/sentiment.jsonl"
done

$py "$root/bench/report.py" "$out"
