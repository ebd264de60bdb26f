#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# A new user's loop under a real X server, driven by real X events: label pairs with the keys
# (a, l), open the Train view and turn the mouse wheel down the settings column (it must scroll the
# page and change no drop-down), open the Models view and let it draw its samples. A screenshot
# after each step goes to OUT; the labels land in STORE as the labeler "newuser".
#
# With MODEL (a TorchScript file with its vocabulary beside it as NAME.vocab.json, as
# python/examples/esm2.py writes them) it is the loop of a real model: the model is imported into
# STORE first through File > Import model, the dialog filled in with keys as a user would (timed;
# IMPORT=cli imports with `d2dpo import` before the window opens), twenty pairs are labelled, a
# 50-step D2-DPO run is started
# from the Train view and followed to its end, and the Models view draws its figures. The window's
# thread is watched throughout (d2dpo-studio --stall-log): every stall over 100 ms is listed in
# OUT/stalls.log with what the window said, and the summary is printed at the end.
#   bench/newuserloop.sh STORE OUT [WIDTH HEIGHT]     (needs: xvfb xdotool x11-apps imagemagick sqlite3)
#   MODEL=esm8m.pt bench/newuserloop.sh STORE OUT     (also LABELS, STEPS, BATCH, MIN_LENGTH, LENGTH)
#   MODEL=esm8m.pt STOP_AT=20 bench/newuserloop.sh STORE OUT   (Stop pressed 20 s into the run, timed)
set -eu
store=$1 out=$2 width=${3:-1024} height=${4:-640}
here=$(dirname "$0")
studio=${STUDIO:-$here/../build/release/app/d2dpo-studio}
cli=${CLI:-$here/../build/release/app/d2dpo}
model=${MODEL:-}
labels=${LABELS:-$([ -n "$model" ] && echo 20 || echo 10)}
steps=${STEPS:-50}
mkdir -p "$out"
out=$(cd "$out" && pwd)
# A new user: settings of its own (the Train form's steps and batch are set here as the user would
# type them: at 8M parameters a step of 8 pairs takes about 4 s on 2 cores, of 64 about 30 s).
export XDG_CONFIG_HOME="$out/config"
mkdir -p "$XDG_CONFIG_HOME/d2dpo-studio"
printf '[train]\nsteps=%s\nbatch=%s\n' "$steps" "${BATCH:-8}" >"$XDG_CONFIG_HOME/d2dpo-studio/d2dpo-studio.conf"
since() { echo $(($(date +%s) - $1)); }

if [ -n "$model" ] && [ "${IMPORT:-dialog}" = cli ]; then
    started=$(date +%s)
    "$cli" import --torchscript "$model" --vocabulary "${model%.pt}.vocab.json" --task sequences \
        --min-length "${MIN_LENGTH:-140}" --max-length "${LENGTH:-150}" --eval-seconds 30 \
        -o "$out/model.d2dpo" --db "$store" --name "$(basename "${model%.pt}")" 2>"$out/import.log"
    echo "import: $(since "$started") s ($(grep -o 'measuring on [^)]*)' "$out/import.log" | head -1))"
fi

export DISPLAY=:77
Xvfb :77 -screen 0 "${width}x${height}x24" >/dev/null 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
sleep 1
shot() { xwd -root -silent | convert xwd:- "$out/$1-${width}x${height}.png"; }
count() { sqlite3 "$store" "SELECT count(*) FROM labels WHERE labeler = 'newuser' AND undone_at IS NULL"; }
# Without a window manager nothing focuses the window: xdotool does, and clicks are made relative
# to the window wherever the server put it.
rm -f "$out/stalls.log"
"$studio" --db "$store" --labeler newuser --size "${width}x$((height - 40))" --tab label \
    --stall-log "$out/stalls.log" >"$out/studio.log" 2>&1 &
app=$!
sleep 4
window=$(xdotool search --sync --onlyvisible --name d2dpo-studio | head -1)
xdotool windowfocus --sync "$window" 2>/dev/null || true
xdotool mousemove --window "$window" 500 400
shot label-start

models() { sqlite3 "$store" "SELECT count(*) FROM models" 2>/dev/null || echo 0; }
if [ -n "$model" ] && [ "${IMPORT:-dialog}" != cli ]; then
    # File > Import model (TorchScript); each field clicked where the dialog lays it out at its own
    # size (680x340 here: X, Y below) and typed into: the model, its vocabulary, the shortest and
    # longest lengths. The evaluation samples stay Auto (about 30 s at the model's measured cost).
    before=$(models)
    xdotool key alt+f
    sleep 0.5
    xdotool key m
    dialog=$(xdotool search --sync --onlyvisible --name "Import a model" | head -1)
    xdotool windowfocus --sync "$dialog" 2>/dev/null || true
    sleep 1
    field() { xdotool mousemove --window "$dialog" "$1" "$2" click 1; sleep 0.3; xdotool key ctrl+a; xdotool type --delay 5 "$3"; }
    modelPath="$(cd "$(dirname "$model")" && pwd)/$(basename "$model")"
    field "${MODEL_FIELD_X:-360}" "${MODEL_FIELD_Y:-21}" "$modelPath"
    field "${MODEL_FIELD_X:-360}" "${VOCABULARY_FIELD_Y:-49}" "${modelPath%.pt}.vocab.json"
    field "${SHORTEST_X:-375}" "${LENGTHS_Y:-133}" "${MIN_LENGTH:-140}"
    field "${LONGEST_X:-635}" "${LENGTHS_Y:-133}" "${LENGTH:-150}"
    sleep 0.5
    # Without a window manager the root window shows a dialog black: it is pictured by itself.
    dialogshot() { xwd -id "$dialog" -silent | convert xwd:- "$out/$1-${width}x${height}.png"; }
    dialogshot import-filled
    xdotool mousemove --window "$dialog" "${IMPORT_X:-540}" "${IMPORT_Y:-316}" click 1
    started=$(date +%s)
    sleep 5
    dialogshot import-running
    while [ "$(models)" -le "$before" ] && [ "$(since "$started")" -lt 900 ]; do sleep 1; done
    echo "import through the dialog: the model was in the store $(since "$started") s after Import"
    sleep 2
    dialogshot import-done 2>/dev/null || true
    # A model too weak to label keeps the dialog open with its advice (random weights are): closed.
    if xdotool search --onlyvisible --name "Import a model" >/dev/null 2>&1; then
        xdotool windowfocus --sync "$dialog" 2>/dev/null || true
        xdotool key Escape
        sleep 1
    fi
    xdotool windowfocus --sync "$window" 2>/dev/null || true
    # A model with random weights is too weak to label, so the Label view keeps the store's first
    # model: the user picks the imported one, the second, in the Model box, and clicks back on the
    # pair's side of the view (its keys label pairs).
    xdotool mousemove --window "$window" "${MODEL_BOX_X:-310}" "${MODEL_BOX_Y:-71}" click 1
    sleep 1
    xdotool key Down Return
    sleep 3
    xdotool mousemove --window "$window" 500 470 click 1
    shot label-imported-model
    xdotool mousemove --window "$window" 500 400
fi

# A key press labels the pair on screen; one made before the next pair is there labels nothing.
started=$(date +%s) keys=(a l a a l a l l a a)
for ((i = 0; $(count) < labels && $(since "$started") < 600; i++)); do
    xdotool key "${keys[i % 10]}"
    sleep 0.6
done
echo "labels: $(count) in $(since "$started") s"
shot label-after

xdotool key ctrl+2
sleep 2
shot train
for y in 300 350 400 450; do xdotool mousemove --window "$window" 150 "$y" click 5 click 5; sleep 0.3; done
sleep 1
shot train-after-wheel
if [ -n "$model" ]; then
    # "Start training", under the Train view's settings column (a fixed distance from the bottom).
    before=$(sqlite3 "$store" "SELECT coalesce(max(id), 0) FROM runs")
    xdotool mousemove --window "$window" "${START_X:-120}" "$((height - 40 - ${START_FROM_BOTTOM:-92}))" click 1
    started=$(date +%s)
    if [ -n "${STOP_AT:-}" ]; then
        # Stop, pressed STOP_AT s after Start (during the reference's measurement at 8M: 20 s), and
        # timed to the run's record saying it stopped.
        sleep "$STOP_AT"
        shot train-stopping
        xdotool mousemove --window "$window" "${STOP_X:-338}" "$((height - 40 - ${START_FROM_BOTTOM:-92}))" click 1
        pressed=$(date +%s%N)
        while [ "$(sqlite3 "$store" "SELECT status FROM runs WHERE id > $before ORDER BY id DESC LIMIT 1")" = running ]; do
            sleep 0.1
        done
        echo "stop: the run's record said $(sqlite3 "$store" "SELECT status FROM runs WHERE id > $before ORDER BY id DESC LIMIT 1") $((($(date +%s%N) - pressed) / 1000000)) ms after the press"
        shot train-stopped
    fi
    sleep 20
    shot train-starting
    last=""
    while [ "$(since "$started")" -lt 1800 ]; do
        last=$(sqlite3 "$store" "SELECT status FROM runs WHERE id > $before ORDER BY id DESC LIMIT 1")
        if [ -z "$last" ] && [ "$(since "$started")" -gt 300 ]; then
            last="never started (did the click miss Start training? START_X, START_FROM_BOTTOM)"
            break
        fi
        [ -z "$last" ] || [ "$last" = running ] || break
        sleep 10
    done
    echo "run: $last after $(since "$started") s"
    shot train-done
fi

xdotool key ctrl+3
sleep "${MODELS_WAIT:-45}"
shot models
if [ -n "$model" ]; then
    # The figures' second tab: the model beside its reference, per position. (The Labelers panel, a
    # window of its own, stays black without a window manager: tst_labelerspanel pictures it.)
    xdotool mousemove --window "$window" "${PER_POSITION_X:-580}" "${PER_POSITION_Y:-259}" click 1
    sleep 3
    shot models-per-position
fi
xdotool key ctrl+q
sleep 3
kill "$app" 2>/dev/null || true
wait "$app" 2>/dev/null || true
echo "screenshots in $out; labels of 'newuser' in $store"
if [ -f "$out/stalls.log" ]; then
    echo "window-thread stalls over 100 ms (OUT/stalls.log):"
    grep -v '^#' "$out/stalls.log" | sort -k4 -n -r | head -5
    tail -1 "$out/stalls.log"
fi
