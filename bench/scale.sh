#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# d2dpo at the sizes people bring: ESM2-shaped protein models (python/examples/esm2.py, random
# weights: timings only) imported without data, each measured in the same run against PyTorch
# eager on the same model (bench/scale_peer.py). For each size, length and thread count:
#   pair s    seconds per labelable pair: the exact sampler (L passes of a batch of 2, from the
#             measured cost of a pass) and the confident sampler at PASSES passes (timed whole)
#   step s    seconds per D2-DPO step at 8 and 32 pairs (`d2dpo bench -c`, medians)
#   peak MiB  peak resident memory of the import, of sampling and of training
#     bash bench/scale.sh                     # 8M at 150 and 300, 35M at 150; 1 and 2 threads
#     SIZES="8M 35M 150M" LENGTHS="150 300" THREADS="1 2" TIME=1 bash bench/scale.sh
#     DEVICE=cuda THREADS=4 bash bench/scale.sh   # on a GPU: peak MiB is then the GPU's (nvidia-smi)
#     PLAIN=1 bash bench/scale.sh   # also each step with the model's own code as LibTorch runs it:
#                                   # its attention, not d2dpo's fused kernel, and its linear layers through
#                                   # the system BLAS, not oneDNN (D2DPO_SCRIPT_ATTENTION=plain
#                                   # D2DPO_SCRIPT_LINEAR=plain), as d2dpo's baseline
# After `bash packaging/test.sh` (Debian's python3-torch). D2DPO names another d2dpo binary, PYTHON
# another Python with torch (packaging/gpu-check.sh passes both).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
d2dpo=${D2DPO:-$here/build/release/app/d2dpo}
python=${PYTHON:-/usr/bin/python3}
device=${DEVICE:-cpu}
sizes=${SIZES:-8M 35M}
lengths=${LENGTHS:-150 300}
threads=${THREADS:-1 2}
passes=${PASSES:-16}
pairs=${PAIRS-8 32}   # empty: sampling rows only
time_flag=()
[ "${TIME:-0}" = 1 ] && time_flag=(--time)
seconds=${MIN_SECONDS:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# On a GPU the memory that matters is the GPU's: nvidia-smi's reading of the whole device, sampled
# every 100 ms while the command runs (the CUDA context's few hundred MiB included, as a user sees).
gpu_memory=0
[ "$device" != cpu ] && command -v nvidia-smi >/dev/null && gpu_memory=1
elapsed_and_peak() { # [--stdout FILE] command...: prints "seconds peak_MiB" (resident, or the GPU's)
    local watcher=0 stdout=/dev/null
    [ "$1" = --stdout ] && { stdout=$2; shift 2; }
    if [ $gpu_memory = 1 ]; then
        nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 100 >"$work/gpu" 2>/dev/null &
        watcher=$!
    fi
    # The Python standard library instead of GNU time, which a GPU machine may lack.
    if ! "$python" -c 'import resource, subprocess, sys, time
t = time.perf_counter()
code = subprocess.call(sys.argv[2:], stdout=open(sys.argv[1], "w"))
print("%.2f %.0f" % (time.perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024))
sys.exit(code)' "$stdout" "$@" >"$work/time" 2>"$work/err"; then
        [ $watcher = 0 ] || kill $watcher 2>/dev/null || true
        cat "$work/err" >&2
        return 1
    fi
    if [ $watcher != 0 ]; then
        kill $watcher 2>/dev/null || true
        wait $watcher 2>/dev/null || true
        echo "$(cut -d' ' -f1 "$work/time") $(sort -n "$work/gpu" | tail -1)"
    else
        cat "$work/time"
    fi
}

echo "# d2dpo scale benchmark, $(date -u +%F), $(nproc) CPUs, $(uname -m), device $device; ${time_flag[*]:-time-agnostic}"
[ $gpu_memory = 0 ] || echo "# $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); peak MiB: the GPU's, nvidia-smi"
printf '%-5s %4s %3s | %-30s | %9s %9s | %s\n' size L thr figure d2dpo "PyTorch" "ratio (PyTorch / d2dpo: > 1 is d2dpo faster)"
for size in $sizes; do
    for length in $lengths; do
        [ "$size" = 150M ] && [ "$length" -gt 150 ] && [ -z "${LONG_150M:-}" ] && continue
        "$python" "$here/python/examples/esm2.py" "$size" --length "$length" "${time_flag[@]}" -o "$work/m.pt" >/dev/null
        read -r import_s import_mib < <(elapsed_and_peak "$d2dpo" import --torchscript "$work/m.pt" \
            --vocabulary "$work/m.vocab.json" --task sequences --max-length "$length" --eval-samples 0 --device "$device" -o "$work/m.d2dpo")
        printf '%-5s %4s %3s | %-30s | %9s %9s |\n' "$size" "$length" - "import s / peak MiB" "$import_s" "$import_mib"
        for t in $threads; do
            read -r _ peer_mib < <(elapsed_and_peak --stdout "$work/peer.json" "$python" "$here/bench/scale_peer.py" \
                "$size" --length "$length" "${time_flag[@]}" --threads "$t" --device "$device" \
                --pairs "$(echo $pairs | tr ' ' ,)" --passes "$passes" --min-seconds "$seconds")
            peer=$(cat "$work/peer.json")
            # A pass's cost, timed inside d2dpo (`bench -c` samples 2 sequences in $passes Euler passes,
            # each one forward of a batch of 2): process start-up and a GPU's queue stay out of it.
            read -r _ _ < <(elapsed_and_peak --stdout "$work/bench2.json" "$d2dpo" bench -c "$work/m.d2dpo" --batch 2 \
                --sampling-steps "$passes" --threads "$t" --device "$device" --json --min-seconds "$seconds")
            pass=$("$python" -c "import json; r = json.load(open('$work/bench2.json'))['results'][0]; print(2 / r['sampling_sequences_per_second'] / $passes)")
            read -r _ sample_mib < <(elapsed_and_peak "$d2dpo" sample -c "$work/m.d2dpo" -n 2 --threads "$t" --device "$device" \
                --sampler confident --sampling-steps "$passes" -o "$work/s.txt")
            row() { "$python" -c "import sys; o, p = float(sys.argv[2]), float(sys.argv[3]); print('%-5s %4s %3s | %-30s | %9.3f %9.3f | %6.2fx' % ('$size', '$length', '$t', sys.argv[1], o, p, p / o))" "$@"; }
            row "pair s, exact (L passes)" "$("$python" -c "print($pass * $length)")" \
                "$("$python" -c "import json,sys; print(json.loads(sys.argv[1])['exact_seconds_per_pair'])" "$peer")"
            row "pair s, confident $passes passes" "$("$python" -c "print($pass * $passes)")" \
                "$("$python" -c "import json,sys; print(json.loads(sys.argv[1])['confident${passes}_seconds_per_pair'])" "$peer")"
            train_mib=- estimate=-
            for p in $pairs; do
                read -r _ train_mib < <(elapsed_and_peak --stdout "$work/bench.json" "$d2dpo" bench -c "$work/m.d2dpo" \
                    --batch "$p" --sampling-steps 1 --threads "$t" --device "$device" --json --min-seconds "$seconds")
                row "D2-DPO s/step, $p pairs" \
                    "$("$python" -c "import json; print(1 / json.load(open('$work/bench.json'))['results'][0]['dpo_steps_per_second'])")" \
                    "$("$python" -c "import json,sys; print(json.loads(sys.argv[1])['dpo_seconds_per_step_$p'])" "$peer")"
                if [ -n "${PLAIN:-}" ]; then
                    D2DPO_SCRIPT_ATTENTION=plain D2DPO_SCRIPT_LINEAR=plain "$d2dpo" bench -c "$work/m.d2dpo" --batch "$p" --sampling-steps 1 \
                        --threads "$t" --device "$device" --json --min-seconds "$seconds" >"$work/plain.json" 2>/dev/null
                    row "  the same, model's own code" \
                        "$("$python" -c "import json; print(1 / json.load(open('$work/plain.json'))['results'][0]['dpo_steps_per_second'])")" \
                        "$("$python" -c "import json,sys; print(json.loads(sys.argv[1])['dpo_seconds_per_step_$p'])" "$peer")"
                fi
                # The step's arithmetic over its time, each side's, as a share of the machine's SGEMM rate.
                if [ "$device" = cpu ]; then
                    "$python" -c "import json,sys; r = json.loads(sys.argv[1]); b = json.load(open('$work/bench.json'))['results'][0]
g, peak = r['dpo_gflop_per_step_$p'], r['sgemm_gflops']
o, e = g * b['dpo_steps_per_second'], g / r['dpo_seconds_per_step_$p']
print('%-5s %4s %3s | %-30s | %9.1f %9.1f | %.1f GFLOP a step; SGEMM %.1f GFLOP/s: %.0f%% / %.0f%%' % ('$size', '$length', '$t', 'GFLOP/s, $p pairs', o, e, g, peak, 100 * o / peak, 100 * e / peak))" "$peer"
                fi
                # The settings check's estimate of the step's peak, beside the measured one.
                estimate=$("$python" -c "import json; print(round(json.load(open('$work/bench.json'))['results'][0]['estimated_dpo_peak_mib']))")
            done
            printf '%-5s %4s %3s | %-30s | %9s %9s | estimate %s\n' "$size" "$length" "$t" "peak MiB sampling / training" \
                "$sample_mib/$train_mib" "$peer_mib" "$estimate"
        done
    done
done
echo "pair s: the cost of one pass of a batch of 2 (d2dpo bench -c, $passes Euler passes) times L (exact) or $passes (confident);"
echo "PyTorch: eager, the same model and weights; its peak is of the whole peer run (sampling and training);"
[ "$device" = cpu ] && echo "GFLOP/s: the step's matrix products (PyTorch's profiler, forward and backward) over each side's step time, and as a share of SGEMM (1024^3, same threads);"
echo "estimate: what the settings check expects of the last D2-DPO step's peak (the measured one is the whole process's)."
