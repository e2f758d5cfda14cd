#!/usr/bin/env bash
# The diagnosis from traces, swept: every scenario a layout can host, simulated (failslow simulate),
# diagnosed from its Kineto traces (failslow diagnose) and scored against its truth (failslow
# score), one table for the whole sweep. The figures in docs/simulator.md come from it:
#   bench/trace_sweep.sh /tmp/sweep-cal                 # the calibrated (default) job
#   bench/trace_sweep.sh /tmp/sweep-gpu --gpu-bound     # the earlier GPU-bound model
#   LAYOUTS="tp=1,pp=1,dp=8 tp=1,pp=1,dp=4 tp=2,pp=1,dp=4" NOISES="1 2" bench/trace_sweep.sh /tmp/sweep-dp
# Arguments after the output folder go to every `failslow simulate`. Environment: TOOL (default
# build/release/examples/cli/failslow), LAYOUTS, SCENARIOS, SEEDS (1 2 3), NOISES (1), STEPS (30),
# FSUM (1: diagnose each job's per-step window summaries instead -- failslow compress, then
# failslow diagnose on the .fsum with the layout from truth.json, the always-on path), FSUM_LAYOUT
# (1; 0: diagnose the .fsum without the layout, as a collector that knows none would).
# Writes OUT/score.txt (the table) and OUT/misses.txt (each false positive or missed fault); each
# case's traces are deleted once diagnosed, its truth and report kept.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: bench/trace_sweep.sh OUT_DIR [simulate options...]}
shift
tool=${TOOL:-build/release/examples/cli/failslow}
layouts=${LAYOUTS:-"tp=2,pp=4,dp=8 tp=4,pp=2,dp=2 tp=1,pp=1,dp=8 tp=2,pp=2,dp=4"}
scenarios=${SCENARIOS:-$("$tool" simulate --list | tr '\n' ' ')}
seeds=${SEEDS:-"1 2 3"}
noises=${NOISES:-1}
steps=${STEPS:-30}
fsum=${FSUM:-0}
fsum_layout=${FSUM_LAYOUT:-1}
rm -rf "$out"
mkdir -p "$out"
args=()
: > "$out/misses.txt"
for layout in $layouts; do
  IFS=, read -r -a dims <<< "$layout"
  sizes=()
  for d in "${dims[@]}"; do sizes+=("--${d%%=*}" "${d#*=}"); done
  for sc in $scenarios; do
    for seed in $seeds; do
      for noise in $noises; do
        case_dir="$out/${layout//[=,]/_}_${sc}_s${seed}_n${noise}"
        # A scenario the layout cannot host (a tp link without tp) is skipped.
        "$tool" simulate "${sizes[@]}" --scenario "$sc" --seed "$seed" --noise "$noise" --steps "$steps" \
          --threads 1 "$@" --out "$case_dir" > /dev/null 2>&1 || { rm -rf "$case_dir"; continue; }
        if [ "$fsum" = 1 ]; then
          "$tool" compress "$case_dir"/rank_*.json -o "$case_dir/job.fsum" > /dev/null
          read -r layout_flags order < <(python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["topology"]; print(",".join("%s=%d" % (k, t[k]) for k in ("tp","cp","ep","dp","pp")), t["order"])' "$case_dir/truth.json")
          given=(--topology "$layout_flags" --order "$order")
          [ "$fsum_layout" = 1 ] || given=()
          "$tool" diagnose "$case_dir/job.fsum" "${given[@]}" --format json --out "$case_dir/report.json" > /dev/null
        else
          "$tool" diagnose "$case_dir" --threads 1 --format json --out "$case_dir/report.json" > /dev/null
        fi
        rm -f "$case_dir"/rank_*.json
        args+=(--truth "$case_dir/truth.json" --report "$case_dir/report.json")
        "$tool" score --truth "$case_dir/truth.json" --report "$case_dir/report.json" |
          grep -E "false positive|MISSED|not localised" | sed "s|^|${case_dir##*/}: |" >> "$out/misses.txt" || true
      done
    done
  done
done
"$tool" score "${args[@]}" > "$out/score.txt"
tail -n 14 "$out/score.txt"
echo "false positives and misses: $(wc -l < "$out/misses.txt") line(s) in $out/misses.txt"
