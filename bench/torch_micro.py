#!/usr/bin/python3
"""PyTorch's side of bench_micro (issue 7): the same ops and sizes, timed with torch.utils.benchmark-free
plain loops (median of repeats), one JSON line per benchmark with the name bench_micro uses. Elementwise ops
also report GB/s from process CPU time (GBps_cpu), as Google Benchmark's bytes_per_second does.
    /usr/bin/python3 bench/torch_micro.py --threads 1
"""
import argparse
import json
import statistics
import time

import torch
import torch.nn.functional as F


def timed(fn, min_time=0.3, repeats=5, clock=time.perf_counter):
    """Median seconds per call over `repeats` batches, each running at least min_time / repeats."""
    fn()
    n, t = 1, 0.0
    while True:  # calls per batch
        t0 = clock()
        for _ in range(n):
            fn()
        t = clock() - t0
        if t > min_time / repeats:
            break
        n *= 2
    per = []
    for _ in range(repeats):
        t0 = clock()
        for _ in range(n):
            fn()
        per.append((clock() - t0) / n)
    return statistics.median(per)


def emit(name, seconds, **extra):
    print(json.dumps({"impl": "pytorch", "name": name, "us": round(seconds * 1e6, 3), **extra}), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1)
    torch.set_num_threads(ap.parse_args().threads)
    torch.manual_seed(0)
    for n in (64, 128, 256, 512, 1024, 2048):
        a, b = torch.randn(n, n), torch.randn(n, n)
        s = timed(lambda: a @ b)
        emit(f"BM_matmul/{n}", s, GFLOPS=round(2 * n ** 3 / s * 1e-9, 2))
    for n in (1 << 20, 1 << 22, 1 << 24):
        a, b = torch.randn(n), torch.randn(n)
        for name, fn, nbytes in (("add", lambda: a + b, 12), ("mul", lambda: a * b, 12),
                                 ("gelu", lambda: F.gelu(a), 8),
                                 ("gelu_backward", lambda: torch.ops.aten.gelu_backward(a, b), 12)):
            s, c = timed(fn), timed(fn, clock=time.process_time)
            emit(f"BM_{name}/{n}", s, GBps=round(n * nbytes / s * 1e-9, 2), GBps_cpu=round(n * nbytes / c * 1e-9, 2))

    x = torch.randn(32 * 8 * 128, 128, requires_grad=True)
    dy = torch.randn_like(x)
    emit("BM_softmax_fwd_bwd", timed(lambda: torch.softmax(x, -1).backward(dy)))
    x = torch.randn(32, 4, 40, 40)
    lengths = torch.tensor([10 + 7 * b % 31 for b in range(32)])
    pad = (torch.arange(40).unsqueeze(0) >= lengths.unsqueeze(1)).reshape(32, 1, 1, 40)
    emit("BM_masked_softmax", timed(lambda: torch.softmax(x.masked_fill(pad, float("-inf")), -1)))
    x = torch.randn(32 * 128, 256, requires_grad=True)
    w, b = torch.ones(256, requires_grad=True), torch.zeros(256, requires_grad=True)
    dy = torch.randn_like(x)
    emit("BM_layer_norm_fwd_bwd", timed(lambda: F.layer_norm(x, (256,), w, b, 1e-5).backward(dy)))
    x = torch.randn(4096, 5000, requires_grad=True)
    t = torch.randint(0, 5000, (4096,))
    emit("BM_cross_entropy_fwd_bwd", timed(lambda: F.cross_entropy(x, t).backward()))

    x, w, b = (torch.randn(4, 4, requires_grad=True) for _ in range(3))
    links = 21

    def chain():
        y = x
        for _ in range(links):
            y = torch.tanh(y * w + b)
        y.sum().backward()

    s = timed(chain)
    emit("BM_autograd_overhead", s, ns_per_op=round(s / (3 * links + 1) * 1e9, 1))


if __name__ == "__main__":
    main()
