#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Set up (packages, build) and run the whole test suite with CTest.
# Extra arguments go to ctest, e.g. `-L core` for the fast engine tests only.
set -euo pipefail
cd "$(dirname "$0")/.."
D2DPO_EXTRA_PACKAGES="python3-torch ${D2DPO_EXTRA_PACKAGES:-}" bash packaging/setup.sh
exec ctest --preset release "$@"
