# Sourced by the gpt command-line tests: tiny_corpus writes corpus.txt, 60 documents in the fortune format, and
# splits.txt, every 6th document validation and the one after it test, into the current directory;
# tiny_config prints a config for them.
tiny_corpus() {
  local words=(the cat sat on a mat and dog ran to big red sun was warm) i
  for i in $(seq 0 59); do
    printf '%s %s %s %s.\n' "${words[i % 15]}" "${words[(i * 7) % 15]}" "${words[(i * 3 + 1) % 15]}" "${words[(i + 4) % 15]}"
    ((i % 4)) || printf '\t\t-- Anon\n'
    printf '%%\n'
    case $((i % 6)) in 0) echo valid >&3 ;; 1) echo test >&3 ;; *) echo train >&3 ;; esac
  done >corpus.txt 3>splits.txt
}

# tiny_config NAME NUM_LAYERS DROPOUT MAX_STEPS EVAL_INTERVAL [MUON_LR]: a config of a 16-wide model with 2 heads
# and a context of 16, trained at batch 8 with warmup 5 and decay over MAX_STEPS, by AdamW (MUON_LR 0, the
# default) or Muon for the blocks' matrices.
tiny_config() {
  cat <<JSON
{"name": "$1", "model": {"block_size": 16, "d_model": 16, "num_heads": 2, "num_layers": $2, "dim_feedforward": 32,
 "dropout": $3},
 "train": {"max_steps": $4, "batch_size": 8, "lr": 0.01, "min_lr": 0.001, "warmup_steps": 5, "decay_steps": $4,
 "weight_decay": 0.1, "muon_lr": ${6:-0}, "clip_grad_norm": 1.0, "eval_interval": $5, "eval_stride": 8}}
JSON
}
