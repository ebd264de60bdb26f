#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The proof of the CUDA path, in one run of under 10 minutes on a GPU machine with PyTorch (its
# LibTorch and CMake files), CMake, ninja and g++, but no Qt and no package registry. Prepare
# first, here on Debian 12: `bash packaging/gpu-prepare.sh` (writes .gpu-deps/deps.tar.xz).
# Then, from a fresh copy of the tree on that machine:
#     D2DPO_GPU_OUT=/some/folder bash packaging/gpu-check.sh
# It builds the headless core, the CLI and the core tests against that LibTorch, runs
# `d2dpo reproduce --device cuda`, `d2dpo bench --device cuda --settings small,large,long` and the
# Python peer at the same settings on the same GPU, bench/scale.sh (ESM2-shaped models of 8M, 35M
# and 150M parameters at lengths 150 and 300 against PyTorch eager; D2DPO_GPU_STEPS picks steps),
# then the core tests (on CUDA where a test takes
# the "auto" device; each stopped after D2DPO_GPU_TEST_TIMEOUT s, 240 by default: on a 2026 H100
# machine the build took 154 s and the suites of many tiny steps 300-400 s each), and writes every
# figure as JSON (and every log) into $D2DPO_GPU_OUT.
# Without a GPU it runs the same steps on the CPU (TORCH_PREFIX names any LibTorch then).
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD
out=${D2DPO_GPU_OUT:-$src/gpu-results}
deps=${D2DPO_GPU_DEPS:-$src/.gpu-deps}
build=${D2DPO_GPU_BUILD:-$src/build-gpu}
python=${PYTHON:-python3}
mkdir -p "$out"
log() { echo "gpu-check: $*" | tee -a "$out/steps.log"; }
started=$SECONDS
phase() { log "$1 (at ${SECONDS}s)"; }
# A step that fails ends the run (set -e) with its command named, not silently.
set -E
trap 'status=$?; log "FAILED (exit status $status) at line $LINENO: $BASH_COMMAND; logs in $out"; exit $status' ERR

[ -f "$deps/deps.tar.xz" ] || { echo "gpu-check: $deps/deps.tar.xz is missing: run packaging/gpu-prepare.sh on Debian 12 first" >&2; exit 2; }
# Unpacked at a fixed place in the build folder: the CMake cache keeps absolute paths into it, so
# a second run (after a time limit, say) reuses the configured build instead of failing on them.
root=$build/deps
mkdir -p "$build"
if [ ! -f "$root/.unpacked" ] || [ "$deps/deps.tar.xz" -nt "$root/.unpacked" ]; then
    rm -rf "$root" && mkdir -p "$root"
    tar -C "$root" -xJf "$deps/deps.tar.xz"
    touch "$root/.unpacked"
fi
# Python (the peer) keeps the machine's own libraries; only the build and d2dpo see Debian 12's.
py() {
    if [ -n "${python_ld:-}" ]; then LD_LIBRARY_PATH=$python_ld "$python" "$@"; else env -u LD_LIBRARY_PATH "$python" "$@"; fi
}
python_ld=${LD_LIBRARY_PATH:-}
export LD_LIBRARY_PATH="$root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# pkg-config files (re2, parasail, libpq) name /usr/include and /usr/lib, which on that machine
# lack these headers and libraries: the compiler and linker look in the unpacked root as well.
export PKG_CONFIG_SYSROOT_DIR=$root   # and pkg-config names them inside it
export CPATH="$root/usr/include:$root/usr/include/postgresql${CPATH:+:$CPATH}"
export LIBRARY_PATH="$root/usr/lib/x86_64-linux-gnu${LIBRARY_PATH:+:$LIBRARY_PATH}"

torch_prefix=${TORCH_PREFIX:-$(py -c 'import torch; print(torch.utils.cmake_prefix_path)')}
device=${D2DPO_GPU_DEVICE:-$(py -c 'import torch; print("cuda" if torch.cuda.is_available() else "cpu")' 2>/dev/null || echo cpu)}
{
    echo "source: $(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo unknown)"
    echo "torch prefix: $torch_prefix"
    echo "device: $device"
    ldd --version | sed -n 1p   # not head: ldd dying of SIGPIPE would end the script (pipefail)
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || echo "no nvidia-smi"
} > "$out/machine.txt"
cat "$out/machine.txt"

# A CUDA build of PyTorch's CMake files (Caffe2Config) insists on a CUDA toolkit (nvcc), which a
# machine with only the wheel lacks, though d2dpo compiles no CUDA code. Then (or with
# D2DPO_TORCH_SHIM=1) the wheel's own headers and libraries are described by a small TorchConfig
# instead; --no-as-needed keeps libtorch_cuda linked, so that its CUDA backend registers itself.
write_torch_shim() {
    local tdir abi lib d libs=() extra=()
    tdir=$(py -c 'import os, torch; print(os.path.dirname(os.path.realpath(torch.__file__)))')
    abi=$(py -c 'import torch; print(int(torch._C._GLIBCXX_USE_CXX11_ABI))')
    for lib in torch_cuda c10_cuda torch_cpu c10; do
        [ -e "$tdir/lib/lib$lib.so" ] && libs+=("-Wl,--no-as-needed,$tdir/lib/lib$lib.so,--as-needed")
    done
    for d in "$tdir"/../nvidia/*/lib; do   # the wheel's CUDA libraries, for the linker's checks
        [ -d "$d" ] && extra+=("-Wl,-rpath-link,$(cd "$d" && pwd)")
    done
    mkdir -p "$build/torch-shim"
    cat >"$build/torch-shim/TorchConfig.cmake" <<EOF
# Written by packaging/gpu-check.sh: the LibTorch of $tdir, without Caffe2's CUDA toolkit lookup.
if(NOT TARGET torch)
    add_library(torch SHARED IMPORTED)
    set_target_properties(torch PROPERTIES
        IMPORTED_LOCATION "$tdir/lib/libtorch.so"
        INTERFACE_INCLUDE_DIRECTORIES "$tdir/include;$tdir/include/torch/csrc/api/include"
        INTERFACE_COMPILE_OPTIONS "-D_GLIBCXX_USE_CXX11_ABI=$abi"
        INTERFACE_LINK_LIBRARIES "$(IFS=';'; echo "${libs[*]}${extra[*]:+;${extra[*]}}")")
endif()
set(TORCH_LIBRARIES torch)
set(TORCH_INCLUDE_DIRS "$tdir/include;$tdir/include/torch/csrc/api/include")
set(TORCH_CXX_FLAGS "-D_GLIBCXX_USE_CXX11_ABI=$abi")
set(TORCH_INSTALL_PREFIX "$tdir")
set(Torch_FOUND TRUE)
EOF
    log "LibTorch from $tdir through $build/torch-shim/TorchConfig.cmake"
}
configure() {   # $1: "shim" or "torchconfig"; a change of mode starts from an empty cache
    [ "$(cat "$build/.torch-mode" 2>/dev/null)" = "$1" ] || rm -rf "$build/CMakeCache.txt" "$build/CMakeFiles"
    echo "$1" >"$build/.torch-mode"
    local torch=(-DCMAKE_PREFIX_PATH="$root/usr;$torch_prefix")
    [ "$1" = torchconfig ] || torch=(-DCMAKE_PREFIX_PATH="$root/usr" -DTorch_DIR="$build/torch-shim")
    cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DD2DPO_BUILD_GUI=OFF "${torch[@]}" \
        >"$out/configure.log" 2>&1
}

phase "configure"
if [ "${D2DPO_TORCH_SHIM:-0}" = 1 ]; then
    write_torch_shim
    configure shim || { tail -30 "$out/configure.log"; exit 1; }
elif ! configure torchconfig; then
    if [ -n "${TORCH_PREFIX:-}" ] || ! grep -qiE 'cuda|nvcc' "$out/configure.log"; then
        tail -30 "$out/configure.log"; exit 1
    fi
    mv "$out/configure.log" "$out/configure-torchconfig.log"
    log "LibTorch's CMake files want a CUDA toolkit: $(grep -iE -m1 'cuda|nvcc' "$out/configure-torchconfig.log")"
    write_torch_shim
    configure shim || { tail -30 "$out/configure.log"; exit 1; }
fi
grep -E '^(Qt6_DIR|Qt6Core_DIR|Qt6Test_DIR|Torch_DIR|SQLiteCpp_DIR|CLI11_DIR|nlohmann_json_DIR):' "$build/CMakeCache.txt" |
    tee -a "$out/steps.log"
! grep -q 'Qt 6 Test not found' "$out/configure.log" ||
    { grep -A12 'Qt6' "$out/configure.log" | head -40; log "Qt 6 Test not found: no tests would be built"; exit 1; }
# d2dpo first, so that its figures come back even when the test suites' build or run outlasts the call.
phase "build (d2dpo)"
cmake --build "$build" -j "$(nproc)" --target d2dpo >"$out/build.log" 2>&1 || { grep -E 'error|FAILED' "$out/build.log" | head -30; exit 1; }

d2dpo="$build/app/d2dpo"
# Peak GPU memory of each command: nvidia-smi sampled every 100 ms while it runs.
watch_memory() {
    if command -v nvidia-smi >/dev/null && [ "$device" != cpu ]; then
        nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 100 >"$out/$1.gpu-memory" 2>/dev/null &
        echo $!
    else
        echo 0
    fi
}
stop_watch() {
    [ "$1" != 0 ] || return 0
    kill "$1" 2>/dev/null || true
    wait "$1" 2>/dev/null || true
    log "$2: peak GPU memory $(sort -n "$out/$2.gpu-memory" | tail -1) MiB (whole device, sampled)"
}

# D2DPO_GPU_STEPS picks the steps after the build (default all): reproduce bench scale native tests.
steps=" ${D2DPO_GPU_STEPS:-reproduce bench scale native tests} "
want() { [[ $steps == *" $1 "* ]]; }

if want reproduce; then
phase "reproduce"
rm -rf "$build/reproduce"   # reproduce wants an empty folder, also when the check runs again
watcher=$(watch_memory reproduce)
"$d2dpo" reproduce --device "$device" --out "$build/reproduce" >"$out/reproduce.txt" 2>"$out/reproduce.err"
stop_watch "$watcher" reproduce
cp "$build/reproduce/report.json" "$out/reproduce-report.json"
sed -n '/metric/,/odd ratio >=/p' "$out/reproduce.txt" | tee -a "$out/steps.log"
fi

if want bench; then
phase "bench (d2dpo)"
watcher=$(watch_memory bench)
"$d2dpo" bench --device "$device" --settings small,large,long --json --min-seconds 2 >"$out/bench-d2dpo.json" 2>"$out/bench-d2dpo.err"
stop_watch "$watcher" bench

phase "bench (Python peer)"
watcher=$(watch_memory peer)
py "$src/bench/pytorch_peer.py" --device "$device" --settings small,large,long --min-seconds 2 >"$out/bench-peer.json" 2>"$out/bench-peer.err"
stop_watch "$watcher" peer

py - "$out/bench-d2dpo.json" "$out/bench-peer.json" <<'PY' | tee "$out/summary.txt"
import json, sys
ours, peer = (json.load(open(p)) for p in sys.argv[1:3])
print(ours["runtime"]); print(peer["runtime"]); print()
print(f"{'setting':8} {'figure':16} {'d2dpo':>10} {'peer':>10} {'ratio':>7}")
by_name = {r["setting"]: r for r in peer["results"]}
for r in ours["results"]:
    p = by_name[r["setting"]]
    for key, label in (("dpo_steps_per_second", "D2-DPO steps/s"), ("pretrain_steps_per_second", "pretrain steps/s"),
                       ("sampling_sequences_per_second", "sampling seq/s")):
        print(f"{r['setting']:8} {label:16} {r[key]:10.2f} {p[key]:10.2f} {r[key] / p[key]:6.2f}x")
PY
fi
# The benchmarks' Python keeps the machine's own libraries and d2dpo Debian 12's, through two small
# wrappers: $build/d2dpo-run and $build/python-run.
make_wrappers() {
    printf '#!/bin/sh\nexec env LD_LIBRARY_PATH="%s" "%s" "$@"\n' "$LD_LIBRARY_PATH" "$(realpath "$d2dpo")" >"$build/d2dpo-run"
    if [ -n "$python_ld" ]; then
        printf '#!/bin/sh\nexec env LD_LIBRARY_PATH="%s" "%s" "$@"\n' "$python_ld" "$(command -v "$python")" >"$build/python-run"
    else
        printf '#!/bin/sh\nexec env -u LD_LIBRARY_PATH "%s" "$@"\n' "$(command -v "$python")" >"$build/python-run"
    fi
    chmod +x "$build/d2dpo-run" "$build/python-run"
}
# The scale benchmark (issue "Real models at real scale"): ESM2-shaped models made by this
# machine's PyTorch, imported and timed against PyTorch eager on the same GPU. Its Python keeps the
# machine's own libraries and d2dpo Debian 12's, through two small wrappers.
if want scale; then
    phase "scale benchmark"
    make_wrappers
    D2DPO="$build/d2dpo-run" PYTHON="$build/python-run" DEVICE="$device" THREADS="${D2DPO_GPU_SCALE_THREADS:-4}" \
        SIZES="${D2DPO_GPU_SCALE_SIZES:-8M 35M 150M}" LENGTHS="${D2DPO_GPU_SCALE_LENGTHS:-150 300}" LONG_150M=1 \
        PAIRS="${D2DPO_GPU_SCALE_PAIRS-8 32}" \
        MIN_SECONDS="${D2DPO_GPU_SCALE_SECONDS:-1}" bash "$src/bench/scale.sh" 2>"$out/scale.err" | tee "$out/scale.txt" ||
        log "scale benchmark FAILED (exit status $?): $(tail -3 "$out/scale.err")"
fi

# Published weights run natively (docs/published-weights.md): ESM2 read from safetensors against
# transformers' EsmForMaskedLM in eager PyTorch on the same GPU and weights.
if want native; then
    phase "native ESM2 benchmark"
    make_wrappers
    D2DPO="$build/d2dpo-run" PYTHON="$build/python-run" DEVICE="$device" THREADS="${D2DPO_GPU_SCALE_THREADS:-4}" \
        SIZES="${D2DPO_GPU_NATIVE_SIZES:-35M 150M}" REPEAT=2 MIN_SECONDS=2 \
        bash "$src/bench/esm_native.sh" 2>"$out/native.err" | tee "$out/native.txt" ||
        log "native benchmark FAILED (exit status $?): $(tail -3 "$out/native.err")"
fi

want tests || { log "done in $((SECONDS - started)) s (no tests asked for); figures in $out"; exit 0; }
phase "build (tests)"
cmake --build "$build" -j "$(nproc)" >>"$out/build.log" 2>&1 || { grep -E 'error|FAILED' "$out/build.log" | head -30; exit 1; }
grep -E 'warning:' "$out/build.log" | grep -v '^/usr\|site-packages' > "$out/build-warnings.txt" || true
log "build warnings from project files: $(wc -l < "$out/build-warnings.txt")"

# The core tests last: the figures above come back even when the tests outrun the call's time.
# D2DPO_GPU_DEADLINE (seconds from the start) ends them in time for a caller's own limit.
phase "core tests"
# `|| tests=$?`, not `set +e`: the ERR trap fires even then, and would end the run here with
# neither the summary below nor the device the tests ran on.
left=$((${D2DPO_GPU_DEADLINE:-100000} - SECONDS))
tests=0
# D2DPO_GPU_TEST_EXCLUDE: a ctest -E pattern, to leave the long suites of tiny steps to a later call.
exclude=()
[ -z "${D2DPO_GPU_TEST_EXCLUDE:-}" ] || exclude=(-E "$D2DPO_GPU_TEST_EXCLUDE")
(cd "$build" && timeout "$((left > 10 ? left : 10))" ctest -L core "${exclude[@]}" --output-on-failure \
    -j "${D2DPO_GPU_TEST_JOBS:-4}" --timeout "${D2DPO_GPU_TEST_TIMEOUT:-240}") >"$out/ctest.log" 2>&1 || tests=$?
grep -E 'tests passed|tests failed|No tests were found' "$out/ctest.log" | tee -a "$out/steps.log" || true
grep -h 'device:' "$build"/Testing/Temporary/LastTest.log 2>/dev/null | head -1 | tee -a "$out/steps.log" || true

log "done in $((SECONDS - started)) s; core tests exit $tests; figures in $out"
exit $tests
