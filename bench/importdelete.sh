#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Benchmark: `d2dpo prefs import` and `prefs delete --import` at 10k, 100k and 1M JSONL lines,
# each into a fresh store, with the seconds each took and the seconds per 1000 lines (flat when
# both stay linear). Run from the repository root after building:
#   bash bench/importdelete.sh [build/release/app/d2dpo] [sizes...]
set -euo pipefail
cli=${1:-build/release/app/d2dpo}
shift || true
sizes=("${@:-10000 100000 1000000}")
read -r -a sizes <<< "${sizes[*]}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
seconds() { local start=$1 end=$2; awk -v s="$start" -v e="$end" 'BEGIN { printf "%.2f", e - s }'; }
printf '%-9s %12s %12s %14s %14s\n' lines import_s delete_s import_s/1k delete_s/1k
for n in "${sizes[@]}"; do
    # Distinct 24-bit integers, a time each: every line a label of its own.
    python3 - "$n" > "$work/prefs.jsonl" <<'PY'
import sys
n = int(sys.argv[1])
for i in range(n):
    print('{"chosen": "%s", "rejected": "%s", "labeler": "bench", "labelled_at": "2026-01-01T00:00:00.%06dZ"}'
          % (format(2 * i + 1, "024b"), format(2 * i + 2, "024b"), i % 1000000))
PY
    store="$work/store-$n.sqlite"
    t0=$(date +%s.%N)
    "$cli" prefs import --db "$store" -i "$work/prefs.jsonl" --length 24 > /dev/null
    t1=$(date +%s.%N)
    "$cli" prefs delete --db "$store" --import 1 > /dev/null
    t2=$(date +%s.%N)
    import_s=$(seconds "$t0" "$t1")
    delete_s=$(seconds "$t1" "$t2")
    printf '%-9s %12s %12s %14s %14s\n' "$n" "$import_s" "$delete_s" \
        "$(awk -v t="$import_s" -v n="$n" 'BEGIN { printf "%.3f", 1000 * t / n }')" \
        "$(awk -v t="$delete_s" -v n="$n" 'BEGIN { printf "%.3f", 1000 * t / n }')"
done
