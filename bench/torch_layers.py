#!/usr/bin/python3
"""Layer benchmarks in PyTorch (issue 25), the twin of bench_layers: forward + backward of Conv2d at the digits
example's two shapes and at a ResNet-like one, and of an LSTM; one JSON line per case with the median time.
Run with Debian's /usr/bin/python3 (PyTorch 1.13), OPENBLAS_CORETYPE set as for tensorgrad:
    /usr/bin/python3 bench/torch_layers.py --threads 1 --steps 20 --warmup 3 [--only conv2d_digits1,conv2d_digits2]
"""
import argparse
import json
import time

import torch
from torch import nn


def conv_step(n, c_in, c_out, hw, input_grad):
    """y = conv(x), y.backward(dy) with a fixed random dy; x requires grad unless it is the network's input."""
    conv = nn.Conv2d(c_in, c_out, 3, padding=1)
    x = torch.randn(n, c_in, hw, hw, requires_grad=input_grad)
    dy = torch.randn(n, c_out, hw, hw)

    def step():
        conv(x).backward(dy)
        conv.zero_grad(set_to_none=True)
        x.grad = None

    return step


def lstm_step(t, b, input_size, hidden):
    """LSTM (T, B, input) -> (T, B, H), time-major (PyTorch's default); the output's gradient a fixed random dy."""
    lstm = nn.LSTM(input_size, hidden)
    x = torch.randn(t, b, input_size, requires_grad=True)
    dy = torch.randn(t, b, hidden)

    def step():
        lstm(x)[0].backward(dy)
        lstm.zero_grad(set_to_none=True)
        x.grad = None

    return step


# bench/layers.cpp's cases: the digits network's convolutions at its batch of 32, the ResNet-like shape, the LSTM.
CASES = {
    "conv2d_digits1": lambda: conv_step(32, 1, 16, 8, False),
    "conv2d_digits2": lambda: conv_step(32, 16, 32, 4, True),
    "conv2d_resnet": lambda: conv_step(32, 64, 64, 32, True),
    "lstm": lambda: lstm_step(64, 32, 256, 256),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--only", default="", help="comma-separated case names (default: all)")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    only = set(a.only.split(",")) - {""}
    for name, make in CASES.items():
        if only and name not in only:
            continue
        torch.manual_seed(0)
        step = make()
        ms, cpu = [], []  # wall and process CPU time (the steadier on a loaded machine)
        for i in range(a.warmup + a.steps):
            t0, c0 = time.perf_counter(), time.process_time()
            step()
            if i >= a.warmup:
                ms.append((time.perf_counter() - t0) * 1e3)
                cpu.append((time.process_time() - c0) * 1e3)
        ms.sort()
        cpu.sort()
        print(json.dumps({"impl": "pytorch", "name": name, "threads": a.threads, "steps": a.steps,
                          "median_ms": round(ms[len(ms) // 2], 3), "min_ms": round(ms[0], 3),
                          "cpu_ms": round(cpu[len(cpu) // 2], 3), "torch": torch.__version__}), flush=True)


if __name__ == "__main__":
    main()
