#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Set up (packages, build) and start d2dpo-studio. Without a display (no DISPLAY or
# WAYLAND_DISPLAY) it runs the headless twin instead: `d2dpo reproduce`, the paper's experiment.
# Extra arguments go to the program that runs.
set -euo pipefail
cd "$(dirname "$0")/.."
# Only the two applications: the test suites are test.sh's (they are most of a full build).
D2DPO_BUILD_TARGETS="d2dpo-studio d2dpo" bash packaging/setup.sh
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
    exec build/release/app/d2dpo-studio "$@"
fi
echo "run: no display found; running the headless experiment (build/release/app/d2dpo reproduce) instead" >&2
exec build/release/app/d2dpo reproduce "$@"
