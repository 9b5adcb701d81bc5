#!/usr/bin/python3
"""The GPT example's training run in PyTorch (issue 24: the same configuration trained by PyTorch reaches
the same validation loss within seed noise). Same model (torch_check.py's Gpt), data, schedule and scoring as
`gpt train` (examples/gpt/{text,train,loop,model}.cpp); only the random numbers differ:
  - data: the corpus's byte vocabulary (its distinct bytes, increasing), the train and valid streams of the
    splits file (each document followed by its "\\n%\\n"); batches of random windows of the training stream,
    drawn without replacement from a fresh permutation each epoch (our DataLoader with shuffle);
  - initialisation: Linear kaiming-uniform and bias U(±1/√in), attention in_proj xavier-uniform with zero
    biases, LayerNorm 1 and 0, token embedding and learned positions N(0, 0.02²), the output tied to the token
    embedding; every layer drawn on its own (nn.TransformerEncoder deep-copies one layer: we re-draw them);
  - AdamW (betas 0.9, 0.95, eps 1e-8), weight decay on the parameters of 2 or more dims only (embeddings,
    positions, projections), the learning rate warmed up linearly then cosine to min_lr at decay_steps, the
    gradient norm clipped; with muon_lr > 0, the blocks' matrices by Muon instead (its "match_rms_adamw"
    lr adjustment, at muon_lr on the same schedule): torch 1.13 has no Muon, so `Muon` below transcribes
    torch.optim.Muon of PyTorch 2.9, with Newton-Schulz in float32 as ours (PyTorch's casts to bfloat16);
  - validation: bits per byte of the valid stream prefixed with the separator, scored in overlapping windows
    of block_size whose last eval_stride targets count (stream_nats in model.cpp), after every eval_interval
    steps and the last.

Usage (Debian's /usr/bin/python3 with python3-torch):
  /usr/bin/python3 examples/gpt/torch_train.py [--config c.json] [--steps N] [--seed S] [--threads 1] \\
      [--out metrics.jsonl]
  /usr/bin/python3 examples/gpt/torch_train.py --score DIR   # valid bits/byte of a model `gpt train` wrote
--config is a config.json as `gpt train --config` reads it (a model directory's works); the default is the
C++ default (config.h). --steps overrides max_steps and leaves decay_steps alone, as `gpt train --steps`.
"""
import argparse
import json
import math
import os
import sys
import time

import torch
from torch import nn
from torch.nn import functional as F

from torch_check import Gpt, read_safetensors

HERE = os.path.dirname(os.path.abspath(__file__))
SEPARATOR = b"\n%\n"
DEFAULT = {  # config.h
    "model": dict(block_size=128, d_model=128, num_heads=4, num_layers=4, dim_feedforward=512, dropout=0.0),
    "train": dict(max_steps=2800, batch_size=32, lr=2e-3, min_lr=2e-4, warmup_steps=100, decay_steps=2800,
                  weight_decay=0.1, muon_lr=0.002, clip_grad_norm=1.0, eval_interval=350, eval_stride=64),
}


class Muon(torch.optim.Optimizer):
    """torch.optim.Muon (PyTorch 2.9: momentum 0.95, Nesterov, 5 quintic Newton-Schulz steps, decoupled weight
    decay), adjust_lr_fn "match_rms_adamw", without the bfloat16 cast; for 2-D parameters only."""

    def __init__(self, params, lr, weight_decay, momentum=0.95):
        super().__init__(params, dict(lr=lr, weight_decay=weight_decay, momentum=momentum))

    @staticmethod
    def orthogonalize(update, steps=5, eps=1e-7):
        a, b, c = 3.4445, -4.7750, 2.0315
        x = update.T if update.size(0) > update.size(1) else update
        x = x / x.norm().clamp(min=eps)
        for _ in range(steps):
            gram = x @ x.T
            x = a * x + (b * gram + c * gram @ gram) @ x
        return x.T if update.size(0) > update.size(1) else x

    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            lr, mu = group["lr"], group["momentum"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                buf = self.state[p].setdefault("momentum_buffer", torch.zeros_like(p))
                buf.lerp_(p.grad, 1 - mu)
                update = self.orthogonalize(p.grad.lerp(buf, mu))
                p.mul_(1 - lr * group["weight_decay"])
                p.add_(update, alpha=-lr * 0.2 * math.sqrt(max(p.shape)))


def read_data(corpus, splits):
    """(ids of the separator, the train stream, the valid stream) as int64 tensors, text.cpp's way."""
    with open(corpus, "rb") as f:
        text = f.read()
    with open(splits) as f:
        parts = f.read().split("\n")
    if parts and parts[-1] == "":  # std::getline: a final newline ends the last line, it starts none
        parts.pop()
    streams, start = {"train": bytearray(), "valid": bytearray(), "test": bytearray()}, 0
    for part in parts:
        end = text.find(SEPARATOR, start)
        if end < 0 or part not in streams:
            raise ValueError(f"splits file {splits}: line '{part}' does not fit corpus {corpus}")
        streams[part] += text[start:end + 3]
        start = end + 3
    if start != len(text):
        raise ValueError(f"splits file {splits} has fewer lines than corpus {corpus} has documents")
    table = torch.full((256,), -1, dtype=torch.int64)
    vocab = sorted(set(text))
    table[vocab] = torch.arange(len(vocab))
    ids = lambda b: table[torch.frombuffer(bytearray(b), dtype=torch.uint8).long()]  # noqa: E731
    return len(vocab), ids(SEPARATOR), ids(streams["train"]), ids(streams["valid"])


def build_model(m):
    """torch_check.Gpt initialised as model.cpp does (see the module's docstring)."""
    model = Gpt(m)
    for layer in model.decoder.layers:  # deep copies of one layer until re-drawn
        layer.self_attn.out_proj.reset_parameters()
        layer.self_attn._reset_parameters()  # xavier in_proj, zero in_proj_bias and out_proj.bias
        for part in (layer.linear1, layer.linear2, layer.norm1, layer.norm2):
            part.reset_parameters()
    nn.init.normal_(model.token_embedding.weight, std=0.02)
    nn.init.normal_(model.position.weight, std=0.02)
    return model


def lr_at(t, step):
    """loop.cpp's lr_at: linear warmup, cosine to min_lr at decay_steps, then min_lr (steps count from 0)."""
    if step < t["warmup_steps"]:
        return t["lr"] * (step + 1) / t["warmup_steps"]
    if step >= t["decay_steps"]:
        return t["min_lr"]
    progress = (step - t["warmup_steps"]) / max(t["decay_steps"] - t["warmup_steps"], 1)
    return t["min_lr"] + 0.5 * (t["lr"] - t["min_lr"]) * (1 + math.cos(math.pi * progress))


@torch.no_grad()
def bits_per_byte(model, separator, stream, block_size, stride, batch_size=32):
    """model.cpp's stream_nats over separator + stream, in bits per byte of the stream."""
    ctx = torch.cat([separator, stream])
    L, n = len(ctx), len(separator)
    W = min(block_size, L - 1)
    windows, nxt = [], n  # (s, first): inputs ctx[s, s + W), targets ctx[s + 1, s + W], scoring targets >= first
    while nxt < L:
        end = W if not windows else min(nxt + stride - 1, L - 1)
        windows.append((end - W, nxt))
        nxt = end + 1
    was_training = model.training
    model.eval()
    nats, offsets = 0.0, torch.arange(W)
    for b0 in range(0, len(windows), batch_size):
        chunk = windows[b0:b0 + batch_size]
        starts = torch.tensor([s for s, _ in chunk])[:, None] + offsets  # (B, W)
        targets = ctx[starts + 1].masked_fill(starts + 1 < torch.tensor([f for _, f in chunk])[:, None], -100)
        logits = model(ctx[starts])
        nats += F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), reduction="sum").item()
    model.train(was_training)
    return nats / math.log(2) / len(stream)


def batches(n, batch_size, gen):
    """Window starts in batches: a random permutation of range(n) each epoch, the last batch possibly short."""
    while True:
        yield from torch.randperm(n, generator=gen).split(batch_size)


def train(config, data, seed, out):
    m, t = config["model"], config["train"]
    vocab_size, separator, train_ids, valid_ids = data
    m = dict(m, vocab_size=vocab_size)
    T, B = m["block_size"], t["batch_size"]
    torch.manual_seed(seed)
    model = build_model(m).train()
    params = list(model.parameters())
    by_muon = [p for n, p in model.named_parameters()
               if t["muon_lr"] > 0 and p.dim() == 2 and n.startswith("decoder.layers.")]
    rest = [p for p in params if all(p is not q for q in by_muon)]
    groups = [{"params": [p for p in rest if p.dim() >= 2], "weight_decay": t["weight_decay"]},
              {"params": [p for p in rest if p.dim() < 2], "weight_decay": 0.0}]
    opts = [torch.optim.AdamW(groups, lr=t["lr"], betas=(0.9, 0.95), eps=1e-8)]
    if by_muon:
        opts.append(Muon(by_muon, lr=t["muon_lr"], weight_decay=t["weight_decay"]))
    gen = torch.Generator().manual_seed(seed + 1)
    offsets = torch.arange(T)
    loss_sum, steps, t0, step = 0.0, 0, time.perf_counter(), 0
    if out:
        open(out, "w").close()  # a new run's log: a rerun must not follow an older run's lines
    for starts in batches(len(train_ids) - T, B, gen):
        lr = lr_at(t, step)
        for opt in opts:
            for g in opt.param_groups:
                g["lr"] = lr if isinstance(opt, torch.optim.AdamW) else lr / t["lr"] * t["muon_lr"]
        idx = starts[:, None] + offsets  # (b, T)
        logits = model(train_ids[idx])
        loss = F.cross_entropy(logits.reshape(-1, vocab_size), train_ids[idx + 1].reshape(-1))
        for opt in opts:
            opt.zero_grad()
        loss.backward()
        if t["clip_grad_norm"] > 0:
            nn.utils.clip_grad_norm_(params, t["clip_grad_norm"])
        for opt in opts:
            opt.step()
        step, steps, loss_sum = step + 1, steps + 1, loss_sum + loss.item()
        if step % t["eval_interval"] == 0 or step == t["max_steps"]:
            valid_bpc = bits_per_byte(model, separator, valid_ids, T, t["eval_stride"])
            train_nats, seconds = loss_sum / steps, time.perf_counter() - t0
            line = {"step": step, "train_loss": train_nats, "train_bpc": train_nats / math.log(2),
                    "valid_loss": valid_bpc * math.log(2), "valid_bpc": valid_bpc, "lr": lr, "seconds": seconds}
            print(f"step {step:>5}/{t['max_steps']}  train loss {train_nats:.4f}  valid bpc {valid_bpc:.4f}  "
                  f"lr {lr:.2e}  {step / seconds:.2f} it/s", flush=True)
            if out:
                with open(out, "a") as f:
                    f.write(json.dumps(line) + "\n")
            loss_sum, steps = 0.0, 0
        if step == t["max_steps"]:
            return


def load_config(path):
    """DEFAULT, with a config.json's "model" and "train" sections over it (unknown keys refused)."""
    config = {k: dict(v) for k, v in DEFAULT.items()}
    if path:
        with open(path) as f:
            given = json.load(f)
        for section in ("model", "train"):
            for key, value in given.get(section, {}).items():
                if key != "vocab_size" and key not in config[section]:
                    raise ValueError(f"{path}: unknown key {section}.{key}")
                config[section][key] = value
    return config


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", help="a config.json (default: the C++ default configuration)")
    p.add_argument("--data", default=os.path.join(HERE, "data", "fortunes.txt"))
    p.add_argument("--splits", help="default: splits.txt beside the corpus")
    p.add_argument("--steps", type=int, help="max_steps (decay_steps unchanged)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--out", help="metrics.jsonl to write, one line per evaluation")
    p.add_argument("--score", metavar="DIR", help="print the valid bits/byte of the model in DIR, and stop")
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    splits = a.splits or os.path.join(os.path.dirname(a.data), "splits.txt")
    data = read_data(a.data, splits)
    if a.score:
        with open(os.path.join(a.score, "config.json")) as f:
            config = json.load(f)
        model = Gpt(config["model"])
        model.load_state_dict(read_safetensors(os.path.join(a.score, "model.safetensors")), strict=True)
        bpc = bits_per_byte(model, data[1], data[3], config["model"]["block_size"], config["train"]["eval_stride"])
        print(f"valid bits/byte {bpc:.6f}")
        return 0
    config = load_config(a.config)
    if a.steps:
        config["train"]["max_steps"] = a.steps
    train(config, data, a.seed, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
