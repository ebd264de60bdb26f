#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Set up (packages, build) and run the whole test suite with CTest.
# Extra arguments go to ctest, e.g. `-L core` for the fast engine tests only.
set -euo pipefail
cd "$(dirname "$0")/.."
D2DPO_EXTRA_PACKAGES="python3-torch ${D2DPO_EXTRA_PACKAGES:-}" bash packaging/setup.sh
ctest --preset release "$@"
# The numeric suites again under a second BLAS kernel (OPENBLAS_CORETYPE unset where it is set,
# Haswell's where it is not) and with oneDNN's sgemm off: a test tuned to one kernel's rounding
# cannot pass both. Only for the whole suite; `test.sh -L core` and the like run once.
if (($# == 0)); then
    if [ -n "${OPENBLAS_CORETYPE:-}" ]; then
        second=(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE)
    else
        second=(env OPENBLAS_CORETYPE=Haswell)
    fi
    echo "test.sh: the numeric suites again with ${second[*]} D2DPO_ONEDNN_GEMM=off"
    "${second[@]}" D2DPO_ONEDNN_GEMM=off ctest --preset release -L numeric
fi
