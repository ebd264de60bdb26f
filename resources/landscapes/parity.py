#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""The paper's task as measurements: a table `d2dpo measurements import` reads.

The binary-integers task of length N encodes the integer i (0..N) as i ones, then N - i zeros. The
paper prefers odd integers; here each encoding is "measured" `--replicates` times and valued by
the parity of its integer plus Gaussian noise:

    value(b_i) = (i mod 2) + e,    e ~ N(0, noise^2)

so that the assay ranks as the paper's rule does (odd over even), up to the noise, and a model
fine-tuned on the measured pairs can be compared with one fine-tuned on clicks (`d2dpo eval`'s
odd_ratio). Python's own Mersenne Twister and no third-party module: the same seed gives the same
file on every machine.

    parity.py --length 6 --replicates 10 --noise 0.1 --seed 7 -o parity.csv
"""

import argparse
import random
import sys


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--length", type=int, default=6, help="N, the task's sequence length")
    parser.add_argument("--replicates", type=int, default=10, help="measurements of each integer")
    parser.add_argument("--noise", type=float, default=0.1, help="sd of the Gaussian noise")
    parser.add_argument("--seed", type=int, default=7, help="seed of the noise")
    parser.add_argument("-o", "--out", help="output file (default: standard output)")
    args = parser.parse_args()
    if args.length < 2 or args.replicates < 1 or args.noise < 0:
        parser.error("--length must be at least 2, --replicates at least 1, --noise at least 0")
    rng = random.Random(args.seed)
    out = sys.stdout if args.out in (None, "-") else open(args.out, "w", encoding="ascii", newline="\n")
    with out:
        out.write("sequence,value\n")
        for _ in range(args.replicates):
            for i in range(args.length + 1):
                value = (i % 2) + rng.gauss(0.0, args.noise)
                out.write(f"{'1' * i}{'0' * (args.length - i)},{value:.6f}\n")


if __name__ == "__main__":
    main()
