# SPDX-License-Identifier: GPL-3.0-or-later
"""The Python eager side of bench/scale.sh: the same ESM2-shaped model (python/examples/esm2.py,
same seed, so the same weights) timed in PyTorch eager mode on what d2dpo does with it:
- a labelable pair with the exact sampler: L passes of a batch of 2 (one position per pass);
- a pair with the confident sampler at K passes: K passes of a batch of 2;
- a D2-DPO step at P pairs: policy forward and backward on winners and losers at one masking
  level each, the frozen reference forward without gradients, the sigmoid loss, one Adam step.
Prints one JSON object: seconds per pair (each sampler), seconds per D2-DPO step (each P), peak
resident MiB (and on a GPU the peak of PyTorch's CUDA memory, reserved, in MiB); on a CPU also the
arithmetic of a step (GFLOP of its matrix products, forward and backward, counted by PyTorch's
profiler on one step) and the machine's SGEMM rate (1024^3 products at the same thread count), so
that a step's time reads as a share of what the machine can do.
    python3 bench/scale_peer.py 8M --length 150 --threads 1 --pairs 8,32 --passes 16 [--device cuda]
"""
import argparse
import copy
import json
import os
import resource
import statistics
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python", "examples"))
import esm2  # noqa: E402


def synchronize(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def timed(call, min_seconds, device, warmup=1):
    for _ in range(warmup):
        call()
    synchronize(device)
    times = []
    started = time.perf_counter()
    while not times or time.perf_counter() - started < min_seconds:
        t0 = time.perf_counter()
        call()
        synchronize(device)  # a GPU's work is queued: the time is of the work done, not of the queueing
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("size", choices=sorted(esm2.SHAPES))
    parser.add_argument("--length", type=int, default=150)
    parser.add_argument("--time", action="store_true")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--pairs", default="8,32")
    parser.add_argument("--passes", type=int, default=16)
    parser.add_argument("--min-seconds", type=float, default=3.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N")
    args = parser.parse_args()
    device = torch.device(args.device)
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    model, vocabulary = esm2.make_esm2(args.size, args.time)
    model.to(device)
    residues = torch.tensor(list(vocabulary["symbols"].values()), device=device)
    L = args.length

    def framed(body):
        b = body.shape[0]
        return torch.cat([torch.zeros(b, 1, dtype=torch.long, device=device), body,
                          torch.full((b, 1), 2, dtype=torch.long, device=device)], 1)

    def passes(count):
        x = framed(torch.full((2, L), 32, dtype=torch.long, device=device))
        t = torch.zeros(2, device=device)
        with torch.inference_mode():
            for _ in range(count):
                model(x, t)

    model.eval()
    result = {"size": args.size, "length": L, "threads": args.threads, "time_conditioned": args.time,
              "parameters": sum(p.numel() for p in model.parameters()),
              "device": str(device),
              "runtime": f"python {torch.__version__}, {torch.get_num_threads()} thread(s), {device}"}
    # The exact sampler's L passes are timed as a share of them (the cost per pass is flat).
    share = max(1, L // 10)
    result["exact_seconds_per_pair"] = timed(lambda: passes(share), args.min_seconds / 2, device) * L / share
    result[f"confident{args.passes}_seconds_per_pair"] = timed(lambda: passes(args.passes), args.min_seconds / 2, device)

    model.train()
    reference = copy.deepcopy(model).eval()
    for p in reference.parameters():
        p.requires_grad_(False)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-5)

    def step(pairs):
        winners = framed(residues[torch.randint(0, len(residues), (pairs, L), device=device)])
        losers = framed(residues[torch.randint(0, len(residues), (pairs, L), device=device)])
        t = torch.rand(pairs, device=device)
        masked = torch.rand(pairs, L + 2, device=device) >= t.unsqueeze(1)
        masked[:, 0] = False
        masked[:, -1] = False
        both = torch.cat([winners, losers])
        noisy = torch.where(torch.cat([masked, masked]), torch.full_like(both, 32), both)
        tt = torch.cat([t, t])

        def log_likelihood(net):
            logp = F.log_softmax(net(noisy, tt)[..., residues], -1)
            index = torch.searchsorted(residues, both.clamp(min=int(residues[0]))).clamp(max=len(residues) - 1)
            picked = logp.gather(-1, index.unsqueeze(-1)).squeeze(-1)
            return (picked * torch.cat([masked, masked])).sum(1) / (1 - tt).clamp(min=1e-3)

        with torch.no_grad():
            ref = log_likelihood(reference)
        pol = log_likelihood(model)
        margin = (pol[:pairs] - ref[:pairs]) - (pol[pairs:] - ref[pairs:])
        loss = -F.logsigmoid(0.1 * margin).mean()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()

    for pairs in (int(p) for p in args.pairs.split(",") if p):
        result[f"dpo_seconds_per_step_{pairs}"] = timed(lambda: step(pairs), args.min_seconds, device)
        if device.type == "cpu":
            with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], with_flops=True) as profiled:
                step(pairs)
            result[f"dpo_gflop_per_step_{pairs}"] = sum(e.flops for e in profiled.key_averages()) / 1e9
    if device.type == "cpu":
        a, b = torch.randn(1024, 1024), torch.randn(1024, 1024)
        result["sgemm_gflops"] = 2 * 1024**3 / timed(lambda: torch.mm(a, b), 1.0, device) / 1e9
    result["peak_resident_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if device.type == "cuda":
        result["peak_cuda_reserved_mib"] = torch.cuda.max_memory_reserved(device) / 2**20
    print(json.dumps(result))


if __name__ == "__main__":
    main()
