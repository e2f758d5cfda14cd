#!/usr/bin/env python3
"""The diagnosis on jobs no committed sweep uses: N simulated jobs with everything drawn at random.

bench/trace_sweep.sh runs every scenario on four fixed layouts, 30 steps, 4 micro-batches,
2 layers, 1F1B, noise 1. This draws each job's layout (10 of them, with cp and ep), scenario,
seed, noise (0.5-2), steps (16, 24, 40), onset, micro-batches (2, 4, 8), layers (1-3), schedule
(1F1B, GPipe), severity (1, 0.5, 0.25), first step number and host model (calibrated or, 30 %,
GPU-bound), simulates it (failslow simulate), diagnoses the traces (failslow diagnose) and
scores the report (failslow score). A draw the layout cannot host (a tp link without tp) is
skipped. One line per job; a job with a false positive, a missed or a mislocalised fault is
printed with the score's lines. The summary at the end counts them.

    bench/random_sweep.py OUT_DIR [N [SEED]] [-- extra failslow simulate options]

Environment: TOOL (default build/release/examples/cli/failslow). Traces are deleted once
diagnosed; each job's args.txt, truth.json and report.json are kept under OUT_DIR/cNNN.
"""
import os
import random
import shutil
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
tool = os.environ.get("TOOL", os.path.join(here, "..", "build", "release", "examples", "cli", "failslow"))
argv = sys.argv[1:]
extra = []
if "--" in argv:
    extra = argv[argv.index("--") + 1:]
    argv = argv[:argv.index("--")]
if not argv:
    sys.exit(__doc__)
out = argv[0]
n = int(argv[1]) if len(argv) > 1 else 100
seed0 = int(argv[2]) if len(argv) > 2 else 1
os.makedirs(out, exist_ok=True)
scenarios = subprocess.run([tool, "simulate", "--list"], capture_output=True, text=True, check=True).stdout.split()
layouts = [(8, 1, 4, 1, 1), (2, 8, 2, 1, 1), (1, 4, 4, 1, 1), (4, 4, 4, 1, 1), (2, 2, 2, 2, 1), (2, 2, 4, 1, 2),
           (1, 2, 16, 1, 1), (4, 1, 16, 1, 1), (1, 1, 32, 1, 1), (2, 3, 6, 1, 1)]  # tp, pp, dp, cp, ep
rng = random.Random(seed0)
counts = {"jobs": 0, "skipped": 0, "clean": 0, "false positives": 0, "missed": 0, "not localised": 0}
for i in range(n):
    tp, pp, dp, cp, ep = rng.choice(layouts)
    steps = rng.choice([16, 24, 40])
    args = ["--tp", tp, "--pp", pp, "--dp", dp, "--cp", cp, "--ep", ep, "--scenario", rng.choice(scenarios),
            "--seed", rng.randrange(1000, 100000), "--noise", rng.choice([0.5, 1, 1.5, 2]), "--steps", steps,
            "--onset", rng.randrange(4, steps - 5), "--microbatches", rng.choice([2, 4, 8]),
            "--layers", rng.choice([1, 2, 3]), "--schedule", rng.choice(["1f1b", "gpipe"]),
            "--severity", rng.choice([1, 0.5, 0.25]), "--first-step", rng.randrange(0, 5000), "--threads", 1]
    if rng.random() < 0.3:
        args.append("--gpu-bound")
    args = [str(a) for a in args] + extra
    case = os.path.join(out, "c%03d" % i)
    sim = subprocess.run([tool, "simulate", *args, "--out", case], capture_output=True, text=True)
    if sim.returncode != 0:
        counts["skipped"] += 1
        shutil.rmtree(case, ignore_errors=True)
        continue
    counts["jobs"] += 1
    with open(os.path.join(case, "args.txt"), "w") as f:
        f.write(" ".join(args) + "\n")
    report = os.path.join(case, "report.json")
    diag = subprocess.run([tool, "diagnose", case, "--threads", "1", "--format", "json", "--out", report],
                          capture_output=True, text=True)
    for f in os.listdir(case):
        if f.startswith("rank_"):
            os.remove(os.path.join(case, f))
    if diag.returncode != 0:
        print(i, "DIAGNOSE FAILED", " ".join(args), diag.stderr.strip(), flush=True)
        continue
    score = subprocess.run([tool, "score", "--truth", os.path.join(case, "truth.json"), "--report", report],
                           capture_output=True, text=True).stdout
    bad = [line.strip() for line in score.splitlines()
           if "false positive" in line or "MISSED" in line or "not localised" in line]
    counts["false positives"] += sum("false positive" in b for b in bad)
    counts["missed"] += sum("MISSED" in b for b in bad)
    counts["not localised"] += sum("not localised" in b for b in bad)
    counts["clean"] += 0 if bad else 1
    print(i, "BAD" if bad else "ok", " ".join(args), flush=True)
    for b in bad:
        print("   ", b, flush=True)
print("; ".join("%s %d" % kv for kv in counts.items()))
