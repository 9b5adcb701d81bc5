#!/usr/bin/python3
"""Training-step benchmark in PyTorch (issue 7), the twin of bench_step: forward + backward + Adam step of
config S, M or L on synthetic token ids; prints one JSON line with the median step time and peak RSS.
Run with Debian's /usr/bin/python3 (PyTorch 1.13), OPENBLAS_CORETYPE set as for tensorgrad:
    /usr/bin/python3 bench/torch_step.py --config S --threads 1 --steps 20 --warmup 3
"""
import argparse
import json
import resource
import time

import torch
from torch import nn

CONFIGS = {  # batch, seq, d_model, heads, ffn, layers, vocab (bench/configs.h)
    "S": (32, 32, 64, 4, 128, 2, 5000),
    "M": (32, 128, 256, 8, 1024, 4, 5000),
    "L": (16, 256, 512, 8, 2048, 6, 5000),
}


class StepModel(nn.Module):
    def __init__(self, B, S, D, H, F, L, V):
        super().__init__()
        self.tokens = nn.Embedding(V, D)
        self.positions = nn.Embedding(S, D)
        layer = nn.TransformerEncoderLayer(D, H, F, dropout=0.1, activation="relu", batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, L, enable_nested_tensor=False)
        self.head = nn.Linear(D, 2)

    def forward(self, ids):
        pos = torch.arange(ids.shape[1])
        return self.head(self.encoder(self.tokens(ids) + self.positions(pos)).mean(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", default="S")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    c = CONFIGS[a.config]
    model = StepModel(*c).train()
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    ids = torch.randint(0, c[6], (c[0], c[1]))
    labels = torch.randint(0, 2, (c[0],))
    ms, cpu = [], []  # wall and process CPU time (the steadier on a loaded machine)
    for i in range(a.warmup + a.steps):
        t0, c0 = time.perf_counter(), time.process_time()
        loss = nn.functional.cross_entropy(model(ids), labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if i >= a.warmup:
            ms.append((time.perf_counter() - t0) * 1e3)
            cpu.append((time.process_time() - c0) * 1e3)
    ms.sort()
    cpu.sort()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"impl": "pytorch", "config": a.config, "threads": a.threads, "steps": a.steps,
                      "median_ms": round(ms[len(ms) // 2], 3), "min_ms": round(ms[0], 3), "cpu_ms": round(cpu[len(cpu) // 2], 3), "rss_mb": round(rss, 1),
                      "torch": torch.__version__}))


if __name__ == "__main__":
    main()
