#!/usr/bin/env bash
# The real-GPU check of the CUPTI collector (docs/collect.md): builds a small CUDA program that
# runs many short (~2 us) and a few long (~2 ms) kernels per step, runs it without and with
# libfailslow_inject.so, and prints the overhead in percent and the kernels captured versus
# launched. Needs a GPU, nvcc and a build with -DFAILSLOW_WITH_CUPTI=ON:
#   cmake --preset release -B build/cupti -DFAILSLOW_WITH_CUPTI=ON
#   cmake --build build/cupti --target failslow_inject failslow
#   examples/inject/gpu-check.sh [build/cupti] [steps] [short kernels per step] [long per step]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build/cupti}
steps=${2:-200}
shorts=${3:-500}
longs=${4:-4}
runs=${RUNS:-5}
lib=$(cd "$build" && pwd)/examples/inject/libfailslow_inject.so
[ -f "$lib" ] || { echo "gpu-check: $lib missing (build target failslow_inject)"; exit 2; }
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$nvcc" -O2 -std=c++17 -o "$work/gpu_check" "$here/gpu_check.cu"

timed_ms() { sed -n 's/.* in \([0-9.]*\) ms$/\1/p' "$1"; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

# Interleave plain and injected runs so that clock and thermal drift hit both alike.
: > "$work/plain.ms"; : > "$work/inject.ms"
for i in $(seq "$runs"); do
  "$work/gpu_check" "$steps" "$shorts" "$longs" > "$work/plain.out"
  timed_ms "$work/plain.out" >> "$work/plain.ms"
  mkdir -p "$work/out$i"
  CUDA_INJECTION64_PATH="$lib" FAILSLOW_OUT="$work/out$i" RANK=0 \
    "$work/gpu_check" "$steps" "$shorts" "$longs" > "$work/inject.out" 2> "$work/inject.err"
  timed_ms "$work/inject.out" >> "$work/inject.ms"
done
plain=$(median < "$work/plain.ms")
inject=$(median < "$work/inject.ms")
launched=$(sed -n 's/^launched \([0-9]*\) kernels.*/\1/p' "$work/inject.out")
captured=$(sed -n 's/.*stopped: \([0-9]*\) records.*/\1/p' "$work/inject.err")
dropped=$(sed -n 's/.* \([0-9]*\) dropped by CUPTI.*/\1/p' "$work/inject.err")
echo "gpu-check: injection: $(head -1 "$work/inject.err")"
echo "gpu-check: $runs runs each, $steps steps x ($shorts short + $longs long kernels)"
echo "gpu-check: median timed loop: plain $plain ms, with libfailslow_inject $inject ms"
awk -v a="$plain" -v b="$inject" 'BEGIN { printf "gpu-check: overhead %.2f %%\n", (b - a) / a * 100 }'
echo "gpu-check: kernels launched $launched, captured ${captured:-0} (dropped by CUPTI: ${dropped:-?})"
ls -l "$work/out$runs"/rank0.fsum
if [ -x "$build/examples/cli/failslow" ]; then "$build/examples/cli/failslow" inspect "$work/out$runs/rank0.fsum" | head -20; fi
[ "${captured:-0}" = "$launched" ] || { echo "gpu-check: FAIL: captured != launched"; exit 1; }
echo "gpu-check: OK"
