#!/usr/bin/env python3
"""Checks a tensorgrad sentiment model against the same model in PyTorch.

Usage (PyTorch 1.13 is installed for /usr/bin/python3):

    build/examples/sentiment/sentiment train --config reference --epochs 2 --out /tmp/sent_check
    build/examples/sentiment/sentiment eval --model /tmp/sent_check --logits /tmp/sent_check/logits.txt
    /usr/bin/python3 examples/sentiment/pytorch_check.py --model /tmp/sent_check --logits /tmp/sent_check/logits.txt

It builds the classifier of config.json from torch.nn parts (nn.Embedding for tokens and positions, and
with subword_buckets for hashed character n-grams, whose vectors are averaged with the word's as in fastText
(or summed with it), and with lexicon_weight W, W times the bucket of each rated token's valence
("<afinn-3>", from the model's lexicon.tsv); with embedding_norm, nn.LayerNorm over that input;
nn.Dropout, nn.TransformerEncoder of nn.TransformerEncoderLayer with batch_first=True, a final LayerNorm
when norm_first (or with architecture lstm or gru, nn.LSTM or nn.GRU with batch_first=True over each sentence's
real tokens, packed with pack_padded_sequence), masked mean or max pooling or both side by side, nn.Linear; K of them with averaged probabilities for an
ensemble), loads model.safetensors into it (parsed here by
hand: 8-byte little-endian header length, JSON header, raw data; our parameter names are PyTorch's
state_dict names), tokenizes the test split as the C++ program does, runs it in eval mode in float32, and
compares its logits with those `sentiment eval --logits` wrote. Prints the largest absolute difference;
exits 1 when it exceeds --tol (default 1e-4), 2 on a usage or input error.

PyTorch's inference fast path (torch._transformer_encoder_layer_fwd, nested tensors) computes the same
function with other kernels; the check uses the standard path, forced by running with gradients enabled
(the fast path is only taken under no_grad) and enable_nested_tensor=False, and enforced by making the
fast-path kernels raise if they are called. The fast path's difference is printed for information only.
"""
import argparse
import json
import math
import re
import struct
import sys
import warnings
from pathlib import Path

import torch
from torch import nn

PAD, UNK = 0, 1
SUBWORD_MIN_N, SUBWORD_MAX_N, MAX_SUBWORDS = 3, 5, 48  # subword.h
DEFAULT_DATA = Path(__file__).resolve().parent / "data" / "sentences.tsv"
TOKEN = re.compile(rb"[a-z0-9']+")


# ---------------------------------------------------------------------------------------------- files

def read_safetensors(path):
    """name -> tensor, from a safetensors file (F32, F64, I64 or BOOL), without the safetensors package."""
    dtypes = {"F32": torch.float32, "F64": torch.float64, "I64": torch.int64, "BOOL": torch.bool}
    raw = Path(path).read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    data = raw[8 + n:]
    if sys.byteorder != "little":
        raise SystemExit("pytorch_check: safetensors data is little-endian; this machine is not")
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        begin, end = entry["data_offsets"]
        buf = bytearray(data[begin:end])
        t = torch.frombuffer(buf, dtype=dtypes[entry["dtype"]]) if buf else torch.empty(0, dtype=dtypes[entry["dtype"]])
        tensors[name] = t.reshape(entry["shape"]).clone()
    return tensors


def read_vocab(path):
    """token (bytes) -> id, from vocab.txt (one token per line, in id order)."""
    tokens = Path(path).read_bytes().split(b"\n")
    if tokens and tokens[-1] == b"":
        tokens.pop()
    if tokens[:2] != [b"<pad>", b"<unk>"]:
        raise SystemExit(f"pytorch_check: {path} must start with <pad> and <unk>")
    return {t: i for i, t in enumerate(tokens)}


def read_test_split(path):
    """(text bytes, label) of the reference test split of a TSV file: per source, in file order, the
    example at index i within its source is test when i % 5 == 4 (split_reference in dataset.cpp)."""
    raw = Path(path).read_bytes()
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    lines = [line for line in raw.replace(b"\r\n", b"\n").split(b"\n") if line]  # blank lines are skipped
    header = [h.strip() for h in lines[0].split(b"\t")]
    text, label = header.index(b"text"), header.index(b"label")
    source = header.index(b"source") if b"source" in header else None
    seen, test = {}, []
    for line in lines[1:]:
        fields = line.split(b"\t")
        src = fields[source] if source is not None else b""
        index = seen.get(src, 0)
        seen[src] = index + 1
        if index % 5 == 4:
            test.append((fields[text], int(fields[label])))
    return test


def read_logits(path):
    rows = [[float(x) for x in line.split()] for line in Path(path).read_text().splitlines() if line.strip()]
    return torch.tensor(rows, dtype=torch.float64)


# ---------------------------------------------------------------------------------------------- text

def fnv1a_32(data):
    """32-bit FNV-1a of bytes (subword.cpp)."""
    h = 2166136261
    for b in data:
        h = ((h ^ b) * 16777619) & 0xFFFFFFFF
    return h


def subword_ids(token, buckets):
    """As subword_ids: the n-grams of b"<token>", n = 3..5 (all 3-grams first), at most 48, each as
    1 + fnv1a_32(ngram) % buckets."""
    word = b"<" + token + b">"
    grams = [word[at:at + n] for n in range(SUBWORD_MIN_N, SUBWORD_MAX_N + 1) for at in range(len(word) - n + 1)]
    return [1 + fnv1a_32(g) % buckets for g in grams[:MAX_SUBWORDS]]


def read_lexicon(path):
    """token (bytes) -> valence, from lexicon.tsv (word<TAB>valence lines)."""
    lexicon = {}
    for line in path.read_bytes().splitlines():
        word, valence = line.split(b"\t")
        lexicon[word] = int(valence)
    return lexicon


def encode(text, vocab, max_len, buckets=0, lexicon=None, weight=0):
    """As tokenize + Vocab::encode + encode_all: ASCII lowercase, maximal runs of [a-z0-9'], unknown
    tokens as <unk>, truncated to max_len, and a sentence without tokens as one <unk> (without n-grams);
    a token the lexicon rates gets `weight` times the bucket of b"<afinn" + valence + b">" after its n-grams.
    Returns (ids, per-token n-gram buckets or None without sub-words)."""
    tokens = TOKEN.findall(text.lower())[:max_len]  # bytes.lower(): ASCII only
    ids = [vocab.get(t, UNK) for t in tokens]
    subwords = [subword_ids(t, buckets) for t in tokens] if buckets else None
    for t, grams in zip(tokens, subwords or []):
        if lexicon and t in lexicon:
            grams.extend([1 + fnv1a_32(b"<afinn%d>" % lexicon[t]) % buckets] * weight)
    if not ids:
        return [UNK], [[]] if buckets else None
    return ids, subwords


def batches(encoded, size=128):
    """Padded (tokens, pad_mask, subwords or None) batches in order, each padded to its longest sentence,
    and subwords (B, S, N) to its token with most n-grams (make_batches)."""
    for at in range(0, len(encoded), size):
        chunk = encoded[at:at + size]
        S = max(len(ids) for ids, _ in chunk)
        tokens = torch.tensor([ids + [PAD] * (S - len(ids)) for ids, _ in chunk], dtype=torch.int64)
        subwords = None
        if chunk[0][1] is not None:
            N = max([1] + [len(g) for _, sub in chunk for g in sub])
            subwords = torch.zeros(len(chunk), S, N, dtype=torch.int64)
            for b, (_, sub) in enumerate(chunk):
                for s, g in enumerate(sub):
                    subwords[b, s, :len(g)] = torch.tensor(g, dtype=torch.int64)
        yield tokens, tokens == PAD, subwords


# ---------------------------------------------------------------------------------------------- model

class Network(nn.Module):
    """model.cpp's Network in torch.nn parts; attribute names give the same state_dict names as our Layer."""

    def __init__(self, m):
        super().__init__()
        self.pooling = m["pooling"]
        D = m["d_model"]
        self.token_embedding = nn.Embedding(m["vocab_size"], D, padding_idx=PAD)
        if m.get("subword_buckets", 0) > 0:
            self.subword_embedding = nn.Embedding(m["subword_buckets"] + 1, D, padding_idx=0)
        if m.get("positional", "learned") == "learned":
            self.position_embedding = nn.Embedding(m["max_len"], D)
        if m.get("embedding_norm", False):
            self.embedding_norm = nn.LayerNorm(D, eps=1e-5)
        self.dropout = nn.Dropout(m["dropout"])
        architecture = m.get("architecture", "transformer")
        if architecture == "transformer":
            layer = nn.TransformerEncoderLayer(D, m["num_heads"], m["dim_feedforward"], m["dropout"], m["activation"],
                                               layer_norm_eps=1e-5, batch_first=True, norm_first=m["norm_first"])
            self.encoder = nn.TransformerEncoder(layer, m["num_layers"],
                                                 norm=nn.LayerNorm(D) if m["norm_first"] else None,
                                                 enable_nested_tensor=False)
            width = D
        else:  # "lstm" or "gru": the weights are nn.LSTM's / nn.GRU's state_dict ("rnn.weight_ih_l0", ...)
            rnn = {"lstm": nn.LSTM, "gru": nn.GRU}[architecture]
            between = m["dropout"] if m["num_layers"] > 1 else 0.0  # PyTorch warns of it with one layer
            self.rnn = rnn(D, m["hidden_size"], m["num_layers"], batch_first=True, dropout=between,
                           bidirectional=m["bidirectional"])
            width = m["hidden_size"] * (2 if m["bidirectional"] else 1)
        self.subword_combine = m.get("subword_combine", "mean")
        self.classifier = nn.Linear(2 * width if self.pooling == "mean+max" else width, m["num_classes"])

    def contextual(self, x, pad_mask):  # (B, S, D), (B, S) bool -> (B, S, W)
        if hasattr(self, "encoder"):
            return self.encoder(x, src_key_padding_mask=pad_mask)
        # Each sentence's real (leading) tokens only, as a packed sequence; padded steps come back as zeros.
        lengths = (~pad_mask).sum(1).cpu()
        packed = nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
        h, _ = nn.utils.rnn.pad_packed_sequence(self.rnn(packed)[0], batch_first=True, total_length=x.shape[1])
        return h

    def forward(self, tokens, pad_mask, subwords=None):  # (B, S) int64, (B, S) bool, (B, S, N) -> (B, C)
        x = self.token_embedding(tokens)                                                      # (B, S, D)
        if hasattr(self, "subword_embedding"):  # the mean of the word's vector and its n-grams', or their sum
            x = x + self.subword_embedding(subwords).sum(2)
            if self.subword_combine == "mean":
                x = x / ((subwords != 0).sum(2, keepdim=True).to(x.dtype) + 1)                # count (B, S, 1)
        if hasattr(self, "position_embedding"):
            x = x + self.position_embedding(torch.arange(tokens.shape[1]))
        if hasattr(self, "embedding_norm"):
            x = self.embedding_norm(x)
        x = self.dropout(x)
        h = self.contextual(x, pad_mask)                                                      # (B, S, W)
        keep = (~pad_mask).unsqueeze(2)                                                       # (B, S, 1)
        largest = h.masked_fill(~keep, -1e9).amax(1)                                          # (B, W)
        if self.pooling == "max":
            return self.classifier(largest)
        keep = keep.to(h.dtype)
        mean = (h * keep).sum(1) / keep.sum(1)                                                # (B, W)
        return self.classifier(torch.cat([mean, largest], 1) if self.pooling == "mean+max" else mean)


class Classifier(nn.Module):
    """model.cpp's Classifier: one Network (its parameter names unprefixed), or an ensemble of K in an
    nn.ModuleList "members" whose logits are log(mean_k softmax(logits_k))."""

    def __init__(self, m):
        super().__init__()
        if m.get("ensemble", 1) == 1:
            self.network = Network(m)
        else:
            self.members = nn.ModuleList(Network(m) for _ in range(m["ensemble"]))

    def load(self, state):
        """load_state_dict by our names (a single network's have no prefix); returns (missing, unexpected)."""
        target = self.network if hasattr(self, "network") else self
        return target.load_state_dict(state, strict=False)

    def forward(self, tokens, pad_mask, subwords=None):  # (B, S) int64, (B, S) bool, (B, S, N) -> (B, C)
        if hasattr(self, "network"):
            return self.network(tokens, pad_mask, subwords)
        log_probs = torch.stack([torch.log_softmax(m(tokens, pad_mask, subwords), 1) for m in self.members])  # (K, B, C)
        return torch.logsumexp(log_probs, 0) - math.log(len(self.members))


def refuse_fast_path():
    """Makes PyTorch's fused inference kernels raise, so that a silent switch to them cannot pass."""
    saved = {}
    for name in ("_transformer_encoder_layer_fwd", "_native_multi_head_attention"):
        if hasattr(torch, name):
            saved[name] = getattr(torch, name)

            def fail(*args, _name=name, **kwargs):
                raise RuntimeError(f"pytorch_check: torch.{_name} (the fast path) was called")

            setattr(torch, name, fail)
    return saved


def run(model, encoded):
    return torch.cat([model(*batch).detach() for batch in batches(encoded)]).to(torch.float64)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", required=True, help="model directory (model.safetensors, vocab.txt, config.json)")
    ap.add_argument("--logits", required=True, help="the file written by `sentiment eval --logits`")
    ap.add_argument("--data", default=str(DEFAULT_DATA), help="the TSV `sentiment eval` read (default: bundled)")
    ap.add_argument("--tol", type=float, default=1e-4, help="largest allowed absolute logit difference")
    args = ap.parse_args()

    torch.set_default_dtype(torch.float32)
    directory = Path(args.model)
    config = json.loads((directory / "config.json").read_text())["model"]
    vocab = read_vocab(directory / "vocab.txt")
    if len(vocab) != config["vocab_size"]:
        print(f"pytorch_check: vocab.txt has {len(vocab)} tokens, config.json says {config['vocab_size']}")
        return 2
    model = Classifier(config)
    state = read_safetensors(directory / "model.safetensors")
    missing, unexpected = model.load(state)
    if missing or unexpected:
        print(f"pytorch_check: parameter names differ: missing {missing}, unexpected {unexpected}")
        return 2
    model.eval()

    test = read_test_split(args.data)
    weight = config.get("lexicon_weight", 0)
    lexicon = read_lexicon(directory / "lexicon.tsv") if weight else None
    encoded = [encode(text, vocab, config["max_len"], config.get("subword_buckets", 0), lexicon, weight)
               for text, _ in test]
    theirs = read_logits(args.logits)
    if theirs.shape != (len(encoded), config["num_classes"]):
        print(f"pytorch_check: {args.logits} holds {tuple(theirs.shape)} logits, expected "
              f"({len(encoded)}, {config['num_classes']}) for the test split of {args.data}")
        return 2

    saved = refuse_fast_path()
    with torch.enable_grad():  # the fast path is only taken without gradients
        ours = run(model, encoded)
    for name, fn in saved.items():
        setattr(torch, name, fn)
    diff = (ours - theirs).abs()
    worst = diff.max().item()
    row = int(diff.max(1).values.argmax())
    agree = int((ours.argmax(1) == theirs.argmax(1)).sum())
    print(f"{len(encoded)} test sentences, {len(state)} tensors, torch {torch.__version__}, float32, eval mode")
    print(f"max |logit difference| = {worst:.3e} (sentence {row}), mean {diff.mean().item():.3e}; "
          f"predictions agree on {agree}/{len(encoded)}")

    with torch.no_grad(), warnings.catch_warnings():  # information only: PyTorch's two paths differ too
        warnings.simplefilter("ignore")  # "nested tensors are in prototype stage"
        for network in model.members if hasattr(model, "members") else [model.network]:
            if hasattr(network, "encoder"):  # an RNN has no fast path
                network.encoder.enable_nested_tensor = True
        fast = run(model, encoded)
    print(f"(PyTorch fast path vs tensorgrad: max difference {(fast - theirs).abs().max().item():.3e}, not checked)")

    if worst > args.tol:
        print(f"FAIL: {worst:.3e} > tolerance {args.tol:g}")
        return 1
    print(f"OK: within tolerance {args.tol:g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
