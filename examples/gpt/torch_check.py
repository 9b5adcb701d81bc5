#!/usr/bin/env python3
"""Cross-check of the GPT against PyTorch: builds the same model from torch.nn parts, loads our
model.safetensors by name, and compares the logits that `gpt eval --logits` wrote for the first validation
windows. The body is PyTorch's own GPT block: nn.TransformerEncoder of pre-norm GELU TransformerEncoderLayers
with a final LayerNorm and a causal mask (our Decoder without cross-attention has exactly its parameter
names); token embedding, learned positions and the tied output projection around it.

Usage:
  build/examples/gpt/gpt eval --model DIR --split valid --logits DIR/logits.json
  /usr/bin/python3 examples/gpt/torch_check.py --model DIR [--tol 1e-5]
Prints the largest absolute difference, and each side's against the same weights in float64; exits 1
when the difference exceeds --tol and ours is further from float64 than 1.5 times PyTorch's float32.
Needs torch (Debian's python3-torch).
"""
import argparse
import json
import os
import struct
import sys

import torch
from torch import nn


def read_safetensors(path):
    """The tensors of a safetensors file (F32 and I64 only), by name."""
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
        data = f.read()
    dtypes = {"F32": torch.float32, "I64": torch.int64, "F64": torch.float64}
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        t = torch.frombuffer(bytearray(data[begin:end]), dtype=dtypes[info["dtype"]])
        out[name] = t.reshape(info["shape"]).clone()
    return out


class Gpt(nn.Module):
    """tokens (B, T) -> logits (B, T, V), the layout of examples/gpt/model.h, with its dropout (m["dropout"], 0
    when absent) in training mode."""

    def __init__(self, m):
        super().__init__()
        E = m["d_model"]
        self.token_embedding = nn.Embedding(m["vocab_size"], E)
        self.position = nn.Module()
        self.position.weight = nn.Parameter(torch.zeros(m["block_size"], E))
        p = m.get("dropout", 0.0)
        self.dropout = nn.Dropout(p)
        layer = nn.TransformerEncoderLayer(E, m["num_heads"], m["dim_feedforward"], dropout=p, activation="gelu",
                                           batch_first=True, norm_first=True)
        self.decoder = nn.TransformerEncoder(layer, m["num_layers"], norm=nn.LayerNorm(E), enable_nested_tensor=False)

    def forward(self, tokens):
        T = tokens.shape[1]
        x = self.dropout(self.token_embedding(tokens) + self.position.weight[:T])
        causal = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)  # True: not allowed (the future)
        return self.decoder(x, mask=causal) @ self.token_embedding.weight.T


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", required=True, help="the model directory")
    p.add_argument("--logits", help="the file gpt eval --logits wrote (default: DIR/logits.json)")
    p.add_argument("--tol", type=float, default=1e-5)
    a = p.parse_args()
    with open(os.path.join(a.model, "config.json")) as f:
        config = json.load(f)
    model = Gpt(config["model"])
    model.load_state_dict(read_safetensors(os.path.join(a.model, "model.safetensors")), strict=True)
    model.eval()  # dropout off; gradients stay on, so PyTorch takes its standard path, not the fused one
    with open(a.logits or os.path.join(a.model, "logits.json")) as f:
        ours = json.load(f)
    tokens = torch.tensor(ours["tokens"], dtype=torch.int64)
    mine = torch.tensor(ours["logits"], dtype=torch.float64)
    theirs = model(tokens).detach().double()
    exact = model.double()(tokens).detach()  # the same weights in float64: the rounding-free reference
    diff = (theirs - mine).abs().max().item()
    ours_err, theirs_err = (mine - exact).abs().max().item(), (theirs - exact).abs().max().item()
    print(f"{tokens.shape[0]} windows of {tokens.shape[1]} bytes, {theirs.shape[2]} logits each: "
          f"largest absolute difference {diff:.3g} (tolerance {a.tol:g}); against the float64 model: "
          f"ours {ours_err:.3g}, PyTorch's float32 {theirs_err:.3g}")
    # Logits of a trained model reach |20| and more, where float32's own rounding passes 1e-5: then ours
    # counts as matching when it is no further from the float64 model than PyTorch's float32 is (x 1.5).
    return 0 if diff <= a.tol or ours_err <= 1.5 * theirs_err else 1


if __name__ == "__main__":
    sys.exit(main())
