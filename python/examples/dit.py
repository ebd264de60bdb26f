# SPDX-License-Identifier: GPL-3.0-or-later
"""A DiT-style masked-diffusion denoiser (as MDLM's backbone): adaLN-Zero time modulation,
rotary position embeddings in attention, time given as a noise level sigma, a head over the whole
vocabulary (symbols, the pad, the mask). Rotary embeddings are relative: in a fully masked
sequence every position would look alike, so a learned absolute position embedding is added to
the input as well (a task such as the paper's, where validity and parity depend on where a run
of ones ends, needs it). d2dpo's own transformer has none of these; d2dpo_wrap's
TimeAsNoiseLevel maps d2dpo's t onto sigma."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotary embedding of x [B, H, L, W] with cos, sin [L, W/2]."""
    half = x.shape[-1] // 2
    x1 = x[..., :half]
    x2 = x[..., half:]
    return torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], -1)


class DiTBlock(nn.Module):
    def __init__(self, d: int, heads: int, conditioning: int):
        super().__init__()
        self.d = d
        self.heads = heads
        self.norm1 = nn.LayerNorm(d, elementwise_affine=False)
        self.norm2 = nn.LayerNorm(d, elementwise_affine=False)
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(approximate="tanh"), nn.Linear(4 * d, d))
        self.ada = nn.Linear(conditioning, 6 * d)
        nn.init.zeros_(self.ada.weight)  # adaLN-Zero: each block starts as the identity
        nn.init.zeros_(self.ada.bias)

    def forward(self, x: torch.Tensor, c: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        b, n, d = x.shape
        m = self.ada(F.silu(c)).unsqueeze(1)
        shift1, scale1, gate1 = m[..., 0:d], m[..., d:2 * d], m[..., 2 * d:3 * d]
        shift2, scale2, gate2 = m[..., 3 * d:4 * d], m[..., 4 * d:5 * d], m[..., 5 * d:6 * d]
        h = self.norm1(x) * (1 + scale1) + shift1
        qkv = self.qkv(h).view(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        q = rotate(qkv[0], cos, sin)
        k = rotate(qkv[1], cos, sin)
        attention = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d // self.heads), -1) @ qkv[2]
        x = x + gate1 * self.out(attention.transpose(1, 2).reshape(b, n, d))
        h = self.norm2(x) * (1 + scale2) + shift2
        return x + gate2 * self.mlp(h)


class DiT(nn.Module):
    """forward(ids [B, L], sigma [B]) -> logits [B, L, V]."""

    def __init__(self, vocab_size: int, max_length: int, d: int = 64, layers: int = 2, heads: int = 4,
                 conditioning: int = 64):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, d)
        self.absolute = nn.Embedding(max_length, d)
        self.time = nn.Sequential(nn.Linear(conditioning, conditioning), nn.SiLU(), nn.Linear(conditioning, conditioning))
        self.blocks = nn.ModuleList([DiTBlock(d, heads, conditioning) for _ in range(layers)])
        self.final_norm = nn.LayerNorm(d, elementwise_affine=False)
        self.final_ada = nn.Linear(conditioning, 2 * d)
        self.head = nn.Linear(d, vocab_size)
        self.conditioning = conditioning
        self.d = d
        width = d // heads
        self.register_buffer("inverse_frequencies", 1.0 / (10000 ** (torch.arange(0, width, 2).float() / width)))

    def forward(self, ids: torch.Tensor, sigma: torch.Tensor) -> torch.Tensor:
        half = self.conditioning // 2
        freqs = torch.exp(-math.log(10000.0) * torch.arange(half, dtype=torch.float32, device=ids.device) / half)
        angles = sigma.float().unsqueeze(1) * freqs.unsqueeze(0)
        c = self.time(torch.cat([angles.cos(), angles.sin()], 1))
        positions = torch.arange(ids.shape[1], dtype=torch.float32, device=ids.device)
        phases = positions.unsqueeze(1) * self.inverse_frequencies.unsqueeze(0)
        cos, sin = phases.cos(), phases.sin()
        x = self.embed(ids) + self.absolute(torch.arange(ids.shape[1], device=ids.device)).unsqueeze(0)
        for block in self.blocks:
            x = block(x, c, cos, sin)
        m = self.final_ada(F.silu(c)).unsqueeze(1)
        x = self.final_norm(x) * (1 + m[..., self.d:]) + m[..., :self.d]
        return self.head(x)


def make_dit(symbols: str, padded: bool, length: int, d_model: int = 64, layers: int = 2):
    """The DiT over ids: the symbols 0..k-1 in their order, then the pad (when lengths vary), then
    the mask, wrapped into d2dpo's contract; returns (module, vocabulary)."""
    from d2dpo_wrap import TimeAsNoiseLevel
    ids = {s: i for i, s in enumerate(symbols)}
    pad = len(symbols) if padded else None
    mask = len(symbols) + (1 if padded else 0)
    vocabulary = {"symbols": ids, "mask": mask, "begin": [], "end": []}
    if pad is not None:
        vocabulary["pad"] = pad
    model = TimeAsNoiseLevel(DiT(mask + 1, length, d=d_model, layers=layers, heads=4, conditioning=d_model))
    return model, vocabulary
