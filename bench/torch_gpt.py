#!/usr/bin/python3
"""GPT benchmark in PyTorch (issue 24), the twin of bench_gpt (bench/gpt.cpp), with the same model
(examples/gpt/torch_check.py's Gpt: torch.nn's pre-norm GELU TransformerEncoder with a causal mask, tied
output projection). One JSON line per run. Run with Debian's /usr/bin/python3 (PyTorch 1.13):
    /usr/bin/python3 bench/torch_gpt.py --config default --threads 1 --steps 20 --warmup 3
    /usr/bin/python3 bench/torch_gpt.py --generate cache|nocache --threads 1 --reps 3
Generation is greedy, 255 tokens after one with the nano config (context 256), eval mode: "cache" keeps
each layer's keys and values (the attention written here in Python on the layer's own parameters) and runs
only the new token; "nocache" reruns the model over the whole prefix for each token.
"""
import argparse
import json
import math
import os
import resource
import sys
import time

import torch
from torch.nn import functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "gpt"))
from torch_check import Gpt  # noqa: E402

CONFIGS = {  # bench/gpt_configs.h: model, batch
    "default": (dict(vocab_size=116, block_size=128, d_model=128, num_heads=4, num_layers=4, dim_feedforward=512,
                     dropout=0.0), 32),
    "nano": (dict(vocab_size=65, block_size=256, d_model=384, num_heads=6, num_layers=6, dim_feedforward=1536,
                  dropout=0.2), 16),
}


def clocks():
    return time.perf_counter() * 1e3, time.process_time() * 1e3


def train(name, threads, steps, warmup):
    m, B = CONFIGS[name]
    T, V = m["block_size"], m["vocab_size"]
    model = Gpt(m).train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, betas=(0.9, 0.95), weight_decay=0.1)
    ids, targets = torch.randint(0, V, (B, T)), torch.randint(0, V, (B * T,))
    ms, cpu = [], []
    for i in range(warmup + steps):
        w0, c0 = clocks()
        loss = F.cross_entropy(model(ids).reshape(B * T, V), targets)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        w1, c1 = clocks()
        if i >= warmup:
            ms.append(w1 - w0), cpu.append(c1 - c0)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"impl": "pytorch", "bench": "gpt_step", "config": name, "threads": threads, "steps": steps,
                      "median_ms": round(sorted(ms)[len(ms) // 2], 3), "cpu_ms": round(sorted(cpu)[len(cpu) // 2], 3),
                      "rss_mb": round(rss, 1), "torch": torch.__version__}))


def cached_logits(model, tokens, done, cache):
    """Logits (V) after tokens, running tokens[done:] against each layer's cached keys and values."""
    n = len(tokens) - done
    x = model.token_embedding(torch.tensor(tokens[done:])) + model.position.weight[done:len(tokens)]  # (n, E)
    for layer, kv in zip(model.decoder.layers, cache):
        a = layer.self_attn
        E, H = x.shape[-1], a.num_heads
        q, k, v = F.linear(layer.norm1(x), a.in_proj_weight, a.in_proj_bias).split(E, -1)
        q, k, v = (t.reshape(n, H, E // H).transpose(0, 1) for t in (q, k, v))  # (H, n, d)
        if kv:
            k, v = torch.cat([kv[0], k], 1), torch.cat([kv[1], v], 1)
        kv[:] = [k, v]
        scores = q @ k.transpose(1, 2) / math.sqrt(E // H)  # (H, n, done + n)
        if n > 1:
            scores = scores.masked_fill(torch.ones(n, done + n, dtype=torch.bool).triu(done + 1), float("-inf"))
        x = x + a.out_proj((scores.softmax(-1) @ v).transpose(0, 1).reshape(n, E))
        x = x + layer.linear2(F.gelu(layer.linear1(layer.norm2(x))))
    return (model.decoder.norm(x) @ model.token_embedding.weight.T)[-1]


def generate(mode, threads, reps):
    m, _ = CONFIGS["nano"]
    model = Gpt(m).eval()
    new_tokens = m["block_size"] - 1
    ms, cpu = [], []
    with torch.no_grad():
        for _ in range(reps):
            tokens, cache = [0], [[] for _ in model.decoder.layers]
            w0, c0 = clocks()
            for _ in range(new_tokens):
                if mode == "cache":
                    logits = cached_logits(model, tokens, len(tokens) - 1 if cache[0] else 0, cache)
                else:
                    logits = model(torch.tensor([tokens]))[0, -1]
                tokens.append(int(logits.argmax()))
            w1, c1 = clocks()
            ms.append(w1 - w0), cpu.append(c1 - c0)
    print(json.dumps({"impl": "pytorch", "bench": "gpt_generate", "mode": mode, "threads": threads,
                      "tokens": new_tokens, "tokens_per_s": round(new_tokens * 1e3 / sorted(ms)[len(ms) // 2], 1),
                      "cpu_tokens_per_s": round(new_tokens * 1e3 / sorted(cpu)[len(cpu) // 2], 1)}))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", default="default", choices=sorted(CONFIGS))
    ap.add_argument("--generate", choices=["cache", "nocache"])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    if a.generate:
        generate(a.generate, a.threads, a.reps)
    else:
        train(a.config, a.threads, a.steps, a.warmup)


if __name__ == "__main__":
    main()
