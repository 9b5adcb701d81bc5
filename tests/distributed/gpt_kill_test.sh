#!/usr/bin/env bash
# A rank SIGKILLed in the middle of `mpirun -np 2 gpt train`: mpirun must end the job within 60 s (rank 0 waits
# in an allreduce for the dead rank; Open MPI stops it) with a non-zero status and a message naming the
# killed rank, and the last checkpoint must resume (here at np=2, and the run must then finish).
# Usage: gpt_kill_test.sh path/to/gpt mpiexec [mpiexec flags...]
set -euo pipefail
here=$(dirname "${BASH_SOURCE[0]}")
source "$here/../cli_expect.sh"   # fail
source "$here/../gpt/tiny_corpus.sh"
bin=$1
shift
mpi=("$@")
dir=$(mktemp -d)
job=
trap '[[ -n $job ]] && kill -9 $job 2>/dev/null; rm -rf "$dir"' EXIT
cd "$dir"
tiny_corpus
tiny_config long 1 0.1 1000000 20 >long.json
"${mpi[@]}" -np 2 "$bin" --threads 1 train --data corpus.txt --config long.json --out run >out.txt 2>err.txt &
job=$!
evaluations() { [[ -f run/metrics.jsonl ]] && wc -l <run/metrics.jsonl || echo 0; }
for _ in $(seq 1200); do (($(evaluations) >= 2)) && break; sleep 0.1; done  # checkpoints 20, 40: keep_last 1
(($(evaluations) >= 2)) || fail "no second checkpoint after 120 s"
victim=
for p in $(ps -o pid= --ppid "$job"); do  # mpirun's children are the ranks
  tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -x "OMPI_COMM_WORLD_RANK=1" >/dev/null && victim=$p
done
[[ -n $victim ]] || fail "rank 1 is not among mpirun's children"
kill -9 "$victim"
start=$SECONDS
while kill -0 "$job" 2>/dev/null && ((SECONDS - start < 60)); do sleep 0.2; done
if kill -0 "$job" 2>/dev/null; then fail "mpirun still runs 60 s after rank 1 was killed (a hang)"; fi
set +e
wait "$job"
status=$?
set -e
job=
echo "mpirun ended $((SECONDS - start)) s after rank 1 was killed, exit status $status"
((status != 0)) || fail "mpirun exited 0 after rank 1 was killed"
grep -q "process rank 1 with PID .* exited on signal 9" err.txt out.txt || fail "no message naming the killed rank"
# The newest checkpoint resumes and the run ends, 20 steps further.
last=$(ls run/checkpoint-*.safetensors | sed 's/.*checkpoint-\([0-9]*\)\.safetensors/\1/' | sort -n | tail -1)
set +e
"${mpi[@]}" -np 2 "$bin" --threads 1 train --resume run --steps $((last + 20)) >out.txt 2>err.txt
status=$?
set -e
((status == 0)) || fail "resuming from checkpoint-$last: exit status $status"
grep -qF "resuming from run/checkpoint-$last.safetensors: $last of $((last + 20)) steps done" out.txt ||
  fail "did not resume from checkpoint-$last"
grep -qF "model written to run/" out.txt || fail "the resumed run did not finish"
echo "killed after step 40; resumed from checkpoint-$last and finished"
