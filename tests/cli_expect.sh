# Sourced by the command-line tests (tests/*/cli_test.sh): `expect` runs the program under test, $bin, with
# one thread and checks its exit status and output; `mpirun_expect` the same under mpirun (the launcher and
# its flags in the array $mpi); `fail` stops the test showing that output.
# out.txt and err.txt, in the current directory, hold the last run's stdout and stderr.

fail() { echo "FAIL: $*"; cat out.txt err.txt; exit 1; }
# Under `set -e`, a failing command outside these helpers would end the test silently: name it.
trap 'err_status=$?; [[ $- == *e* ]] && echo "FAIL: line $LINENO: exit status $err_status: $BASH_COMMAND"' ERR
# expect STATUS TEXT args...: runs `$bin --threads 1 args...`, checks the exit status and that TEXT is in its output.
expect() {
  local status=$1 text=$2 name
  name=$(basename "$bin")
  shift 2
  set +e
  "$bin" --threads 1 "$@" >out.txt 2>err.txt
  local got=$?
  set -e
  [[ $got == "$status" ]] || fail "$name $*: exit status $got, expected $status"
  grep -qF -- "$text" out.txt err.txt || fail "$name $*: no '$text' in the output"
}
# mpirun_expect STATUS TEXT NP THREADS args...: as expect, under `${mpi[@]} -np NP` with THREADS threads per rank.
mpirun_expect() {
  local status=$1 text=$2 np=$3 threads=$4 name got
  name=$(basename "$bin")
  shift 4
  set +e
  "${mpi[@]}" -np "$np" "$bin" --threads "$threads" "$@" >out.txt 2>err.txt
  got=$?
  set -e
  [[ $got == "$status" ]] || fail "mpirun -np $np $name $*: exit status $got, expected $status"
  grep -qF -- "$text" out.txt err.txt || fail "mpirun -np $np $name $*: no '$text' in the output"
}
