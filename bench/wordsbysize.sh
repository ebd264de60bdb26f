#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The README's words table: what a user gets from 5, 15 and 30 minutes of pretraining on this
# machine, at the three sizes of File > New model from a data file (small, medium, large).
#
# 1. Each size's pretraining rate is measured alone, at 1 and at 2 threads, and the faster one is
#    what a user would run: steps = rate x seconds.
# 2. One pretraining per size runs the 30 minutes' steps with a snapshot at every 5 minutes' steps
#    (`--snapshot-every`). The learning rate is constant and each step draws its own batch, so
#    the snapshot after step k is the model a k-step pretraining writes; the runs may share the
#    machine (that changes their wall time, not their weights), so they run at one thread each.
# 3. Each snapshot at 5, 15 and 30 minutes is measured on 2000 samples: in_data_share is the share
#    of real words.
# Run from the repository root after building (about 2 hours on 2 cores):
#   bash bench/wordsbysize.sh [build/release/app/d2dpo] [work folder]
set -euo pipefail
cli=$(realpath "${1:-build/release/app/d2dpo}")
work=${2:-$(mktemp -d)}
mkdir -p "$work"
cd "$work"
[ -f /usr/share/dict/words ] || { echo "needs /usr/share/dict/words: apt-get install wamerican" >&2; exit 1; }
grep -xE '[a-z]{3,8}' /usr/share/dict/words > words.txt
sizes=("small 64 2 4 3000" "medium 128 4 4 800" "large 256 6 8 160") # name d_model layers heads probe-steps (~30 s)
common=(--data words.txt --rule 'motif:^[aeiou]' --seed 0)

rate() { # name d_model layers heads threads steps -> steps/s of the whole call's training
    "$cli" pretrain "${common[@]}" --d-model "$2" --layers "$3" --heads "$4" --threads "$5" --steps "$6" \
        --eval-samples 1 -o "rate-$1.d2dpo" 2>&1 | tr '\r' '\n' | grep -o '[0-9.]*/s' | tail -1 | tr -d '/s'
}

declare -A every
for size in "${sizes[@]}"; do
    read -r name d layers heads probe <<< "$size"
    one=$(rate "$name" "$d" "$layers" "$heads" 1 "$probe")
    two=$(rate "$name" "$d" "$layers" "$heads" 2 "$probe")
    best=$(awk -v a="$one" -v b="$two" 'BEGIN { print (a > b ? a : b) }')
    every[$name]=$(awk -v r="$best" 'BEGIN { printf "%d", r * 300 }')
    echo "$name: $one steps/s at 1 thread, $two at 2; 5 minutes = ${every[$name]} steps"
done

for size in "${sizes[@]}"; do
    read -r name d layers heads _ <<< "$size"
    "$cli" pretrain "${common[@]}" --d-model "$d" --layers "$layers" --heads "$heads" --threads 1 \
        --steps $((every[$name] * 6)) --snapshot-every "${every[$name]}" -o "$name.d2dpo" 2> "$name.err" &
done
wait

printf '| size | minutes | steps | vsr | in_data_share (real words) | rule_share | unique_share |\n|---|---|---|---|---|---|---|\n'
for size in "${sizes[@]}"; do
    read -r name _ <<< "$size"
    for minutes in 5 15 30; do
        steps=$((every[$name] * minutes / 5))
        file="$name.step$steps.d2dpo"
        [ "$minutes" = 30 ] && file="$name.d2dpo"
        "$cli" eval -c "$file" -n 2000 --threads 1 --json 2> /dev/null |
            python3 -c "import json, sys; m = json.load(sys.stdin)
print('| $name | $minutes | $steps | %.4f | %.4f | %.4f | %.4f |' % tuple(m[k] for k in ('vsr', 'in_data_share', 'rule_share', 'unique_share')))"
    done
done
