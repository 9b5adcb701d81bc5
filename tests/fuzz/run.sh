#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan + coverage) and runs each for a bounded time, two at a
# time, starting from its seeds in tests/fuzz/corpus/<target>/ (new inputs go to <build>/corpus/<target>/, not
# into git). A failing input is saved as <build>/artifacts/<target>-crash-<hash>: make it a regression test
# in the suite of the code at fault (the input inline), then fix the code.
# Usage: bash tests/fuzz/run.sh [seconds-per-target [build-dir]]   (defaults: 60, build-fuzz)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
seconds="${1:-60}"
build="${2:-$root/build-fuzz}"
targets=(safetensors dataset text tensor_views config checkpoint lexicon digits_csv gpt_corpus model_files)
bash "$root/tools/install-deps.sh" --fuzz
# -O1 with line tables, asserts on (an internal invariant that fails is a finding too). The build directory may
# be the sanitizer suite's (.ci/run builds it with these flags and the tests): only the fuzz targets are built.
cmake -S "$root" -B "$build" -DCMAKE_CXX_COMPILER=clang++-14 -DTENSORGRAD_FUZZ=ON -DCMAKE_BUILD_TYPE=Debug \
  "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -g1" >/dev/null
cmake --build "$build" -j2 --target "${targets[@]/#/fuzz_}"
mkdir -p "$build/artifacts"
# One target: its log, then "ok" or "failed" in <target>.status for the summary below.
fuzz() {
  local t=$1 log="$build/artifacts/$1.log" dict=()
  mkdir -p "$build/corpus/$t"
  [[ -f "$root/tests/fuzz/$t.dict" ]] && dict=(-dict="$root/tests/fuzz/$t.dict")
  if UBSAN_OPTIONS=print_stacktrace=1 "$build/tests/fuzz/fuzz_$t" -max_total_time="$seconds" -max_len=4096 \
      -rss_limit_mb=2048 -artifact_prefix="$build/artifacts/$t-" -print_final_stats=1 "${dict[@]}" \
      "$build/corpus/$t" "$root/tests/fuzz/corpus/$t" >"$log" 2>&1; then
    echo ok >"$build/artifacts/$t.status"
  else
    echo failed >"$build/artifacts/$t.status"
  fi
}
# Two targets at a time (one per core of the CI machine): the same seconds each, half the wall time.
rm -f "$build"/artifacts/*.status
for t in "${targets[@]}"; do
  while (($(jobs -rp | wc -l) >= 2)); do wait -n || true; done
  fuzz "$t" &
done
wait
status=0
for t in "${targets[@]}"; do
  log="$build/artifacts/$t.log"
  if [[ "$(cat "$build/artifacts/$t.status" 2>/dev/null)" != ok ]]; then
    tail -n 60 "$log"
    echo "fuzz_$t: failing input saved under $build/artifacts/ (full log: $log)" >&2
    status=1
    continue
  fi
  echo "fuzz_$t: $(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | grep -o '[0-9]*$') runs in ${seconds}s," \
    "$(grep -o 'corp: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*$') inputs in the corpus, no failure"
done
exit $status
