#!/usr/bin/env bash
# The main job: installs the Debian packages, builds the failslow tool (release preset),
# simulates the default job -- 64 ranks (tp 2 x pp 4 x dp 8, 1F1B, 30 steps) with a compute
# straggler -- into build/release/main-job/, shows what the generated traces hold
# (failslow inspect), compresses it into per-step window summaries (failslow compress) and
# then shows the ground truth. Arguments, when given, replace the default
# `failslow simulate` options (e.g. --scenario dp-link --seed 3).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh >/dev/null
cmake --preset release >/dev/null
cmake --build --preset release --target failslow_cli -j "$(nproc)" >/dev/null
tool=build/release/examples/cli/failslow
out=build/release/main-job
rm -rf "$out"
if [ "$#" -gt 0 ]; then args=("$@"); else args=(--scenario compute-straggler --tp 2 --pp 4 --dp 8 --steps 30 --seed 1); fi
echo "== failslow simulate =="
"$tool" simulate "${args[@]}" --gzip --out "$out"
echo
echo "== failslow inspect (what the generated job holds) =="
"$tool" inspect "$out"/rank_*.json.gz
echo
echo "== failslow compress (the job as per-step window summaries) =="
"$tool" compress "$out"/rank_*.json.gz -o "$out/job.fsum"
echo
echo "== truth ($out/truth.json, per-rank clock offsets left out) =="
python3 - "$out/truth.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
t.pop("clock_offsets_ns", None)
for f in t["faults"]:
    if len(f.get("kernels", [])) > 4:
        f["kernels"] = f["kernels"][:4] + ["... %d kernels in all" % len(f["kernels"])]
print(json.dumps(t, indent=2))
PY
