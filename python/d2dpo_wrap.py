#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Wrap a PyTorch masked-diffusion denoiser into d2dpo-studio's model contract and write the two
files `d2dpo import --torchscript MODEL.pt --vocabulary VOCAB.json` reads.

The contract (README, "Bring your own model"):
  forward(tokens: int64 [B, L], t: float [B]) -> float [B, L, V]
logits over the model's own V token ids, t in d2dpo's convention (0 = all masked, 1 = data), and
a vocabulary file naming the ids of the task's symbols, the mask, the pad (when lengths vary) and
the fixed tokens that frame every sequence (begin/end). d2dpo reads the softmax over the symbols'
(and the pad's) logits alone, so a head that also scores special tokens works unchanged.

Use it from Python:
    import d2dpo_wrap
    wrapped = d2dpo_wrap.TimeAsNoiseLevel(my_model)       # if my_model takes a noise level sigma
    d2dpo_wrap.save(wrapped, vocabulary, length=16, model_path="m.pt", vocabulary_path="m.vocab.json")
or from the shell, with the two example architectures of python/examples/:
    python3 python/d2dpo_wrap.py example dit --binary-integers 16 --steps 400 -o dit.pt
    python3 python/d2dpo_wrap.py example encoder --data words.txt --steps 400 -o encoder.pt
and compare a model's logits here with d2dpo's (before import, after export):
    python3 python/d2dpo_wrap.py logits --model dit.pt --vocabulary dit.vocab.json --length 16 -o logits.json
"""
import argparse
import json
import math
import os
import sys

import torch
import torch.nn as nn

VOCABULARY_KEYS = {"symbols", "mask", "pad", "begin", "end", "size"}


class TimeAsNoiseLevel(nn.Module):
    """For a model that takes a noise level sigma instead of t (MDLM, SEDD): with the log-linear
    schedule the share of masked positions is 1 - t, and sigma = -log(1 - (1 - eps) (1 - t)),
    finite at t = 0 thanks to eps."""

    def __init__(self, inner: nn.Module, eps: float = 1e-3):
        super().__init__()
        self.inner = inner
        self.eps = eps

    def forward(self, tokens: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        sigma = -torch.log1p(-(1.0 - self.eps) * (1.0 - t))
        return self.inner(tokens, sigma)


def check_vocabulary(vocabulary):
    """The same checks d2dpo makes (core/base/modelvocabulary.cpp), so a mistake shows here first."""
    unknown = set(vocabulary) - VOCABULARY_KEYS
    if unknown:
        raise ValueError(f"unknown vocabulary keys {sorted(unknown)}; known: {sorted(VOCABULARY_KEYS)}")
    symbols = vocabulary.get("symbols")
    if not isinstance(symbols, dict) or len(symbols) < 2:
        raise ValueError('"symbols" must map at least 2 one-character symbols to token ids')
    owner = {}
    for name, token in [(f"symbol {s!r}", i) for s, i in symbols.items()] + [("the mask", vocabulary["mask"])] + (
            [("the pad", vocabulary["pad"])] if vocabulary.get("pad") is not None else []):
        if token in owner:
            raise ValueError(f"ids collide: {owner[token]} and {name} are both id {token}")
        owner[token] = name
    for s in symbols:
        if len(s) != 1 or not ("!" <= s <= "~") or s in "_.":
            raise ValueError(f"symbol {s!r} must be one printable ASCII character other than '_' and '.'")
    for token in vocabulary.get("begin", []) + vocabulary.get("end", []):
        if token in owner:
            raise ValueError(f"ids collide: the frame token {token} is also {owner[token]}")


def model_ids(vocabulary, tokens):
    """d2dpo's task tokens [B, D] (symbols in sorted order, then the pad, the mask last) -> the
    model's ids [B, L] with the frame tokens: what d2dpo feeds the module."""
    symbols = sorted(vocabulary["symbols"])
    ids = [vocabulary["symbols"][s] for s in symbols]
    if vocabulary.get("pad") is not None:
        ids.append(vocabulary["pad"])
    ids.append(vocabulary["mask"])
    mapped = torch.tensor(ids, dtype=torch.long)[tokens]
    rows = tokens.shape[0]
    begin = torch.tensor(vocabulary.get("begin", []), dtype=torch.long).expand(rows, -1)
    end = torch.tensor(vocabulary.get("end", []), dtype=torch.long).expand(rows, -1)
    return torch.cat([begin, mapped, end], 1)


def task_logits(module, vocabulary, tokens, t):
    """The logits d2dpo reads: the module's at the sequence's positions, over the ids of the
    task's real tokens (symbols sorted, then the pad) -> [B, D, S]."""
    symbols = sorted(vocabulary["symbols"])
    real = [vocabulary["symbols"][s] for s in symbols]
    if vocabulary.get("pad") is not None:
        real.append(vocabulary["pad"])
    begin = len(vocabulary.get("begin", []))
    logits = module(model_ids(vocabulary, tokens), t)
    return logits[:, begin:begin + tokens.shape[1]][:, :, real]


def save(model, vocabulary, length, model_path, vocabulary_path):
    """Scripts `model` (torch.jit.script), probes it as d2dpo's import will (shape, finite values
    at t = 0 and 1), and writes the TorchScript file and the vocabulary file."""
    check_vocabulary(vocabulary)
    model.eval()
    scripted = torch.jit.script(model)
    symbols = len(vocabulary["symbols"]) + (1 if vocabulary.get("pad") is not None else 0)
    tokens = torch.randint(0, symbols + 1, (4, length))
    t = torch.tensor([0.0, 0.25, 0.75, 1.0])
    with torch.no_grad():
        ids = model_ids(vocabulary, tokens)
        logits = scripted(ids, t)
    if logits.dim() != 3 or tuple(logits.shape[:2]) != tuple(ids.shape):
        raise ValueError(f"forward returned {tuple(logits.shape)} for ids {tuple(ids.shape)}; expected [B, L, V]")
    if not torch.isfinite(logits).all():
        raise ValueError("forward returned non-finite logits on the probe batch")
    top = max(list(vocabulary["symbols"].values()) + [vocabulary["mask"]] + vocabulary.get("begin", []) +
              vocabulary.get("end", []) + ([vocabulary["pad"]] if vocabulary.get("pad") is not None else []))
    if top >= logits.shape[-1]:
        raise ValueError(f"the vocabulary names id {top}, the model has {logits.shape[-1]} logits")
    scripted.save(model_path)
    with open(vocabulary_path, "w") as out:
        json.dump(dict(vocabulary, size=int(logits.shape[-1])), out, indent=2)
        out.write("\n")
    return scripted


def masked_diffusion_loss(module, vocabulary, x1, mask_token):
    """The masking process's denoising loss in d2dpo's convention: t ~ U(0, 1), each position
    masked with probability 1 - t, cross-entropy of the task's logits at the masked positions."""
    t = torch.rand(x1.shape[0])
    masked = torch.rand(x1.shape) >= t[:, None]
    xt = torch.where(masked, torch.full_like(x1, mask_token), x1)
    logits = task_logits(module, vocabulary, xt, t)
    loss = nn.functional.cross_entropy(logits[masked], x1[masked]) if masked.any() else logits.sum() * 0
    return loss


def read_sequences(path):
    sequences, current = [], None
    with open(path) as lines:
        for line in lines:
            line = line.strip()
            if line.startswith(">"):
                if current:
                    sequences.append(current)
                current = ""
            elif current is not None:
                current += line
            elif line:
                sequences.append(line)
    if current:
        sequences.append(current)
    return sequences


def example(args):
    """`example dit|encoder`: build, pretrain briefly and write an example architecture."""
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.join(here, "examples"))
    torch.manual_seed(args.seed)
    if args.binary_integers:
        n = args.binary_integers
        texts = ["1" * i + "0" * (n - i) for i in range(n + 1)]
    else:
        texts = read_sequences(args.data)
        if not texts:
            sys.exit(f"d2dpo_wrap: {args.data} holds no sequences")
    length = max(len(s) for s in texts)
    symbols = "".join(sorted(set("".join(texts))))
    padded = min(len(s) for s in texts) < length
    if args.architecture == "dit":
        from dit import make_dit
        model, vocabulary = make_dit(symbols, padded, length, args.d_model, args.layers)
    else:
        from encoder import make_encoder
        model, vocabulary = make_encoder(symbols, padded, length, args.d_model, args.layers)
    check_vocabulary(vocabulary)

    token_of = {s: i for i, s in enumerate(sorted(vocabulary["symbols"]))}
    pad_token = len(token_of) if padded else None
    mask_token = len(token_of) + (1 if padded else 0)
    data = torch.tensor([[token_of[c] for c in s] + [pad_token] * (length - len(s)) for s in texts], dtype=torch.long)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    model.train()
    for step in range(1, args.steps + 1):
        x1 = data[torch.randint(0, data.shape[0], (args.batch,))]
        loss = masked_diffusion_loss(model, vocabulary, x1, mask_token)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 100 == 0 or step == args.steps:
            print(f"step {step}: loss {loss.item():.4f}", file=sys.stderr)
    vocabulary_path = os.path.splitext(args.out)[0] + ".vocab.json"
    save(model, vocabulary, length, args.out, vocabulary_path)
    print(f"wrote {args.out} and {vocabulary_path} ({sum(p.numel() for p in model.parameters())} parameters, "
          f"length {length}, symbols {symbols!r}{' + pad' if padded else ''})")


def logits(args):
    """`logits`: the task logits d2dpo reads from a TorchScript file, on fixed inputs, as JSON
    (tokens [B, D] in d2dpo's task tokens, t [B], logits [B, D, S]): to compare a model here and
    in d2dpo, before import and after export."""
    module = torch.jit.load(args.model, map_location="cpu")
    module.eval()
    with open(args.vocabulary) as text:
        vocabulary = json.load(text)
    real = len(vocabulary["symbols"]) + (1 if vocabulary.get("pad") is not None else 0)
    generator = torch.Generator().manual_seed(args.seed)
    tokens = torch.randint(0, real + 1, (args.rows, args.length), generator=generator)
    t = torch.rand(args.rows, generator=generator)
    with torch.no_grad():
        values = task_logits(module, vocabulary, tokens, t)
    with open(args.out, "w") as out:
        json.dump({"tokens": tokens.tolist(), "t": t.tolist(), "logits": values.double().flatten().tolist(),
                   "shape": list(values.shape)}, out)


def main():
    parser = argparse.ArgumentParser(description="d2dpo-studio's model contract from Python")
    commands = parser.add_subparsers(dest="command", required=True)
    make = commands.add_parser("example", help="write an example denoiser (pretrained briefly) in the contract")
    make.add_argument("architecture", choices=["dit", "encoder"])
    source = make.add_mutually_exclusive_group(required=True)
    source.add_argument("--data", help="training sequences: one per line or FASTA")
    source.add_argument("--binary-integers", type=int, metavar="N", help="the paper's task at N bits")
    make.add_argument("--steps", type=int, default=400, help="pretraining steps (0: untrained)")
    make.add_argument("--batch", type=int, default=128)
    make.add_argument("--lr", type=float, default=1e-3)
    make.add_argument("--d-model", type=int, default=64)
    make.add_argument("--layers", type=int, default=2)
    make.add_argument("--seed", type=int, default=0)
    make.add_argument("-o", "--out", required=True, help="the TorchScript file; NAME.vocab.json goes beside it")
    show = commands.add_parser("logits", help="a TorchScript model's task logits on fixed inputs, as JSON")
    show.add_argument("--model", required=True)
    show.add_argument("--vocabulary", required=True)
    show.add_argument("--length", type=int, required=True, help="the task's sequence length D")
    show.add_argument("--rows", type=int, default=8)
    show.add_argument("--seed", type=int, default=0)
    show.add_argument("-o", "--out", required=True)
    args = parser.parse_args()
    example(args) if args.command == "example" else logits(args)


if __name__ == "__main__":
    main()
