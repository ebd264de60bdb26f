#!/usr/bin/env bash
# Set up (packages, build) and run the paper's experiment end to end with `d2dpo reproduce`.
# Extra arguments go to `d2dpo reproduce` (see `build/release/app/d2dpo reproduce --help`).
set -euo pipefail
cd "$(dirname "$0")/.."
bash packaging/setup.sh
exec build/release/app/d2dpo reproduce "$@"
