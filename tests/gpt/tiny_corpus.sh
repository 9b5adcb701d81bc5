# Sourced by the gpt command-line tests: tiny_corpus writes corpus.txt, 60 documents in the fortune format, and
# splits.txt, every 6th document validation and the one after it test, into the current directory.
tiny_corpus() {
  local words=(the cat sat on a mat and dog ran to big red sun was warm) i
  for i in $(seq 0 59); do
    printf '%s %s %s %s.\n' "${words[i % 15]}" "${words[(i * 7) % 15]}" "${words[(i * 3 + 1) % 15]}" "${words[(i + 4) % 15]}"
    ((i % 4)) || printf '\t\t-- Anon\n'
    printf '%%\n'
    case $((i % 6)) in 0) echo valid >&3 ;; 1) echo test >&3 ;; *) echo train >&3 ;; esac
  done >corpus.txt 3>splits.txt
}
