# SPDX-License-Identifier: GPL-3.0-or-later
"""Protein masked language models of ESM2's shapes, for measuring d2dpo at the sizes people bring
(random weights: the figures are timings, not quality). ESM2's own layout: pre-LayerNorm blocks,
rotary attention with biases, GELU feed-forward of 4x the width, a final LayerNorm and a head over
ESM's 33 token ids (<cls> 0, <pad> 1, <eos> 2, <unk> 3, the residues from 4, <mask> 32), every
sequence framed by <cls> ... <eos>. Time-agnostic as ESM2 and DPLM are, or time-conditioned (a
learned embedding of t added to every position) with time=True.

    python3 python/examples/esm2.py 8M --length 150 -o esm2-8m.pt    (writes esm2-8m.vocab.json too)
"""
import argparse
import json
import math
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dit import rotate  # noqa: E402  (the same rotary embedding as the DiT example)

# name: (layers, width, heads); the feed-forward is 4x the width (ESM2's published shapes).
SHAPES = {"8M": (6, 320, 20), "35M": (12, 480, 20), "150M": (30, 640, 20),
          # by the weights' bytes in float32, for the memory table (bench/model_memory.sh)
          "0.1GiB": (12, 432, 12), "0.5GiB": (24, 680, 20), "1GiB": (30, 864, 24), "2GiB": (36, 1104, 24)}
# ESM's alphabet after its four specials, in ESM's order; <mask> is 32.
ESM_TOKENS = "LAGVSERTIDPKQNFYMHWCXBUZO.-"
RESIDUES = "ACDEFGHIKLMNPQRSTVWY"


class Block(nn.Module):
    def __init__(self, d: int, heads: int):
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, d)
        self.norm2 = nn.LayerNorm(d)
        self.up = nn.Linear(d, 4 * d)
        self.down = nn.Linear(4 * d, d)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        b, n, d = x.shape
        qkv = self.qkv(self.norm1(x)).view(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        q = rotate(qkv[0], cos, sin)
        k = rotate(qkv[1], cos, sin)
        v = qkv[2]
        attention = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d // self.heads), -1) @ v
        x = x + self.out(attention.transpose(1, 2).reshape(b, n, d))
        return x + self.down(F.gelu(self.up(self.norm2(x))))


class Esm2Like(nn.Module):
    """forward(tokens [B, L], t [B]) -> logits [B, L, 33]."""

    def __init__(self, layers: int, d: int, heads: int, time: bool):
        super().__init__()
        self.time = time
        self.embed = nn.Embedding(33, d, padding_idx=1)
        self.time_embedding = nn.Sequential(nn.Linear(1, d), nn.SiLU(), nn.Linear(d, d))
        self.blocks = nn.ModuleList([Block(d, heads) for _ in range(layers)])
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, 33)
        width = d // heads
        self.register_buffer("inverse_frequency", 1.0 / (10000 ** (torch.arange(0, width, 2).float() / width)))

    def forward(self, tokens: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        h = self.embed(tokens)
        if self.time:
            h = h + self.time_embedding(t.float().unsqueeze(1)).unsqueeze(1)
        angles = torch.arange(tokens.shape[1], device=tokens.device).float().unsqueeze(1) * self.inverse_frequency
        cos = angles.cos()
        sin = angles.sin()
        for block in self.blocks:
            h = block(h, cos, sin)
        return self.head(self.norm(h))


def make_esm2(size: str, time: bool = False):
    layers, d, heads = SHAPES[size]
    vocabulary = {"symbols": {r: 4 + ESM_TOKENS.index(r) for r in RESIDUES}, "mask": 32, "pad": 1,
                  "begin": [0], "end": [2], "size": 33}
    return Esm2Like(layers, d, heads, time), vocabulary


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("size", choices=sorted(SHAPES))
    parser.add_argument("--length", type=int, default=150, help="the longest sequence (residues)")
    parser.add_argument("--time", action="store_true", help="time-conditioned (default: time-agnostic, as ESM2)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("-o", "--out", required=True, help="the TorchScript file; the vocabulary goes beside it")
    args = parser.parse_args()
    torch.manual_seed(args.seed)
    model, vocabulary = make_esm2(args.size, args.time)
    model.eval()
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    import d2dpo_wrap
    vocabulary_path = os.path.splitext(args.out)[0] + ".vocab.json"
    d2dpo_wrap.save(model, vocabulary, args.length, args.out, vocabulary_path)
    parameters = sum(p.numel() for p in model.parameters())
    print(json.dumps({"size": args.size, "parameters": parameters, "time": args.time, "length": args.length,
                      "model": args.out, "vocabulary": vocabulary_path}))


if __name__ == "__main__":
    main()
