#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# g-DPO's grouped scoring against pair-by-pair D2-DPO, on the Potts landscape
# (resources/landscapes/potts.py): the same reference, the same measured pairs (--strategy
# clusters, 20% of the sequences held out), the same steps and seeds, trained once per pair
# (two corrupted rows a pair and draw) and once per group (one row per group in the batch).
# Prints the training rate of each, their ratio, and the held-out figures of each run (Spearman
# and pair accuracy of the implicit reward and of the ELBO), so that the speed-up is read next to
# the accuracy it keeps; a third run per seed trains grouped for the pair-by-pair run's wall time. Usage: bash bench/grouped.sh [d2dpo binary] [work folder]
# Settings: SEEDS (default "1 2 3"), STEPS (300), THREADS (2), D_MODEL (128), LAYERS (3).
set -euo pipefail
cd "$(dirname "$0")/.."
d2dpo=${1:-build/release/app/d2dpo}
work=${2:-$(mktemp -d /tmp/d2dpo-bench-grouped.XXXXXX)}
seeds=${SEEDS:-1 2 3}
steps=${STEPS:-300}
threads=${THREADS:-2}
potts=resources/landscapes/potts.py
mkdir -p "$work"
db=$work/store.sqlite
python3 $potts family --seed 1 --n 2000 -o "$work/family.txt"
python3 $potts measure --seed 2 --n 3000 --noise 0.5 --format proteingym -o "$work/assay.csv"
wild=$(python3 $potts describe | python3 -c 'import json,sys; print(json.load(sys.stdin)["wild_type"])')
"$d2dpo" pretrain --data "$work/family.txt" --vocabulary symbols:ADEKLS --steps 1500 --d-model "${D_MODEL:-128}" \
    --layers "${LAYERS:-3}" --heads 4 --batch 64 --lr 1e-3 --seed 1 --threads "$threads" --eval-samples 50 \
    -o "$work/ref.d2dpo" --db "$db" > "$work/pretrain.log" 2>&1
"$d2dpo" measurements import "$work/assay.csv" --assay fitness --wild-type "$wild" -c "$work/ref.d2dpo" --db "$db"
"$d2dpo" measurements pairs --db "$db" --assay fitness --strategy clusters --margin 1 --held-out 0.2 --show 0

# steps/s of a run: the rate on its last progress line (training only: evaluations are not in it).
rate() { grep -o '100% [0-9]*/[0-9]*  [0-9.]*/s' "$1" | tail -1 | sed 's|.* \([0-9.]*\)/s|\1|'; }
# "spearman accuracy" of a score's row in `measurements eval`.
figure() { grep "$2" "$1" | grep "$3" | awk '{print $(NF-1), $NF}'; }

echo
echo "| seed | scoring | steps/s | reward spearman | reward pair acc. | ELBO spearman | ELBO pair acc. |"
echo "|---|---|---|---|---|---|---|"
ratios=()
for seed in $seeds; do
    declare -A speed=()
    for mode in pairs grouped grouped-same-time; do
        flag=(); [ "$mode" != pairs ] && flag=(--grouped)
        # The same wall time as the pair-by-pair run: as many more steps as grouped scoring is faster.
        n=$steps; [ "$mode" = grouped-same-time ] && n=$(echo "$steps * ${speed[grouped]} / ${speed[pairs]} / 1" | bc)
        "$d2dpo" train -c "$work/ref.d2dpo" --db "$db" --source measurements --assay fitness --strategy clusters \
            --margin 1 --held-out 0.2 --steps "$n" --batch 64 --lr 5e-4 --beta 0.1 --seed "$seed" \
            --threads "$threads" --eval-samples 20 --eval-every 100000 "${flag[@]}" \
            -o "$work/run-$mode-$seed" > "$work/train-$mode-$seed.log" 2>&1
        speed[$mode]=$(rate "$work/train-$mode-$seed.log")
        last=$(ls "$work/run-$mode-$seed"/step-*.d2dpo | tail -1)
        "$d2dpo" measurements eval --db "$db" -c "$last" > "$work/eval-$mode-$seed.log"
        read -r rs ra <<< "$(figure "$work/eval-$mode-$seed.log" implicit fine-tuned)"
        read -r es ea <<< "$(figure "$work/eval-$mode-$seed.log" ELBO fine-tuned)"
        echo "| $seed | $mode ($n steps) | ${speed[$mode]} | $rs | $ra | $es | $ea |"
    done
    ratios+=("$(echo "scale=2; ${speed[grouped]} / ${speed[pairs]}" | bc)")
done
read -r bs ba <<< "$(figure "$work/eval-pairs-${seeds%% *}.log" ELBO reference)"
echo "| | reference | | | | $bs | $ba |"
echo
echo "grouped / pair-by-pair training rate, per seed: ${ratios[*]}"
echo "(work folder: $work)"
