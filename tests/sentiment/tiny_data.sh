# Sourced by the sentiment command-line tests: tiny_sentences writes data.tsv, 60 made-up labelled sentences
# ("the film N was great" 1, "... was dull" 0, alternating), into the current directory.
tiny_sentences() {
  local i
  printf 'text\tlabel\n' >data.tsv
  for i in $(seq 0 59); do
    if ((i % 2)); then printf 'the film %d was dull\t0\n' $((i % 7)); else printf 'the film %d was great\t1\n' $((i % 7)); fi
  done >>data.tsv
}
