#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Native ESM2 (published weights read as data, run on d2dpo's kernels) against PyTorch eager on the
# same weights, in one run: random-weight ESM2 checkpoints written in transformers' layout
# (python/esm_published.py), imported with `d2dpo import --weights`, and one D2-DPO step of PAIRS
# pairs timed on each side (`d2dpo bench -c`; the reference's `bench`: transformers' EsmForMaskedLM
# as eager runs it, policy and frozen reference, Adam). Eager runs with its own best kernels:
# OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE are unset in its command alone.
#     bash bench/esm_native.sh                          # 8M and 35M at 150 residues, 8 pairs, 1 and 2 threads
#     SIZES="8M 35M 150M" LENGTH=300 bash bench/esm_native.sh
#     DEVICE=cuda THREADS=4 SIZES="35M 150M" bash bench/esm_native.sh   # on a GPU (packaging/gpu-check.sh)
#     PRECISIONS=float32 bash bench/esm_native.sh       # d2dpo at float32 only (default: float32 and bf16)
# d2dpo runs at each of PRECISIONS (`--precision bf16`: bf16 products, float32 weights, Adam and loss;
# only where the processor has bf16 units), eager at float32, its default. "logp gap": the largest
# |log p| difference of the model at masked positions between that precision and float32.
# GFLOP/s: the step's arithmetic as PyTorch's profiler counts it for eager (forward and backward
# over every position), over each side's step time; d2dpo computes less (the last layer and the
# head at masked positions only), so its figure is the eager-equivalent rate. SGEMM: eager's
# 1024^3 float32 product at the same threads, the machine's measured matrix rate.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
d2dpo=${D2DPO:-$here/build/release/app/d2dpo}
python=${PYTHON:-/usr/bin/python3}
sizes=${SIZES:-8M 35M}
length=${LENGTH:-150}
pairs=${PAIRS:-8}
threads=${THREADS:-1 2}
precisions=${PRECISIONS:-float32 bf16}
device=${DEVICE:-cpu}
seconds=${MIN_SECONDS:-4}
repeat=${REPEAT:-3}   # runs of each side, alternating: this VM's eager figures vary by 1.5x between runs
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

printf '%-5s %4s %3s %-7s | %-16s %-16s | %6s | %9s %9s %7s | %9s\n' size L thr prec "d2dpo s/step" \
    "eager s/step" ratio "d2dpo GF/s" "eager GF/s" "SGEMM" "logp gap"
for size in $sizes; do
    "$python" "$here/python/esm_published.py" write "$work/$size" --size "$size" --seed 1
    "$d2dpo" import --weights "$work/$size" --max-length "$length" --min-length "$length" --eval-samples 0 \
        -o "$work/$size.d2dpo" >/dev/null 2>&1
    for t in $threads; do
        for p in $precisions; do : >"$work/ours-$p.jsonl"; done
        : >"$work/eager.jsonl"
        for _ in $(seq "$repeat"); do
            for p in $precisions; do
                "$d2dpo" bench -c "$work/$size.d2dpo" --batch "$pairs" --sampling-steps 1 --threads "$t" --json \
                    --device "$device" --min-seconds "$seconds" --precision "$p" 2>/dev/null | tr -d '\n' \
                    >>"$work/ours-$p.jsonl"
                echo >>"$work/ours-$p.jsonl"
            done
            env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "$python" "$here/python/esm_published.py" bench "$work/$size" \
                --length "$length" --pairs "$pairs" --threads "$t" --min-seconds "$seconds" --device "$device" >>"$work/eager.jsonl"
        done
        for p in $precisions; do
            "$python" - "$work/ours-$p.jsonl" "$work/eager.jsonl" "$size" "$length" "$t" "$p" <<'PY'
import json, statistics, sys
runs = [json.loads(l)["results"][0] for l in open(sys.argv[1]) if l.strip()]
ours = [1 / r["dpo_steps_per_second"] for r in runs]
gap = runs[0].get("log_probability_gap")
eager = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
e = [r["seconds_per_step"] for r in eager]
o, m = statistics.median(ours), statistics.median(e)
g = eager[0]["gflop_per_step"]
span = lambda xs: "%.2f-%.2f" % (min(xs), max(xs))
print("%-5s %4s %3s %-7s | %6.3f %-9s %6.3f %-9s | %5.2fx | %9.1f %9.1f %7.1f | %9s" % (sys.argv[3], sys.argv[4],
      sys.argv[5], sys.argv[6], o, span(ours), m, span(e), m / o, g / o, g / m,
      statistics.median(r["sgemm_gflops"] for r in eager), "-" if gap is None else "%.1e" % gap))
PY
        done
    done
done
echo "s/step: the median of $repeat runs of each side, alternating (each run's own median step), then the runs' range;"
echo "ratio: eager's median over d2dpo's (> 1: d2dpo faster); $pairs pairs a step, policy + frozen reference + Adam."
echo "d2dpo: $("$d2dpo" --version 2>/dev/null | head -1); eager: $(env -u OPENBLAS_CORETYPE "$python" -c 'import torch; print("PyTorch", torch.__version__)'), OPENBLAS_CORETYPE unset."
