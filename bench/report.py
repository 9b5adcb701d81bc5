#!/usr/bin/python3
"""Prints bench/run.sh's results as markdown tables with tensorgrad / PyTorch ratios (speed-ups: > 1 means
tensorgrad is faster). Usage: /usr/bin/python3 bench/report.py /tmp/tensorgrad-bench [section ...]
with sections among gpt, step, micro, layers, sentiment and ddp (default: every one whose results are there)."""
import json
import sys
from pathlib import Path


def lines(path):
    return [json.loads(l) for l in Path(path).read_text().splitlines() if l.strip().startswith("{")]


def by_impl(rows, key):
    """tensorgrad's and PyTorch's rows, each side's keyed by key(row)."""
    return ({key(r): r for r in rows if r["impl"] == "tensorgrad"}, {key(r): r for r in rows if r["impl"] == "pytorch"})


def main():
    out = Path(sys.argv[1])
    tables = {"gpt": (gpt_tables, "gpt.jsonl"), "step": (step_table, "step.jsonl"), "micro": (micro_table, "micro.json"),
              "layers": (layers_table, "layers.jsonl"), "sentiment": (sentiment_table, "sentiment.jsonl"),
              "ddp": (ddp_table, "ddp.jsonl")}
    for name in sys.argv[2:] or tables:
        table, results = tables[name]
        if (out / results).exists():
            table(out)


def step_table(out):
    print("### Training step (forward + backward + Adam), median ms\n")
    step_rows_table(lines(out / "step.jsonl"), "SML")


def step_rows_table(rows, order):
    """Training-step rows (config, threads, median_ms, cpu_ms, rss_mb of both sides) as a markdown table, the
    configs in the given order."""
    tg, pt = by_impl(rows, lambda r: (r["config"], r["threads"]))
    print("CPU time is the process's (all threads); on a loaded machine it is the steadier measure.\n")
    print("| config | threads | tensorgrad ms | PyTorch ms | speed-up | tensorgrad CPU ms | PyTorch CPU ms | CPU speed-up"
          " | tensorgrad RSS MB | PyTorch RSS MB | RSS ratio |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for k in sorted(tg, key=lambda k: (k[1], list(order).index(k[0]))):
        if k in pt:
            a, b = tg[k], pt[k]
            print(f"| {k[0]} | {k[1]} | {a['median_ms']:.1f} | {b['median_ms']:.1f} | {b['median_ms'] / a['median_ms']:.2f}x"
                  f" | {a['cpu_ms']:.1f} | {b['cpu_ms']:.1f} | {b['cpu_ms'] / a['cpu_ms']:.2f}x"
                  f" | {a['rss_mb']:.0f} | {b['rss_mb']:.0f} | {a['rss_mb'] / b['rss_mb']:.2f} |")


def gpt_tables(out):
    rows = lines(out / "gpt.jsonl")
    print("### GPT training step (forward + backward + clip + AdamW), median ms\n")
    step_rows_table([r for r in rows if r["bench"] == "gpt_step"], ["default", "nano"])
    gen = {(r["impl"], r["mode"]): r for r in rows if r["bench"] == "gpt_generate"}
    print("\n### GPT generation, context 256 (nano config, 1 thread), tokens/s\n")
    print("| algorithm | tensorgrad | PyTorch | speed-up | tensorgrad CPU | PyTorch CPU | CPU speed-up |")
    print("|---|---|---|---|---|---|---|")
    for m in ("cache", "nocache"):
        if ("tensorgrad", m) in gen and ("pytorch", m) in gen:
            a, b = gen["tensorgrad", m], gen["pytorch", m]
            print(f"| {m} | {a['tokens_per_s']:.0f} | {b['tokens_per_s']:.0f} | {a['tokens_per_s'] / b['tokens_per_s']:.2f}x"
                  f" | {a['cpu_tokens_per_s']:.0f} | {b['cpu_tokens_per_s']:.0f}"
                  f" | {a['cpu_tokens_per_s'] / b['cpu_tokens_per_s']:.2f}x |")
    for impl in ("tensorgrad", "pytorch"):
        if (impl, "cache") in gen and (impl, "nocache") in gen:
            a, b = gen[impl, "cache"], gen[impl, "nocache"]
            print(f"\n{impl}: the KV cache is {a['tokens_per_s'] / b['tokens_per_s']:.2f}x as fast as rerunning the prefix"
                  f" ({a['cpu_tokens_per_s'] / b['cpu_tokens_per_s']:.2f}x in CPU time).")


def micro_table(out):
    micro = json.loads((out / "micro.json").read_text())
    # The medians of run.sh's repetitions, under the benchmarks' own names (single runs as they are).
    medians = {b["run_name"]: b for b in micro["benchmarks"] if b.get("aggregate_name") == "median"}
    ours = medians or {b["name"]: b for b in micro["benchmarks"] if b.get("run_type", "iteration") == "iteration"}
    torch = {r["name"]: r for r in lines(out / "torch_micro.jsonl")}
    print("\n### Micro-benchmarks (1 thread)\n")
    print("| benchmark | tensorgrad | reference | ratio |")
    print("|---|---|---|---|")
    for n in (64, 128, 256, 512, 1024, 2048):
        a, r = ours.get(f"BM_matmul/{n}"), ours.get(f"BM_sgemm_raw/{n}")
        if a and r:
            t = torch.get(f"BM_matmul/{n}", {}).get("GFLOPS", float("nan"))
            print(f"| matmul {n} GFLOP/s | {a['GFLOPS']:.1f} | raw sgemm {r['GFLOPS']:.1f}, PyTorch {t:.1f}"
                  f" | {a['GFLOPS'] / r['GFLOPS']:.2f} of sgemm |")
    for op in ("add", "mul", "gelu", "gelu_backward"):
        for n in (1 << 20, 1 << 22, 1 << 24):
            a, m = ours.get(f"BM_{op}/{n}"), ours.get(f"BM_memcpy/{n}")
            if a and m:
                r = torch.get(f"BM_{op}/{n}", {})  # CPU time, as ours (Google Benchmark's rates)
                t = r.get("GBps_cpu", r.get("GBps", float("nan")))
                print(f"| {op} {n >> 20}M GB/s | {a['bytes_per_second'] / 1e9:.1f} | memcpy {m['bytes_per_second'] / 1e9:.1f},"
                      f" PyTorch {t:.1f} | {a['bytes_per_second'] / m['bytes_per_second']:.2f} of memcpy |")
    for name in ("BM_softmax_fwd_bwd", "BM_masked_softmax", "BM_layer_norm_fwd_bwd", "BM_cross_entropy_fwd_bwd"):
        if name in ours and name in torch:
            a = ours[name]["real_time"]
            print(f"| {name[3:]} µs | {a:.0f} | PyTorch {torch[name]['us']:.0f} | {torch[name]['us'] / a:.2f}x speed-up |")
    if "BM_autograd_overhead" in ours and "BM_autograd_overhead" in torch:
        a, b = ours["BM_autograd_overhead"]["ns_per_op"], torch["BM_autograd_overhead"]["ns_per_op"]
        print(f"| autograd ns/op (4×4, record + backward) | {a:.0f} | PyTorch {b:.0f} | {b / a:.2f}x speed-up |")


def layers_table(out):
    tg, pt = by_impl(lines(out / "layers.jsonl"), lambda r: (r["name"], r["threads"]))
    print("\n### Layers, forward + backward (issue 25), median ms\n")
    print("conv2d_digits1/2: the digits network's convolutions (batch 32: 1→16 channels on 8×8, 16→32 on 4×4);"
          " conv2d_resnet: batch 32, 64→64 channels, 32×32, 3×3; lstm: T 64, batch 32, input and hidden 256.\n")
    print("| layer | threads | tensorgrad ms | PyTorch ms | speed-up | tensorgrad CPU ms | PyTorch CPU ms | CPU speed-up |")
    print("|---|---|---|---|---|---|---|---|")
    for k in sorted(tg, key=lambda k: (k[1], k[0])):
        if k in pt:
            a, b = tg[k], pt[k]
            print(f"| {k[0]} | {k[1]} | {a['median_ms']:.2f} | {b['median_ms']:.2f} | {b['median_ms'] / a['median_ms']:.2f}x"
                  f" | {a['cpu_ms']:.2f} | {b['cpu_ms']:.2f} | {b['cpu_ms'] / a['cpu_ms']:.2f}x |")


def sentiment_table(out):
    s = lines(out / "sentiment.jsonl")
    print("\n### Sentiment reference configuration, seconds per epoch (median)\n")
    print("| threads | tensorgrad s | PyTorch s | speed-up |")
    print("|---|---|---|---|")
    for t in sorted({r["threads"] for r in s}):
        a = [r for r in s if r["threads"] == t and r["impl"] == "tensorgrad"]
        b = [r for r in s if r["threads"] == t and r["impl"] == "pytorch"]
        if a and b:
            print(f"| {t} | {a[-1]['seconds']:.2f} | {b[-1]['seconds']:.2f} | {b[-1]['seconds'] / a[-1]['seconds']:.2f}x |")


def ddp_table(out):
    """Data-parallel GPT training (issue 27): per bucket size and rank count, each side's medians over the
    rounds of its step, throughput and allreduce wait (rank 0's, the largest rank's); the speed-up over np=1 is
    the median of each round's ratio to the np=1 run just before it (the machine's speed drifts between rounds)."""
    groups, ratios, last_one = {}, {}, {}
    for r in lines(out / "ddp.jsonl"):
        key = (r["impl"], r["bucket_bytes"], r["ranks"])
        groups.setdefault(key, []).append(r)
        if r["ranks"] == 1:
            last_one[key[:2]] = r["samples_per_s"]
        elif key[:2] in last_one:
            ratios.setdefault(key, []).append(r["samples_per_s"] / last_one[key[:2]])

    def med(v):
        v = sorted(v)
        return v[len(v) // 2]

    rounds = max(len(v) for v in groups.values())
    print(f"\n### Data-parallel GPT default, np ranks of 1 thread, batch 32 per rank (medians of {rounds} rounds)\n")
    print("Wait: rank 0's median ms / the largest rank's; tensorgrad: DDP's finish() until every allreduce is done,"
          " PyTorch: from the last gradient ready to the end of the communication (DDP's runtime statistics)."
          " vs np=1: each round's samples/s over its np=1 run's, median (the range in brackets).\n")
    print("| bucket | ranks | tensorgrad step ms | samples/s | vs np=1 | wait ms | buckets"
          " | PyTorch step ms | samples/s | vs np=1 | wait ms | buckets | samples/s tensorgrad / PyTorch |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for bucket in sorted({k[1] for k in groups}, reverse=True):
        for ranks in sorted({k[2] for k in groups if k[1] == bucket}):
            cells, rates = [], []
            for impl in ("tensorgrad", "pytorch"):
                rows = groups.get((impl, bucket, ranks))
                if not rows:
                    cells.append(" | | | | ")
                    continue
                rates.append(med(r["samples_per_s"] for r in rows))
                q = ratios.get((impl, bucket, ranks))
                scale = f"{med(q):.2f}x ({min(q):.2f}-{max(q):.2f})" if q else "1.00x"
                cells.append(f"{med(r['step_ms'] for r in rows):.1f} | {rates[-1]:.1f} | {scale}"
                             f" | {med(r['wait_ms'] for r in rows):.1f} / {med(r['wait_ms_max_rank'] for r in rows):.1f}"
                             f" | {med(r['buckets'] for r in rows)}")
            ratio = f"{rates[0] / rates[1]:.2f}x" if len(rates) == 2 else ""
            size = f"{bucket / 2**20:.0f} MB" if bucket >= 2**20 else f"{bucket / 1e3:.0f} kB"
            print(f"| {size} | {ranks} | {cells[0]} | {cells[1]} | {ratio} |")

if __name__ == "__main__":
    main()
