#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# What a faster sampler costs in quality, on one checkpoint: the exact sampler (D passes a
# sequence), Euler and the confident sampler at a few pass counts, each drawing the same number of
# sequences with the same seed. Prints milliseconds per sequence (wall, this machine, 1 thread,
# the model's loading included), VSR, the rule's share, the histogram's entropy (diversity, where
# the task has a histogram), the distinct sequences' share and, for a task with training
# sequences, the share that is one of them ("in data": real words).
#     bash bench/samplers.sh CHECKPOINT [SAMPLES] [PASSES...]
# e.g. bash bench/samplers.sh runs/reproduce/checkpoints/step-000300.d2dpo 2000 4 8 16
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
d2dpo=${D2DPO:-$here/build/release/app/d2dpo}
checkpoint=${1:?usage: bench/samplers.sh CHECKPOINT [SAMPLES] [PASSES...]}
samples=${2:-2000}
shift $(($# < 2 ? $# : 2))
passes=("$@")
((${#passes[@]})) || passes=(4 8 16)
threads=${THREADS:-1}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

measure() { # $1: label, then the sampler options
    local label=$1; shift
    local started=$(date +%s.%N)
    "$d2dpo" eval -c "$checkpoint" -n "$samples" --threads "$threads" --seed 11 --json "$@" >"$work/metrics.json" 2>/dev/null
    local finished=$(date +%s.%N)
    "$d2dpo" sample -c "$checkpoint" -n "$samples" --threads "$threads" --seed 11 "$@" -o "$work/samples.txt" >/dev/null 2>&1
    /usr/bin/python3 - "$label" "$started" "$finished" "$samples" "$work/metrics.json" "$work/samples.txt" <<'PY'
import json, sys
label, started, finished, samples, metrics, drawn = sys.argv[1:]
m = json.load(open(metrics))
values = {name: m[name] for name in m["order"]}
lines = [l for l in open(drawn).read().splitlines() if l.strip()]
rule = m.get("rule_metric") or ""
seconds = (float(finished) - float(started)) / int(samples)
print(f"{label:22} {seconds * 1000:9.2f} {values.get('vsr', float('nan')):7.4f} "
      f"{values.get(rule, float('nan')) if rule else float('nan'):7.4f} {values.get('entropy', float('nan')):8.4f} "
      f"{len(set(lines)) / max(1, len(lines)):8.4f} " +
      (f"{values['in_data_share']:8.4f}" if "in_data_share" in values else f"{'-':>8}"))
PY
}

echo "checkpoint $checkpoint, $samples samples, seed 11, $threads thread(s)"
printf '%-22s %9s %7s %7s %8s %8s %8s\n' sampler "ms/seq" VSR rule entropy distinct "in data"
measure "exact (D passes)" --sampler exact
for k in "${passes[@]}"; do
    measure "euler, $k passes" --sampler euler --sampling-steps "$k"
    measure "confident, $k passes" --sampler confident --sampling-steps "$k"
done
