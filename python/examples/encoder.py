# SPDX-License-Identifier: GPL-3.0-or-later
"""A denoiser built on PyTorch's nn.TransformerEncoder with an ESM-like vocabulary: <cls> (0),
<pad> (1) and <eos> (2) first, the symbols after them with the mask id in the middle of them and
an unused <unk> at the end, every sequence framed by <cls> ... <eos>. It takes d2dpo's t directly
(a learned embedding of t added to every position)."""
import torch
import torch.nn as nn


class EncoderDenoiser(nn.Module):
    """forward(tokens [B, L], t [B]) -> logits [B, L, V]: d2dpo's contract as it is."""

    def __init__(self, vocab_size: int, max_length: int, d: int = 64, layers: int = 2, heads: int = 4):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, d)
        self.positions = nn.Parameter(torch.randn(max_length, d) * 0.02)
        self.time = nn.Sequential(nn.Linear(1, d), nn.SiLU(), nn.Linear(d, d))
        layer = nn.TransformerEncoderLayer(d, heads, dim_feedforward=4 * d, dropout=0.0, batch_first=True,
                                           norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab_size)

    def forward(self, tokens: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        h = self.embed(tokens) + self.positions[: tokens.shape[1]].unsqueeze(0)
        h = h + self.time(t.float().unsqueeze(1)).unsqueeze(1)
        return self.head(self.norm(self.encoder(h)))


def make_encoder(symbols: str, padded: bool, length: int, d_model: int = 64, layers: int = 2):
    """Ids: <cls> 0, <pad> 1, <eos> 2, the first half of the symbols, <mask>, the rest, <unk>."""
    ids = {}
    next_id = 3
    middle = len(symbols) // 2
    for i, s in enumerate(symbols):
        if i == middle:
            mask = next_id
            next_id += 1
        ids[s] = next_id
        next_id += 1
    vocab_size = next_id + 1  # <unk>
    vocabulary = {"symbols": ids, "mask": mask, "begin": [0], "end": [2]}
    if padded:
        vocabulary["pad"] = 1
    return EncoderDenoiser(vocab_size, length + 2, d_model, layers), vocabulary
