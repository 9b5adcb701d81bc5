#!/usr/bin/env python3
"""Paired cross-validation of sentiment configurations: several seeds per fold, candidate against baseline.

Usage:
    python3 examples/sentiment/cv_files.py runs/cv                    # the 5 fold files (training sentences only)
    python3 examples/sentiment/cv_paired.py --cv runs/cv --results runs/cv/results.txt \\
        --config base=base.json --config bigram=bigram.json --seeds 10,20,30 [--jobs 2]

Each NAME=CONFIG.json is trained on every fold k (f<k>.tsv) with every seed s0 + k (s0 from --seeds), by
`sentiment --threads 1 train` under `nice -n 5`, at most --jobs runs at a time; each run's fold accuracy
(its "test set", which is fold k) and CPU seconds are appended to --results as "NAME FOLD SEED ACC USER SYS",
and runs already there are skipped, so an interrupted comparison resumes. Then, for every configuration
after the first (the baseline), the per-fold/per-seed accuracies and the paired differences with the
baseline (same fold and seed): their mean, the standard error of that mean over the pairs, and the mean per
fold. One run per fold moves by about 1.7 points from its random draws alone (RESULTS.md, sixth round),
hence several seeds per fold and paired differences.
"""
import argparse
import math
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BINARY = ROOT / "build" / "examples" / "sentiment" / "sentiment"


def read_results(path):
    """{(name, fold, seed): accuracy} from the results file (absent: empty)."""
    out = {}
    if path.exists():
        for line in path.read_text().splitlines():
            f = line.split()
            if len(f) >= 4:
                out[(f[0], int(f[1]), int(f[2]))] = float(f[3])
    return out


def train(binary, cv, name, config, fold, seed):
    """One run: its fold accuracy and "USER SYS" CPU seconds."""
    with tempfile.TemporaryDirectory() as out:
        cmd = ["/usr/bin/time", "-f", "%U %S", "-o", f"{out}/time", "nice", "-n", "5", str(binary), "--threads", "1",
               "train", "--data", str(cv / f"f{fold}.tsv"), "--config", config, "--seed", str(seed), "--out", f"{out}/m"]
        log = subprocess.run(cmd, capture_output=True, text=True)
        if log.returncode != 0:
            raise RuntimeError(f"{name} fold {fold} seed {seed}: {log.stdout[-500:]}{log.stderr[-500:]}")
        lines = log.stdout.splitlines()
        at = next(i for i, l in enumerate(lines) if l.startswith("test set"))  # then "accuracy 0.8083 ..."
        return float(lines[at + 1].split()[1]), Path(f"{out}/time").read_text().strip()


def mean_se(xs):
    m = sum(xs) / len(xs)
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1)) if len(xs) > 1 else float("nan")
    return m, sd / math.sqrt(len(xs))


def report(results, names, folds, seeds):
    wanted = {(k, s0 + k) for k in folds for s0 in seeds}
    for name in names:
        runs = {(k, s): a for (n, k, s), a in results.items() if n == name and (k, s) in wanted}
        print(f"{name}: mean {mean_se(list(runs.values()))[0]:.4f} over {len(runs)} runs")
        for k in folds:
            print(f"  fold {k}: " + " ".join(f"seed {s0 + k} {runs[(k, s0 + k)]:.4f}" for s0 in seeds if (k, s0 + k) in runs))
        if name == names[0]:
            continue
        base = {(k, s): a for (n, k, s), a in results.items() if n == names[0] and (k, s) in wanted}
        pairs = sorted(p for p in runs if p in base)
        if not pairs:
            continue
        d = [100 * (runs[p] - base[p]) for p in pairs]
        m, se = mean_se(d)
        per_fold = [mean_se([100 * (runs[p] - base[p]) for p in pairs if p[0] == k])[0] for k in folds
                    if any(p[0] == k for p in pairs)]
        # Pairs on one fold share its sentences, so the SE over the fold means is the more cautious one.
        print(f"  vs {names[0]}, {len(d)} pairs: {m:+.2f} points, paired SE {se:.2f}; up {sum(x > 0 for x in d)}, "
              f"down {sum(x < 0 for x in d)}; per fold " + " ".join(f"{x:+.2f}" for x in per_fold) +
              f" (SE over folds {mean_se(per_fold)[1]:.2f})")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cv", required=True, type=Path, help="the directory cv_files.py wrote")
    ap.add_argument("--results", required=True, type=Path, help="results file, appended to (and resumed from)")
    ap.add_argument("--config", action="append", required=True, help="NAME=CONFIG.json; the first is the baseline")
    ap.add_argument("--seeds", default="10,20,30", help="fold k runs with seeds s0 + k for each s0 (default 10,20,30)")
    ap.add_argument("--folds", default="0,1,2,3,4")
    ap.add_argument("--jobs", type=int, default=2, help="runs at a time, each on one thread (default 2)")
    ap.add_argument("--binary", type=Path, default=BINARY)
    args = ap.parse_args()
    configs = [c.split("=", 1) for c in args.config]
    if any(len(c) != 2 for c in configs):
        sys.exit("cv_paired: --config takes NAME=CONFIG.json")
    names = [n for n, _ in configs]
    folds = [int(k) for k in args.folds.split(",")]
    seeds = [int(s) for s in args.seeds.split(",")]
    done = read_results(args.results)
    # Pairs first: each (fold, seed) for every configuration before the next, so that a stopped run leaves pairs.
    todo = [(n, c, k, s0 + k) for s0 in seeds for k in folds for n, c in configs if (n, k, s0 + k) not in done]
    os.environ.setdefault("OPENBLAS_CORETYPE", "SkylakeX")  # the BLAS core of RESULTS.md's runs on this machine

    def one(job):
        name, config, fold, seed = job
        acc, cpu = train(args.binary, args.cv, name, config, fold, seed)
        with open(args.results, "a") as f:
            f.write(f"{name} {fold} {seed} {acc:.4f} {cpu}\n")
        print(f"{name} fold {fold} seed {seed}: {acc:.4f} ({cpu} s CPU)", flush=True)

    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        list(pool.map(one, todo))
    report(read_results(args.results), names, folds, seeds)


if __name__ == "__main__":
    main()
