# Sourced by the command-line tests (tests/*/cli_test.sh): `expect` runs the program under test, $bin, with
# one thread and checks its exit status and output; `fail` stops the test showing that output.
# out.txt and err.txt, in the current directory, hold the last run's stdout and stderr.

fail() { echo "FAIL: $*"; cat out.txt err.txt; exit 1; }
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
