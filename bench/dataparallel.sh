#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Data-parallel D2-DPO on one machine: 2 processes of 1 thread (`d2dpo train --nproc 2`, Gloo over
# loopback) against 1 process of 2 threads, at the paper's small setting and at an ESM2-8M shape.
# Each side's time per step is the difference between a run of 2S steps and one of S steps (the
# same start-up, pairs and last evaluation cancel out), the median of REPEAT runs of each,
# alternating the two sides.
#     bash bench/dataparallel.sh                  # small setting (batch 64) and ESM2-8M (length 150, batch 8)
#     MODELS=small REPEAT=5 bash bench/dataparallel.sh
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
d2dpo=${D2DPO:-$here/build/release/app/d2dpo}
python=${PYTHON:-/usr/bin/python3}
models=${MODELS:-small 8M}
repeat=${REPEAT:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

calc() { awk "BEGIN {print $*}"; }
seconds() { # the wall time of a command, in seconds
    local start end
    start=$(date +%s.%N)
    "$@" >"$work/last.log" 2>&1 || { cat "$work/last.log" >&2; return 1; }
    end=$(date +%s.%N)
    calc "$end - $start"
}
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

printf '%-6s %5s | %-22s %-22s | %s\n' model steps "1 process x 2 threads" "2 processes x 1 thread" "speed-up"
for model in $models; do
    case $model in
    small)
        "$d2dpo" pretrain -o "$work/small.d2dpo" --steps 1 >/dev/null 2>&1
        checkpoint=$work/small.d2dpo
        common=(--batch 64 --pairs 2000)
        steps=${SMALL_STEPS:-60} ;;
    8M)
        "$python" "$here/python/esm_published.py" write "$work/esm8m" --size 8M --seed 1
        "$python" - "$work/proteins.txt" <<'PY'
import random, sys
random.seed(5)
with open(sys.argv[1], "w") as f:
    for _ in range(300):
        f.write("".join(random.choice("ACDEFGHIKLMNPQRSTVWY") for _ in range(148)) + "\n")
PY
        "$d2dpo" import --weights "$work/esm8m" --data "$work/proteins.txt" --rule composition:KR --eval-samples 0 \
            -o "$work/esm8m.d2dpo" >/dev/null 2>&1
        checkpoint=$work/esm8m.d2dpo
        common=(--batch 8 --pairs 500 --sampler confident --sampling-steps 4)
        steps=${ESM_STEPS:-4} ;;
    esac
    run() { # threads, extra, steps
        rm -rf "$work/out"
        seconds "$d2dpo" train -c "$checkpoint" -o "$work/out" "${common[@]}" --steps "$3" --eval-every 0 \
            --eval-samples 1 --threads "$1" $2
    }
    one=() two=()
    for _ in $(seq "$repeat"); do
        a=$(run 2 "" "$steps"); b=$(run 2 "" $((2 * steps)))
        one+=("$(calc "($b - $a) / $steps")")
        a=$(run 1 "--nproc 2" "$steps"); b=$(run 1 "--nproc 2" $((2 * steps)))
        two+=("$(calc "($b - $a) / $steps")")
    done
    m1=$(median "${one[@]}"); m2=$(median "${two[@]}")
    printf '%-6s %5s | %8.4f s/step (%5.2f/s) | %8.4f s/step (%5.2f/s) | %.2fx\n' "$model" "$steps" "$m1" \
        "$(calc "1 / $m1")" "$m2" "$(calc "1 / $m2")" "$(calc "$m1 / $m2")"
done
