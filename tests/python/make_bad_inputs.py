#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Writes the models and vocabularies `d2dpo import` must refuse (tests/cli/tst_import.cpp), each
made by Python's torch as a user would make it by mistake, and one small valid pair beside them."""
import json
import os
import sys

import torch
import torch.nn as nn


class Tiny(nn.Module):
    """A valid denoiser over 3 ids ('0', '1', the mask)."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(3, 8)
        self.head = nn.Linear(8, 3)

    def forward(self, tokens: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        return self.head(self.embed(tokens) + t[:, None, None])


class OneArgument(Tiny):
    def forward(self, tokens: torch.Tensor) -> torch.Tensor:  # no t
        return self.head(self.embed(tokens))


class WrongShape(Tiny):
    def forward(self, tokens: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        return self.head(self.embed(tokens)).sum(-1)  # [B, L], not [B, L, V]


class NotFinite(Tiny):
    def forward(self, tokens: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        return self.head(self.embed(tokens)) + torch.log(t)[:, None, None]  # -inf at t = 0


class Throws(Tiny):
    def forward(self, tokens: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        if tokens.shape[1] > 0:
            raise RuntimeError("this model only runs on sequences of length 0")
        return self.head(self.embed(tokens))


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    torch.jit.script(Tiny()).save(os.path.join(out, "tiny.pt"))
    for name, cls in [("one-argument", OneArgument), ("wrong-shape", WrongShape), ("not-finite", NotFinite),
                      ("throws", Throws)]:
        torch.jit.script(cls()).save(os.path.join(out, name + ".pt"))
    torch.save(Tiny().state_dict(), os.path.join(out, "state-dict.pt"))
    torch.save(Tiny().state_dict(), os.path.join(out, "legacy-pickle.pt"), _use_new_zipfile_serialization=False)

    vocabularies = {
        "tiny": {"symbols": {"0": 0, "1": 1}, "mask": 2},
        "out-of-range": {"symbols": {"0": 0, "1": 1}, "mask": 7},
        "no-mask": {"symbols": {"0": 0, "1": 1}},
        "collide": {"symbols": {"0": 0, "1": 0}, "mask": 2},
        "mask-is-symbol": {"symbols": {"0": 0, "1": 1}, "mask": 1},
        "long-symbol": {"symbols": {"ab": 0, "1": 1}, "mask": 2},
    }
    for name, vocabulary in vocabularies.items():
        with open(os.path.join(out, name + ".vocab.json"), "w") as f:
            json.dump(vocabulary, f)
    with open(os.path.join(out, "twice-mask.vocab.json"), "w") as f:
        f.write('{"symbols": {"0": 0, "1": 1}, "mask": 2, "mask": 1}\n')
    print("ok")


if __name__ == "__main__":
    main()
