#!/usr/bin/env bash
# The main job: installs the Debian packages, builds the failslow tool (release preset),
# simulates the default job -- 64 ranks (tp 2 x pp 4 x dp 8, 1F1B, 30 steps, host and model shape
# calibrated against real PyTorch traces: docs/simulator.md) with a compute straggler -- into
# build/release/main-job/, diagnoses it from its traces (failslow diagnose:
# the report for people, then as JSON), scores the report against the injected truth
# (failslow score), and diagnoses the same job again from its per-step window summaries
# (failslow compress, then failslow diagnose on the .fsum: the always-on path). Arguments, when
# given, replace the default `failslow simulate` options (e.g. --scenario dp-link --seed 3).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh >/dev/null
cmake --preset release >/dev/null
cmake --build --preset release --target failslow_cli -j "$(nproc)" >/dev/null
tool=build/release/examples/cli/failslow
out=build/release/main-job
rm -rf "$out"
if [ "$#" -gt 0 ]; then args=("$@"); else args=(--scenario compute-straggler --tp 2 --pp 4 --dp 8 --steps 30 --seed 1); fi
start=$(date +%s.%N)
echo "== failslow simulate =="
"$tool" simulate "${args[@]}" --gzip --out "$out"
echo
echo "== failslow diagnose $out (the layout comes from the traces' pg_config) =="
"$tool" diagnose "$out"
"$tool" diagnose "$out" --format json --out "$out/report.json"
echo
echo "== failslow score (the report against the injected fault, $out/truth.json) =="
"$tool" score --truth "$out/truth.json" --report "$out/report.json"
echo
echo "== the same job as per-step window summaries: failslow compress, then diagnose the .fsum =="
"$tool" compress "$out"/rank_*.json.gz -o "$out/job.fsum" | head -1
# Summaries carry no process groups: the layout is given, as an always-on deployment knows it.
read -r layout order < <(python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["topology"]; print(",".join("%s=%d" % (k, t[k]) for k in ("tp","cp","ep","dp","pp")), t["order"])' "$out/truth.json")
"$tool" diagnose "$out/job.fsum" --topology "$layout" --order "$order" --format json --out "$out/report_fsum.json"
"$tool" score --truth "$out/truth.json" --report "$out/report_fsum.json" | tail -2
echo
echo "main job done in $(python3 -c "import time,sys; print('%.1f' % (time.time() - float(sys.argv[1])))" "$start") s"
