#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Runs `d2dpo bench` and the plain-PyTorch peer (pytorch_peer.py) one after the other at the
same settings and thread count, and prints each figure with the ratio C++ / Python.

    /usr/bin/python3 bench/compare.py [--settings small,large,long] [--threads 1] [--repeats 1]

Needs a built d2dpo (build/release/app/d2dpo by default) and Debian's python3-torch.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FIGURES = [("dpo_steps_per_second", "D2-DPO steps/s"),
           ("pretrain_steps_per_second", "pretrain steps/s"),
           ("sampling_sequences_per_second", "sampling seq/s")]


def run_json(command):
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--d2dpo", default=os.path.join(HERE, "..", "build", "release", "app", "d2dpo"))
    parser.add_argument("--settings", default="small,large")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--sampling-steps", type=int, default=64)
    parser.add_argument("--min-seconds", type=float, default=3.0)
    parser.add_argument("--repeats", type=int, default=1, help="runs of each side; medians are reported")
    args = parser.parse_args()
    if not os.path.exists(args.d2dpo):
        sys.exit(f"compare: {args.d2dpo} not found; build first (bash packaging/setup.sh)")

    common = ["--settings", args.settings, "--threads", str(args.threads),
              "--sampling-steps", str(args.sampling_steps), "--min-seconds", str(args.min_seconds)]
    runs = {"C++": [], "Python": []}
    for _ in range(args.repeats):
        runs["C++"].append(run_json([args.d2dpo, "bench", "--json", *common]))
        runs["Python"].append(run_json([sys.executable, os.path.join(HERE, "pytorch_peer.py"), *common]))

    def median(side, setting, key):
        return statistics.median(r[key] for run in runs[side] for r in run["results"] if r["setting"] == setting)

    print(f"C++:    {runs['C++'][0]['runtime']}")
    print(f"Python: {runs['Python'][0]['runtime']}")
    print(f"{args.threads} thread(s), {args.sampling_steps} Euler steps, medians of {args.repeats} run(s)\n")
    print(f"{'setting':8} {'figure':18} {'C++':>10} {'Python':>10} {'C++/Python':>11}")
    for setting in args.settings.split(","):
        for key, label in FIGURES:
            c, p = median("C++", setting, key), median("Python", setting, key)
            print(f"{setting:8} {label:18} {c:10.2f} {p:10.2f} {c / p:10.2f}x")


if __name__ == "__main__":
    main()
