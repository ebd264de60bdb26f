#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""The same denoiser, D2-DPO step, pretraining step and Euler sampler as d2dpo's core, written in
plain PyTorch, timed the way `d2dpo bench` times them, so the two can be compared at the same
thread count (and on the same GPU with --device cuda). Run with Debian's /usr/bin/python3 and
python3-torch (the same LibTorch 1.13), or with any PyTorch.

Prints JSON shaped like `d2dpo bench --json`.
"""
import argparse
import json
import math
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

SETTINGS = {
    "small": dict(d_model=64, layers=2, heads=4, length=16, batch=64),
    "large": dict(d_model=256, layers=4, heads=8, length=64, batch=256),
    "long": dict(d_model=64, layers=2, heads=4, length=256, batch=64),
}
VOCAB = 2          # binary-integers: tokens 0, 1; the mask is token 2
T_EPSILON = 1e-3   # t ~ U[0, 1 - T_EPSILON] for D2-DPO, as in core/config.h
BETA = 0.1
DEVICE = torch.device("cpu")  # --device


class Block(nn.Module):
    """Pre-norm transformer block, batch first (core/transformerblock.cpp)."""

    def __init__(self, d, heads, ff):
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, d)
        self.norm2 = nn.LayerNorm(d)
        self.ff1 = nn.Linear(d, ff)
        self.ff2 = nn.Linear(ff, d)

    def forward(self, x):
        b, n, d = x.shape
        hd = d // self.heads
        qkv = self.qkv(self.norm1(x)).view(b, n, 3, self.heads, hd).permute(2, 0, 3, 1, 4)
        scores = torch.matmul(qkv[0], qkv[1].transpose(-2, -1)) * (1.0 / math.sqrt(hd))
        attended = torch.matmul(scores.softmax(-1), qkv[2])
        h = x + self.out(attended.transpose(1, 2).reshape(b, n, d))
        return h + self.ff2(F.gelu(self.ff1(self.norm2(h))))


class Denoiser(nn.Module):
    """core/denoiser.cpp: token (S+1), position and time embeddings, blocks, norm, head over S."""

    def __init__(self, length, d, layers, heads, ff_mult=4):
        super().__init__()
        self.d = d
        self.tokens = nn.Embedding(VOCAB + 1, d)
        self.positions = nn.Embedding(length, d)
        self.time1 = nn.Linear(d, d)
        self.time2 = nn.Linear(d, d)
        self.blocks = nn.ModuleList(Block(d, heads, ff_mult * d) for _ in range(layers))
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, VOCAB)
        self.register_buffer("position_ids", torch.arange(length))
        with torch.no_grad():
            self.tokens.weight.normal_(0, 0.02)
            self.positions.weight.normal_(0, 0.02)

    def time_embedding(self, t):
        half = self.d // 2
        freqs = torch.exp(torch.arange(half, dtype=t.dtype, device=t.device) * (-math.log(10000.0) / half))
        args = (t * 1000).unsqueeze(1) * freqs.unsqueeze(0)
        return self.time2(F.silu(self.time1(torch.cat([args.sin(), args.cos()], 1))))

    def forward(self, x, t):
        h = self.tokens(x) + self.positions(self.position_ids).unsqueeze(0)
        h = h + self.time_embedding(t).unsqueeze(1)
        for block in self.blocks:
            h = block(h)
        return self.head(self.norm(h))


def encode(values, length):
    return (torch.arange(length, device=values.device).unsqueeze(0) < values.unsqueeze(1)).long()


def corrupt(x1, t):
    keep = torch.rand(x1.shape, device=x1.device) < t.unsqueeze(1)
    return torch.where(keep, x1, torch.full_like(x1, VOCAB))


def pretrain_step(model, optimizer, batch, length):
    x1 = encode(torch.randint(0, length + 1, (batch,), device=DEVICE), length)
    t = torch.rand(batch, device=DEVICE)
    xt = corrupt(x1, t)
    logits = model(xt, t)
    nll = F.cross_entropy(logits.reshape(-1, VOCAB), x1.reshape(-1), reduction="none").view_as(x1)
    masked = (xt == VOCAB).float()
    loss = (nll * masked).sum() / masked.sum().clamp_min(1)
    value = loss.item()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return value


def dpo_step(policy, reference, optimizer, winners, losers, batch):
    index = torch.randint(0, winners.shape[0], (batch,), device=DEVICE)
    w, l = winners[index], losers[index]
    t = torch.rand(batch, device=DEVICE) * (1 - T_EPSILON)
    t_both = torch.cat([t, t])
    x1 = torch.cat([w, l])
    xt = corrupt(x1, t_both)
    logp_theta = torch.log_softmax(policy(xt, t_both), -1)
    with torch.no_grad():
        logp_ref = torch.log_softmax(reference(xt, t_both), -1)
    idx = x1.unsqueeze(-1)
    log_ratio = (logp_theta.gather(-1, idx) - logp_ref.gather(-1, idx)).squeeze(-1)
    divergence = (1 / (1 - t_both)) * ((xt == VOCAB).float() * log_ratio).sum(1)
    loss = -F.logsigmoid(BETA * (divergence[:batch] - divergence[batch:])).mean()
    value = loss.item()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return value


@torch.inference_mode()
def sample(model, count, length, steps):
    x = torch.full((count, length), VOCAB, dtype=torch.long, device=DEVICE)
    dt = 1.0 / steps
    for k in range(steps):
        t = k * dt
        masked = x == VOCAB
        logits = model(x, torch.full((count,), t, device=DEVICE))
        u = torch.rand(logits.shape, device=DEVICE).clamp_(1e-20, 1.0 - 1e-7)
        tokens = (logits - torch.log(-torch.log(u))).argmax(-1)
        p = 1.0 if k == steps - 1 else min(1.0, dt / (1 - t))
        x = torch.where(masked & (torch.rand(x.shape, device=DEVICE) < p), tokens, x)
    return x


def median_seconds(call, warmup, min_seconds):
    """As core's bench: after warm-up, time calls until min_seconds passed and 3 calls ran,
    except that one call longer than min_seconds is enough."""
    def sync():
        if DEVICE.type == "cuda":
            torch.cuda.synchronize()

    for _ in range(warmup):
        call()
    sync()
    times = []
    start = time.perf_counter()
    while (not times or (len(times) < 3 and times[0] < min_seconds)
           or time.perf_counter() - start < min_seconds):
        t0 = time.perf_counter()
        call()
        sync()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def measure(name, s, args):
    torch.manual_seed(args.seed)
    length, batch = s["length"], s["batch"]
    make = lambda: Denoiser(length, s["d_model"], s["layers"], s["heads"]).to(DEVICE)

    model = make()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    pretrain = 1.0 / median_seconds(lambda: pretrain_step(model, optimizer, batch, length), args.warmup,
                                    args.min_seconds)

    policy = make()
    reference = make()
    reference.load_state_dict(policy.state_dict())
    for p in reference.parameters():
        p.requires_grad_(False)
    optimizer = torch.optim.Adam(policy.parameters(), lr=1e-4)
    odd = torch.randint(0, (length + 1) // 2, (4096,), device=DEVICE) * 2 + 1
    even = torch.randint(0, length // 2 + 1, (4096,), device=DEVICE) * 2
    winners, losers = encode(odd, length), encode(even, length)
    dpo = 1.0 / median_seconds(lambda: dpo_step(policy, reference, optimizer, winners, losers, batch),
                               args.warmup, args.min_seconds)

    model = make().eval()
    sampling = batch / median_seconds(lambda: sample(model, batch, length, args.sampling_steps), 1,
                                      args.min_seconds)
    return {"setting": name, **s, "sampling_steps": args.sampling_steps,
            "parameters": sum(p.numel() for p in model.parameters()),
            "dpo_steps_per_second": dpo, "pretrain_steps_per_second": pretrain,
            "sampling_sequences_per_second": sampling}


def measure_example(architecture, args):
    """A model brought in, trained in Python eager: the example architecture of python/examples
    (the one `d2dpo bench -c imported.d2dpo` times as TorchScript), reading d2dpo's task tokens
    through the vocabulary contract as d2dpo does (python/d2dpo_wrap.task_logits)."""
    import os
    import sys
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python")
    sys.path[:0] = [here, os.path.join(here, "examples")]
    import d2dpo_wrap
    from dit import make_dit
    from encoder import make_encoder
    torch.manual_seed(args.seed)
    length, batch = args.length, args.batch
    make = make_dit if architecture == "dit" else make_encoder
    policy, vocabulary = make("01", False, length, args.d_model, args.layers)
    reference, _ = make("01", False, length, args.d_model, args.layers)
    reference.load_state_dict(policy.state_dict())
    for p in reference.parameters():
        p.requires_grad_(False)
    reference.eval()
    policy.to(DEVICE)
    reference.to(DEVICE)
    forward = lambda model: (lambda xt, t: d2dpo_wrap.task_logits(model, vocabulary, xt, t))
    optimizer = torch.optim.Adam(policy.parameters(), lr=1e-4)
    odd = torch.randint(0, (length + 1) // 2, (4096,), device=DEVICE) * 2 + 1
    even = torch.randint(0, length // 2 + 1, (4096,), device=DEVICE) * 2
    winners, losers = encode(odd, length), encode(even, length)
    dpo = 1.0 / median_seconds(lambda: dpo_step(forward(policy), forward(reference), optimizer, winners, losers,
                                                batch), args.warmup, args.min_seconds)
    return {"setting": "example-" + architecture, "length": length, "batch": batch,
            "parameters": sum(p.numel() for p in policy.parameters()), "dpo_steps_per_second": dpo}


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--example", choices=["dit", "encoder"],
                        help="time D2-DPO on an example architecture of python/examples instead of the settings")
    parser.add_argument("--length", type=int, default=16, help="--example: sequence length")
    parser.add_argument("--batch", type=int, default=64, help="--example: pairs per step")
    parser.add_argument("--d-model", type=int, default=64, help="--example: width")
    parser.add_argument("--layers", type=int, default=2, help="--example: layers")
    parser.add_argument("--settings", default="small,large")
    parser.add_argument("--threads", type=int, default=0, help="0: PyTorch's default")
    parser.add_argument("--sampling-steps", type=int, default=64)
    parser.add_argument("--min-seconds", type=float, default=3.0)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N")
    args = parser.parse_args()
    global DEVICE
    DEVICE = torch.device(args.device)
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    if args.example:
        results = [measure_example(args.example, args)]
    else:
        results = [measure(name, SETTINGS[name], args) for name in args.settings.split(",")]
    runtime = f"python {torch.__version__}, device {DEVICE}, {torch.get_num_threads()} intra-op thread(s)"
    if DEVICE.type == "cuda":
        runtime += f", {torch.cuda.get_device_name(DEVICE)}, peak {torch.cuda.max_memory_allocated(DEVICE) / 2**20:.0f} MiB"
    print(json.dumps({"runtime": runtime, "results": results}, indent=2))


if __name__ == "__main__":
    main()
