#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# What `--precision bf16` costs on what is learnt, against float32, from the same start and seed:
#   1. the paper's experiment: one reference pretrained at float32, then D2-DPO at each precision
#      (`d2dpo reproduce --reference`): the loss curve and the evaluations (odd ratio, VSR);
#   2. a protein model: a random-weight ESM2 checkpoint in transformers' layout (SIZE, default 8M)
#      imported with random 30-residue sequences and a composition rule, D2-DPO on rule-made pairs at
#      each precision: the loss at every step.
# The speed and the log-probability gap are bench/esm_native.sh's. Needs a CPU with bf16 units.
#     bash bench/bf16_quality.sh
#     PAPER_STEPS=300 PROTEIN_STEPS=40 SIZE=35M bash bench/bf16_quality.sh
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
d2dpo=${D2DPO:-$here/build/release/app/d2dpo}
python=${PYTHON:-/usr/bin/python3}
paper_steps=${PAPER_STEPS:-300}
protein_steps=${PROTEIN_STEPS:-30}
size=${SIZE:-8M}
threads=${THREADS:-2}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

summary() { # summary TITLE FOLDER_FLOAT32 FOLDER_BF16
    "$python" - "$@" <<'PY'
import csv, sys
title, a, b = sys.argv[1:4]
rows = lambda folder, name: list(csv.DictReader(open(f"{folder}/{name}")))
la, lb = rows(a, "d2dpo.csv"), rows(b, "d2dpo.csv")
gaps = [abs(float(x["loss"]) - float(y["loss"])) for x, y in zip(la, lb)]
print(f"\n{title}: D2-DPO loss, float32 against bf16 ({len(la)} steps)")
marks = sorted({0, len(la) // 4, len(la) // 2, 3 * len(la) // 4, len(la) - 1})
for i in marks:
    print(f"  step {la[i]['step']:>5}: {float(la[i]['loss']):.4f}  {float(lb[i]['loss']):.4f}")
mean = lambda xs: sum(xs) / len(xs)
tail = max(1, len(la) // 5)
print(f"  largest |gap| {max(gaps):.4f}, mean |gap| {mean(gaps):.4f}; mean loss of the last {tail} steps "
      f"{mean([float(x['loss']) for x in la[-tail:]]):.4f} (float32) and {mean([float(y['loss']) for y in lb[-tail:]]):.4f} (bf16)")
try:
    ea, eb = rows(a, "evaluations.csv"), rows(b, "evaluations.csv")
except FileNotFoundError:
    sys.exit(0)
if ea:
    names = [n for n in ea[0] if n != "step" and ea[0][n] != ""]
    print("  evaluations (float32 | bf16): " + ", ".join(names))
    for x, y in zip(ea, eb):
        print(f"  step {x['step']:>5}: " + "  ".join(f"{float(x[n]):.3f}|{float(y[n]):.3f}" for n in names))
PY
}

echo "d2dpo: $("$d2dpo" --version | head -1); $threads threads"
"$d2dpo" pretrain -o "$work/ref.d2dpo" --seed 1 --threads "$threads" >/dev/null 2>&1
for p in float32 bf16; do
    "$d2dpo" reproduce --reference "$work/ref.d2dpo" --precision "$p" --steps "$paper_steps" --seed 1 \
        --threads "$threads" -o "$work/paper-$p" >/dev/null 2>&1
done
summary "The paper's experiment" "$work/paper-float32" "$work/paper-bf16"

"$python" "$here/python/esm_published.py" write "$work/esm" --size "$size" --seed 11
"$python" - "$work/proteins.txt" <<'PY'
import random, sys
random.seed(5)
with open(sys.argv[1], "w") as out:
    for _ in range(300):
        out.write("".join(random.choice("ACDEFGHIKLMNPQRSTVWY") for _ in range(30)) + "\n")
PY
"$d2dpo" import --weights "$work/esm" --data "$work/proteins.txt" --rule composition:KR --eval-samples 0 \
    -o "$work/esm.d2dpo" >/dev/null 2>&1
for p in float32 bf16; do
    "$d2dpo" reproduce --reference "$work/esm.d2dpo" --precision "$p" --steps "$protein_steps" --batch 8 --lr 1e-5 \
        --pairs 500 --eval-every 0 --eval-samples 40 --sampler confident --sampling-steps 8 --seed 1 \
        --threads "$threads" -o "$work/esm-$p" >/dev/null 2>&1
done
summary "ESM2-$size on 30-residue proteins (rule: composition KR)" "$work/esm-float32" "$work/esm-bf16"
