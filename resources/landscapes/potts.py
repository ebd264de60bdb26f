#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""A small synthetic fitness landscape to test the whole measurements loop end to end.

Real assays are slow and their ground truth unknown; here the truth is a formula, so a fine-tuned
model's samples can be scored exactly. The landscape is a Potts model on a chain, over a protein-
like family of length L = 12 on a reduced alphabet of q = 6 amino acids (ADEKLS):

    E(x) = sum_i h_i(x_i) + sum_{i<j, j-i<=2} J_ij(x_i, x_j)
    fitness(x) = E(x) - E(wt)

with fields h_i(a) ~ N(0, 1) and couplings J_ij(a, b) ~ N(0, 0.7^2) between neighbours and next
neighbours (epistasis: a mutation's effect depends on its neighbours). The wild type wt is a
uniformly random sequence, so many of its single mutants are beneficial (41 of 60 at landscape 1)
and the best sequence lies many mutations away (11 of 12 positions at landscape 1). Couplings only within a band of 2 keep the exact optimum
computable (dynamic programming over pairs of neighbouring symbols), so `describe` can say how far
a model is from the best possible.

Everything is drawn from `--landscape K` (default 1) with Python's own Mersenne Twister and no
third-party module: the same K gives the same landscape on every machine. `--seed` draws the
sequences of `family` and `measure` only.

    potts.py describe                                   # wt, optimum, and their fitness (JSON)
    potts.py family --seed 1 --n 2000 -o family.txt     # wt and its random 1-4-point mutants
    potts.py measure --seed 2 --n 3000 --noise 0.5 -o assay.csv [--format proteingym]
    potts.py score samples.txt                          # mean fitness and valid share (JSON)

`family` is what a reference model is pretrained on (`d2dpo pretrain --data family.txt`);
`measure` is a noisy deep mutational scan of other random 1-4-point mutants (a table with
`sequence,value`, or ProteinGym's `mutant,mutated_sequence,DMS_score` for `--wild-type`), which
`d2dpo measurements import` reads; `score` reads one sequence per line (`d2dpo sample -o` writes
the sequence, then a tab and what the task reads in it: only the first field counts).
"""

import argparse
import json
import math
import random
import sys

ALPHABET = "ADEKLS"
LENGTH = 12
BAND = 2  # couplings between positions at most this far apart
FIELD_SD = 1.0
COUPLING_SD = 0.7
MAX_MUTATIONS = 4


class Landscape:
    """The fields, couplings and wild type drawn from one landscape seed."""

    def __init__(self, seed):
        rng = random.Random(seed)
        q = len(ALPHABET)
        self.h = [[rng.gauss(0.0, FIELD_SD) for _ in range(q)] for _ in range(LENGTH)]
        # J[i][k] couples position i with i + 1 + k: a q x q table each.
        self.j = [[[[rng.gauss(0.0, COUPLING_SD) for _ in range(q)] for _ in range(q)]
                   for _ in range(min(BAND, LENGTH - 1 - i))] for i in range(LENGTH)]
        self.wt = "".join(rng.choice(ALPHABET) for _ in range(LENGTH))
        self.wt_energy = self.energy(self.wt)

    def energy(self, seq):
        x = [ALPHABET.index(c) for c in seq]
        e = sum(self.h[i][x[i]] for i in range(LENGTH))
        for i in range(LENGTH):
            for k, table in enumerate(self.j[i]):
                e += table[x[i]][x[i + 1 + k]]
        return e

    def fitness(self, seq):
        return self.energy(seq) - self.wt_energy

    def optimum(self):
        """The fittest sequence, exactly: the chain's couplings reach back two positions, so a
        Viterbi pass over the states (x_{i-1}, x_i) finds it in L q^3 steps."""
        q = len(ALPHABET)
        # best[(a, b)]: the best energy of x_0..x_i with x_{i-1} = a, x_i = b; back: the argmax.
        best = {}
        for a in range(q):
            for b in range(q):
                best[(a, b)] = self.h[0][a] + self.h[1][b] + self.j[0][0][a][b]
        back = []
        for i in range(2, LENGTH):
            nxt, arg = {}, {}
            for b in range(q):
                for c in range(q):
                    value, a = max((best[(a, b)] + self.j[i - 2][1][a][c], a) for a in range(q))
                    nxt[(b, c)] = value + self.h[i][c] + self.j[i - 1][0][b][c]
                    arg[(b, c)] = a
            best = nxt
            back.append(arg)
        (b, c), value = max(best.items(), key=lambda item: item[1])
        x = [b, c]
        for arg in reversed(back):
            x.insert(0, arg[(x[0], x[1])])
        seq = "".join(ALPHABET[k] for k in x)
        return seq, value - self.wt_energy


def mutant(landscape, rng, count):
    """The wild type with `count` distinct positions changed, each to another symbol; the
    ProteinGym mutant string (A3G:L5P, 1-based) with it."""
    seq = list(landscape.wt)
    names = []
    for pos in sorted(rng.sample(range(LENGTH), count)):
        new = rng.choice([c for c in ALPHABET if c != seq[pos]])
        names.append(f"{seq[pos]}{pos + 1}{new}")
        seq[pos] = new
    return "".join(seq), ":".join(names)


def open_out(path):
    return sys.stdout if path in (None, "-") else open(path, "w", encoding="ascii", newline="\n")


def cmd_describe(landscape, _args):
    best, best_fitness = landscape.optimum()
    print(json.dumps({"alphabet": ALPHABET, "length": LENGTH, "wild_type": landscape.wt,
                      "optimum": best, "optimum_fitness": round(best_fitness, 4)}))


def cmd_family(landscape, args):
    rng = random.Random(args.seed)
    with open_out(args.out) as out:
        out.write(landscape.wt + "\n")
        for _ in range(args.n - 1):
            out.write(mutant(landscape, rng, rng.randint(1, MAX_MUTATIONS))[0] + "\n")


def cmd_measure(landscape, args):
    # A stream of its own (seed + a constant): measured variants are other draws than the family's
    # even when one seed is given to both.
    rng = random.Random(args.seed * 1000003 + 17)
    with open_out(args.out) as out:
        out.write("sequence,value\n" if args.format == "table" else "mutant,mutated_sequence,DMS_score\n")
        for _ in range(args.n):
            seq, name = mutant(landscape, rng, rng.randint(1, MAX_MUTATIONS))
            value = landscape.fitness(seq) + rng.gauss(0.0, args.noise)
            if args.format == "table":
                out.write(f"{seq},{value:.6f}\n")
            else:
                out.write(f"{name},{seq},{value:.6f}\n")


def cmd_score(landscape, args):
    with open(args.file, encoding="utf-8") as f:
        lines = [line.split("\t", 1)[0].strip() for line in f]
    seqs = [s for s in lines if s]
    valid = [s for s in seqs if len(s) == LENGTH and all(c in ALPHABET for c in s)]
    values = [landscape.fitness(s) for s in valid]
    n = len(values)
    # None (JSON null) where a figure has no samples to stand on: NaN is not JSON.
    mean = sum(values) / n if n else None
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)) if n > 1 else None
    distances = [sum(a != b for a, b in zip(s, landscape.wt)) for s in valid]
    print(json.dumps({
        "count": len(seqs),
        "valid_share": round(n / len(seqs), 4) if seqs else 0.0,
        "mean_fitness": round(mean, 4) if n else None,
        "sd_fitness": round(sd, 4) if n > 1 else None,
        "se_fitness": round(sd / math.sqrt(n), 4) if n > 1 else None,
        "best_fitness": round(max(values), 4) if values else None,
        "better_than_wt_share": round(sum(v > 0 for v in values) / n, 4) if n else 0.0,
        "mean_mutations": round(sum(distances) / n, 4) if n else None,
        "unique_share": round(len(set(valid)) / n, 4) if n else 0.0,
    }))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--landscape", type=int, default=1, help="seed of the fields, couplings and wild type")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("describe", help="the wild type, the optimum and their fitness as JSON")
    family = sub.add_parser("family", help="the wild type and its random 1-4-point mutants, one a line")
    measure = sub.add_parser("measure", help="noisy fitness of random 1-4-point mutants, as CSV")
    for p in (family, measure):
        p.add_argument("--seed", type=int, default=1, help="seed of the sequences drawn")
        p.add_argument("--n", type=int, default=2000, help="how many sequences")
        p.add_argument("-o", "--out", help="output file (default: standard output)")
    measure.add_argument("--noise", type=float, default=0.5, help="sd of the Gaussian measurement noise")
    measure.add_argument("--format", choices=("table", "proteingym"), default="table",
                         help="table: sequence,value; proteingym: mutant,mutated_sequence,DMS_score")
    score = sub.add_parser("score", help="mean fitness and valid share of a file of sequences (JSON)")
    score.add_argument("file")
    args = parser.parse_args()
    if getattr(args, "n", 1) < 1:
        parser.error("--n must be at least 1")
    landscape = Landscape(args.landscape)
    {"describe": cmd_describe, "family": cmd_family, "measure": cmd_measure, "score": cmd_score}[args.command](landscape, args)


if __name__ == "__main__":
    main()
