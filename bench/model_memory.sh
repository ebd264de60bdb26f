#!/usr/bin/env bash
# Peak memory of import, eval and a D2-DPO step against the size of a model brought in: ESM2-like
# TorchScript models whose float32 weights are 0.1, 0.5, 1 and 2 GiB (python/examples/esm2.py, at
# a short length, so that the weights and not the activations set the peak), each command's peak
# resident memory against the weights' bytes. The import's memory check and the training estimate
# are read against these figures (docs/benchmarks.md).
#   SIZES="0.1GiB 0.5GiB" bash bench/model_memory.sh
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
d2dpo=${D2DPO:-$here/build/release/app/d2dpo}
python=${PYTHON:-/usr/bin/python3}
sizes=${SIZES:-0.1GiB 0.5GiB 1GiB 2GiB}
threads=${THREADS:-2}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

peak_mib() { # command...: its peak resident MiB (it must succeed)
    "$python" -c 'import resource, subprocess, sys
run = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
if run.returncode:
    sys.stderr.write(run.stderr.decode(errors="replace"))
print("%.0f" % (resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024))
sys.exit(run.returncode)' "$@"
}

echo "# d2dpo model-memory benchmark, $(date -u +%F), $(nproc) CPUs, $(free -g | awk '/Mem:/ {print $2}') GiB, $threads threads"
printf '%-7s | %9s | %22s | %22s | %22s | %s\n' size "weights" "import MiB (x weights)" "eval MiB (x weights)" \
    "D2-DPO MiB (x weights)" "checkpoint MiB"
for size in $sizes; do
    "$python" "$here/python/examples/esm2.py" "$size" --length 20 -o "$work/m.pt" >/dev/null
    weights=$("$python" -c "import os; print(os.path.getsize('$work/m.pt') / 2**20)")
    import=$(peak_mib "$d2dpo" import --torchscript "$work/m.pt" --vocabulary "$work/m.vocab.json" --task sequences \
        --max-length 20 --eval-samples 0 --threads "$threads" -o "$work/m.d2dpo")
    rm -f "$work/m.pt"
    eval=$(peak_mib "$d2dpo" eval -c "$work/m.d2dpo" -n 4 --threads "$threads")
    dpo=$(peak_mib "$d2dpo" bench -c "$work/m.d2dpo" --batch 1 --sampling-steps 1 --warmup 0 --min-seconds 0.1 \
        --threads "$threads")
    "$python" -c "import sys, os
w = float(sys.argv[1])
cells = ['%6s (%4.1fx)' % (m, float(m) / w) for m in sys.argv[2:5]]
print('%-7s | %5.0f MiB | %22s | %22s | %22s | %.0f' % (sys.argv[5], w, *cells, os.path.getsize(sys.argv[6]) / 2**20))" \
        "$weights" "$import" "$eval" "$dpo" "$size" "$work/m.d2dpo"
    rm -f "$work/m.d2dpo"
done
echo "weights: the TorchScript file's size; MiB: each command's peak resident memory (libtorch's own ~0.4 GiB included)."
