#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# d2dpo at the sizes people bring: ESM2-shaped protein models (python/examples/esm2.py, random
# weights: timings only) imported without data, each measured in the same run against PyTorch
# eager on the same model (bench/scale_peer.py). For each size, length and thread count:
#   pair s    seconds per labelable pair: the exact sampler (L passes of a batch of 2, from the
#             measured cost of a pass) and the confident sampler at PASSES passes (timed whole)
#   step s    seconds per D2-DPO step at 8 and 32 pairs (`d2dpo bench -c`, medians)
#   peak MiB  peak resident memory of the import, of sampling and of training
#     bash bench/scale.sh                     # 8M at 150 and 300, 35M at 150; 1 and 2 threads
#     SIZES="8M 35M 150M" LENGTHS="150 300" THREADS="1 2" TIME=1 bash bench/scale.sh
# After `bash packaging/test.sh` (Debian's python3-torch). D2DPO names another d2dpo binary.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
d2dpo=${D2DPO:-$here/build/release/app/d2dpo}
sizes=${SIZES:-8M 35M}
lengths=${LENGTHS:-150 300}
threads=${THREADS:-1 2}
passes=${PASSES:-16}
pairs=${PAIRS:-8 32}
time_flag=()
[ "${TIME:-0}" = 1 ] && time_flag=(--time)
seconds=${MIN_SECONDS:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

elapsed_and_peak() { # runs "$@", prints "seconds peak_MiB"
    /usr/bin/time -f '%e %M' -o "$work/time" "$@" >/dev/null 2>"$work/err" || { cat "$work/err" >&2; return 1; }
    awk '{printf "%s %.0f\n", $1, $2 / 1024}' "$work/time"
}

echo "# d2dpo scale benchmark, $(date -u +%F), $(nproc) CPUs, $(uname -m); ${time_flag[*]:-time-agnostic}"
printf '%-5s %4s %3s | %-30s | %9s %9s | %s\n' size L thr figure d2dpo "PyTorch" "ratio (PyTorch / d2dpo: > 1 is d2dpo faster)"
for size in $sizes; do
    for length in $lengths; do
        [ "$size" = 150M ] && [ "$length" -gt 150 ] && [ -z "${LONG_150M:-}" ] && continue
        /usr/bin/python3 "$here/python/examples/esm2.py" "$size" --length "$length" "${time_flag[@]}" -o "$work/m.pt" >/dev/null
        read -r import_s import_mib < <(elapsed_and_peak "$d2dpo" import --torchscript "$work/m.pt" \
            --vocabulary "$work/m.vocab.json" --task sequences --max-length "$length" --eval-samples 0 -o "$work/m.d2dpo")
        printf '%-5s %4s %3s | %-30s | %9s %9s |\n' "$size" "$length" - "import s / peak MiB" "$import_s" "$import_mib"
        for t in $threads; do
            peer=$(/usr/bin/python3 "$here/bench/scale_peer.py" "$size" --length "$length" "${time_flag[@]}" --threads "$t" \
                --pairs "$(echo $pairs | tr ' ' ,)" --passes "$passes" --min-seconds "$seconds")
            # A pass's cost from two confident runs (K and 2K passes of one pair): the load cancels.
            read -r short _ < <(elapsed_and_peak "$d2dpo" sample -c "$work/m.d2dpo" -n 2 --threads "$t" \
                --sampler confident --sampling-steps "$passes" -o "$work/s.txt")
            read -r long sample_mib < <(elapsed_and_peak "$d2dpo" sample -c "$work/m.d2dpo" -n 2 --threads "$t" \
                --sampler confident --sampling-steps $((2 * passes)) -o "$work/s.txt")
            pass=$(/usr/bin/python3 -c "print(max(1e-9, ($long - $short) / $passes))")
            row() { /usr/bin/python3 -c "import sys; o, p = float(sys.argv[2]), float(sys.argv[3]); print('%-5s %4s %3s | %-30s | %9.3f %9.3f | %6.2fx' % ('$size', '$length', '$t', sys.argv[1], o, p, p / o))" "$@"; }
            row "pair s, exact (L passes)" "$(/usr/bin/python3 -c "print($pass * $length)")" \
                "$(/usr/bin/python3 -c "import json,sys; print(json.loads(sys.argv[1])['exact_seconds_per_pair'])" "$peer")"
            row "pair s, confident $passes passes" "$(/usr/bin/python3 -c "print($pass * $passes)")" \
                "$(/usr/bin/python3 -c "import json,sys; print(json.loads(sys.argv[1])['confident${passes}_seconds_per_pair'])" "$peer")"
            for p in $pairs; do
                "$d2dpo" bench -c "$work/m.d2dpo" --batch "$p" --threads "$t" --json --min-seconds "$seconds" \
                    >"$work/bench.json" 2>/dev/null
                row "D2-DPO s/step, $p pairs" \
                    "$(/usr/bin/python3 -c "import json; print(1 / json.load(open('$work/bench.json'))['results'][0]['dpo_steps_per_second'])")" \
                    "$(/usr/bin/python3 -c "import json,sys; print(json.loads(sys.argv[1])['dpo_seconds_per_step_$p'])" "$peer")"
                train_mib=$(/usr/bin/python3 -c "import json; print(round(json.load(open('$work/bench.json'))['results'][0]['peak_resident_mib']))")
            done
            printf '%-5s %4s %3s | %-30s | %9s %9s |\n' "$size" "$length" "$t" "peak MiB sampling / training" \
                "$sample_mib/$train_mib" "$(/usr/bin/python3 -c "import json,sys; print(round(json.loads(sys.argv[1])['peak_resident_mib']))" "$peer")"
        done
    done
done
echo "pair s, exact: the cost of one pass (from the confident sampler at $passes and $((2 * passes)) passes) times L;"
echo "PyTorch: eager, the same model and weights; its peak is of the whole peer run (sampling and training)."
