#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# A new user's loop under a real X server, driven by real X events: label ten pairs with the keys
# (a, l), open the Train view and turn the mouse wheel down the settings column (it must scroll the
# page and change no drop-down), open the Models view and let it draw its samples. A screenshot
# after each step goes to OUT; the labels land in STORE as the labeler "newuser".
#   bench/newuserloop.sh STORE OUT [WIDTH HEIGHT]     (needs: xvfb xdotool x11-apps imagemagick)
set -eu
store=$1 out=$2 width=${3:-1024} height=${4:-640}
studio=${STUDIO:-$(dirname "$0")/../build/release/app/d2dpo-studio}
mkdir -p "$out"
export DISPLAY=:77
Xvfb :77 -screen 0 "${width}x${height}x24" >/dev/null 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
sleep 1
shot() { xwd -root -silent | convert xwd:- "$out/$1-${width}x${height}.png"; }
# Without a window manager nothing focuses the window: xdotool does, and clicks are made relative
# to the window wherever the server put it.
"$studio" --db "$store" --labeler newuser --size "${width}x$((height - 40))" --tab label >"$out/studio.log" 2>&1 &
app=$!
sleep 4
window=$(xdotool search --sync --onlyvisible --name d2dpo-studio | head -1)
xdotool windowfocus --sync "$window" 2>/dev/null || true
xdotool mousemove --window "$window" 500 400
shot label-start
for key in a l a a l a l l a a; do xdotool key "$key"; sleep 0.6; done
shot label-after
xdotool mousemove --window "$window" 83 32 click 1; sleep 2
shot train
for y in 300 350 400 450; do xdotool mousemove --window "$window" 150 "$y" click 5 click 5; sleep 0.3; done
sleep 1
shot train-after-wheel
xdotool mousemove --window "$window" 143 32 click 1; sleep "${MODELS_WAIT:-45}"
shot models
kill "$app" 2>/dev/null || true
wait "$app" 2>/dev/null || true
echo "screenshots in $out; labels of 'newuser' in $store"
