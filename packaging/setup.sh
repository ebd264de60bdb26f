#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Installs what d2dpo-studio needs on Debian 12 (only the packages that are missing), then
# configures and builds the project with the `release` CMake preset into build/release.
# Used by run.sh (which builds only the two applications: D2DPO_BUILD_TARGETS="d2dpo-studio d2dpo")
# and test.sh (everything); safe to run again (a repeat costs only the incremental build).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
    g++ cmake ninja-build          # toolchain
    libtorch-dev                   # LibTorch 1.13 (CPU)
    libgloo-dev                    # Gloo's headers: c10d's ProcessGroupGloo, data-parallel training over TCP
    libopenblas0-openmp            # fast BLAS for LibTorch; OpenMP build, as LibTorch's threads are OpenMP
    qt6-base-dev                   # Qt 6 Core/Test (tests) and Widgets/PrintSupport (desktop application)
    libqcustomplot-dev             # the training dashboard's plots (QCustomPlot 2.1, built for Qt 6 too)
    dpkg-dev                       # dpkg-shlibdeps: `cpack` works out the .deb's dependencies
    libcli11-dev nlohmann-json3-dev zlib1g-dev
    libsqlite3-dev libsqlitecpp-dev  # the preference store
    pkg-config libre2-dev          # motif rules: RE2 matches in linear time (a pattern cannot hang a run)
    libparasail-dev                # pairwise alignment with affine gaps (core/analysis)
    qt6-svg-dev                    # SVG export of the sequence logos
    libpq-dev                      # PostgreSQL's client library: the store's team engine
    postgresql                     # a PostgreSQL server: the team engine's suites start private ones
)
# More packages a caller needs (test.sh: python3-torch, so that the tests that load exported
# weights in Python run instead of being skipped).
read -r -a extra <<< "${D2DPO_EXTRA_PACKAGES:-}"
packages+=("${extra[@]}")

missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if ((${#missing[@]})); then
    echo "setup: installing ${missing[*]}"
    sudo=""
    if [ "$(id -u)" -ne 0 ]; then
        command -v sudo >/dev/null || { echo "setup: run as root or install sudo" >&2; exit 1; }
        sudo="sudo"
    fi
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -qq
    $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

cmake --preset release >/dev/null
read -r -a targets <<< "${D2DPO_BUILD_TARGETS:-}"
if ((${#targets[@]})); then
    cmake --build --preset release --target "${targets[@]}"
else
    cmake --build --preset release
fi
