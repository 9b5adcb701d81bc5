#!/usr/bin/python3
"""The sentiment reference configuration in PyTorch, for seconds per epoch against `sentiment train
--config reference` (issue 7). Same data and split (examples/sentiment/data/sentences.tsv, test = every
fifth example of each source), same tokenizer, vocabulary, max_len 48, batches of 32 padded to the batch's
longest sentence, same model (token + position embeddings, dropout 0.1, 2 post-norm ReLU encoder layers,
d_model 64, 4 heads, ffn 128, masked mean pooling, Linear(64, 2)), Adam lr 1e-3, cross-entropy.
Prints one JSON line with the median epoch time.
    /usr/bin/python3 bench/torch_sentiment.py --epochs 3 --threads 1
"""
import argparse
import json
import re
import statistics
import time
from pathlib import Path

import torch
from torch import nn

DATA = Path(__file__).resolve().parent.parent / "examples" / "sentiment" / "data" / "sentences.tsv"
TOKEN = re.compile(rb"[a-z0-9']+")
PAD, UNK, MAX_LEN, BATCH = 0, 1, 48, 32


def train_split():
    lines = [l for l in DATA.read_bytes().replace(b"\r\n", b"\n").split(b"\n") if l][1:]
    seen, train = {}, []
    for line in lines:
        text, label, source = line.split(b"\t")
        i = seen.get(source, 0)
        seen[source] = i + 1
        if i % 5 != 4:
            train.append((TOKEN.findall(text.lower()), int(label)))
    return train


class Classifier(nn.Module):
    def __init__(self, vocab):
        super().__init__()
        self.tokens = nn.Embedding(vocab, 64, padding_idx=PAD)
        self.positions = nn.Embedding(MAX_LEN, 64)
        self.dropout = nn.Dropout(0.1)
        layer = nn.TransformerEncoderLayer(64, 4, 128, dropout=0.1, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.head = nn.Linear(64, 2)

    def forward(self, ids, pad):
        h = self.dropout(self.tokens(ids) + self.positions(torch.arange(ids.shape[1])))
        h = self.encoder(h, src_key_padding_mask=pad)
        keep = (~pad).unsqueeze(2).float()
        return self.head((h * keep).sum(1) / keep.sum(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    train = train_split()
    vocab = {}
    for tokens, _ in train:
        for t in tokens:
            vocab.setdefault(t, len(vocab) + 2)
    encoded = [([vocab.get(t, UNK) for t in tokens][:MAX_LEN] or [UNK], y) for tokens, y in train]
    model = Classifier(len(vocab) + 2).train()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    seconds, cpu_seconds = [], []
    for _ in range(a.epochs):
        order = torch.randperm(len(encoded)).tolist()
        t0, c0 = time.perf_counter(), time.process_time()
        for start in range(0, len(order), BATCH):
            rows = [encoded[i] for i in order[start:start + BATCH]]
            S = max(len(r[0]) for r in rows)
            ids = torch.tensor([r[0] + [PAD] * (S - len(r[0])) for r in rows])
            labels = torch.tensor([r[1] for r in rows])
            loss = nn.functional.cross_entropy(model(ids, ids == PAD), labels)
            opt.zero_grad()
            loss.backward()
            opt.step()
        seconds.append(time.perf_counter() - t0)
        cpu_seconds.append(time.process_time() - c0)
    print(json.dumps({"impl": "pytorch", "name": "sentiment_epoch", "threads": a.threads,
                      "seconds": round(statistics.median(seconds), 3), "epochs": seconds,
                      "cpu_seconds": round(statistics.median(cpu_seconds), 3), "cpu_epochs": cpu_seconds}))


if __name__ == "__main__":
    main()
