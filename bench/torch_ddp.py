#!/usr/bin/python3
"""Data-parallel training benchmark in PyTorch (issue 27), the twin of bench_ddp (bench/ddp.cpp): torch_gpt.py's
GPT and training step under torch.nn.parallel.DistributedDataParallel over Gloo, N processes of 1 thread
(torch.multiprocessing; each pinned to core rank mod cores, as mpirun binds bench_ddp's ranks). One JSON line
from rank 0. Run with Debian's /usr/bin/python3 (PyTorch 1.13):
    /usr/bin/python3 bench/torch_ddp.py --ranks 2 --config default --steps 20 --warmup 3 [--bucket-bytes N]
Weak scaling, as bench_ddp: every rank trains on a batch of the config's size. --bucket-bytes sets DDP's
bucket_cap_mb (default 25 MB; PyTorch caps its first bucket at 1 MB all the same). The wait is the gradients'
communication after the backward's compute: DDP's own runtime statistics (sampled every step), from the
moment every gradient is ready to the end of the last bucket's allreduce.
"""
import argparse
import json
import os
import socket
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn import functional as F
from torch.nn.parallel import DistributedDataParallel

sys.dont_write_bytecode = True  # no __pycache__ next to the sources for the imports below
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_gpt import CONFIGS, Gpt  # noqa: E402


def median(v):
    return sorted(v)[len(v) // 2]


def last_wait_ms(ddp):
    """The previous step's wait (ms), from DDP's runtime statistics, which a forward records for the step
    before it: from the end of the backward's compute (every gradient ready) to the end of the communication."""
    d = ddp._get_ddp_logging_data()
    return (d["backward_comm_time_end"] - d["backward_compute_time_end"]) / 1e6


def worker(rank, world, a, port):
    os.sched_setaffinity(0, {rank % os.cpu_count()})
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    m, B = CONFIGS[a.config]
    T, V = m["block_size"], m["vocab_size"]
    torch.manual_seed(0)
    model = Gpt(m).train()
    ddp = DistributedDataParallel(model, bucket_cap_mb=a.bucket_bytes / 2**20)
    ddp._set_ddp_runtime_logging_sample_rate(1)
    opt = torch.optim.AdamW(ddp.parameters(), lr=1e-3, betas=(0.9, 0.95), weight_decay=0.1)
    gen = torch.Generator().manual_seed(rank + 1)
    ids, targets = torch.randint(0, V, (B, T), generator=gen), torch.randint(0, V, (B * T,), generator=gen)
    step_ms, wait_ms = [], []
    for i in range(a.warmup + a.steps + 1):  # one more forward: DDP records a step's statistics at the next
        if i == a.warmup:
            dist.barrier()
            timed_from = time.perf_counter()
        t0 = time.perf_counter()
        logits = ddp(ids)
        if i > a.warmup:
            wait_ms.append(last_wait_ms(ddp))
        if i == a.warmup + a.steps:
            break
        loss = F.cross_entropy(logits.reshape(B * T, V), targets)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(ddp.parameters(), 1.0)
        opt.step()
        if i >= a.warmup:
            step_ms.append((time.perf_counter() - t0) * 1e3)
            timed_to = time.perf_counter()
    waits = [None] * world
    dist.all_gather_object(waits, median(wait_ms))
    d = ddp._get_ddp_logging_data()
    buckets = d.get("rebuilt_bucket_sizes", d["bucket_sizes"])
    if rank == 0:
        print(json.dumps({"impl": "pytorch", "bench": "ddp", "config": a.config, "ranks": world, "threads": 1,
                          "batch_per_rank": B, "steps": a.steps, "bucket_bytes": a.bucket_bytes,
                          "buckets": len(buckets.split(",")),
                          "params": sum(p.numel() for p in model.parameters()),
                          "step_ms": round(median(step_ms), 3),
                          "samples_per_s": round(world * B * a.steps / (timed_to - timed_from), 2),
                          "wait_ms": round(waits[0], 3), "wait_ms_max_rank": round(max(waits), 3),
                          "torch": torch.__version__}), flush=True)
    # Out without the destructors: Gloo's process group and DDP's reducer, torn down as the worker returns,
    # hung in 3 of 4 runs at np=2 here (PyTorch 1.13).
    dist.barrier()
    os._exit(0)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--config", default="default", choices=sorted(CONFIGS))
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--bucket-bytes", type=int, default=25 << 20)
    a = ap.parse_args()
    if a.ranks < 1 or a.steps < 1 or a.warmup < 0 or a.bucket_bytes < 1:
        ap.error(f"--ranks {a.ranks}, --steps {a.steps} and --bucket-bytes {a.bucket_bytes} must be >= 1, "
                 f"--warmup {a.warmup} >= 0")
    mp.spawn(worker, args=(a.ranks, a, free_port()), nprocs=a.ranks)


if __name__ == "__main__":
    main()
