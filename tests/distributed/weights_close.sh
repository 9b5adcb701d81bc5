# Sourced by the gpt mpirun tests: `weights_close A B TOL [PATTERN FROM TO]` fails unless two safetensors
# files of one model (the same header) hold f32 weights that differ by at most TOL, leaving out elements
# [FROM, TO) of every tensor whose name matches PATTERN (grep -E); prints the largest difference. Coreutils and
# awk only: the header's length is the file's first 8 bytes (little-endian), the weights follow it.
weights_close() {
  local a=$1 b=$2 tol=$3 pattern=${4:-} from=${5:-0} to=${6:-0} na nb skip=""
  na=$(od -An -t u8 -N8 "$a" | tr -d ' ') nb=$(od -An -t u8 -N8 "$b" | tr -d ' ')
  [[ $na == "$nb" ]] && cmp -s <(head -c $((8 + na)) "$a") <(head -c $((8 + nb)) "$b") ||
    fail "$a and $b hold different tensors (their headers differ)"
  if [[ -n $pattern ]]; then  # the byte offsets of each matching tensor: "name":{...,"data_offsets":[begin,end]}
    skip=$(head -c $((8 + na)) "$a" | tail -c "$na" | grep -oE "\"[^\"]*\":\{[^}]*\}" | grep -E "^\"[^\"]*($pattern)" |
      grep -oE '"data_offsets":\[[0-9]+' | grep -oE '[0-9]+$' | tr '\n' ' ')
    [[ -n $skip ]] || fail "no tensor of $a matches '$pattern'"
  fi
  paste <(od -An -v -w4 -t f4 -j $((8 + na)) "$a") <(od -An -v -w4 -t f4 -j $((8 + nb)) "$b") |
    awk -v tol="$tol" -v what="$a vs $b" -v skip="$skip" -v from="$from" -v to="$to" '
      BEGIN { k = split(skip, starts, " ") }
      { i = NR - 1; for (j = 1; j <= k; ++j) if (i >= starts[j] / 4 + from && i < starts[j] / 4 + to) { left++; next }
        d = $1 - $2; if (d < 0) d = -d; if (d > m) m = d; n++ }
      END { printf "%s: %d weights (%d left out), largest difference %.3g\n", what, n, left, m
            exit !(n > 0 && m <= tol) }' || fail "$a and $b differ by more than $tol"
}
