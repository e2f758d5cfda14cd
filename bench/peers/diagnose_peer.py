"""Peer of bench_diagnose's trace diagnosis: what a user writes without failslow to find a
compute straggler in a folder of Kineto traces (one JSON file per rank), in Python and numpy.

usage: diagnose_peer.py DIR EXPECTED_RANKS
  DIR             the rank_*.json traces of one job (PyTorch profiler / Kineto)
  EXPECTED_RANKS  comma-separated ranks failslow called stragglers; the peer must flag exactly
                  these (it exits 1 otherwise, printing what it found)

Per trace: json.load; ProfilerStep#N ranges (user_annotation); each GPU kernel is attributed to
the step whose range contains its launch (the cuda_runtime call with the same correlation id);
per rank and step, the sums of compute-kernel and NCCL-kernel durations. Then per data-parallel
group (the DATA_PARALLEL_GROUP of the trace's distributedInfo.pg_config: ranks doing the same
work) and step, the median compute over the group's ranks; robust z = (x - median) / (1.4826 MAD),
the MAD pooled over the group's ranks and steps; a rank is a straggler when z > 3.5 in at least
3 steps. Prints the flagged ranks and the time on stderr, and the seconds per (rank, step) of
the best of 3 runs as the last line.
"""
import glob
import json
import os
import sys
import time

import _debian_python

_debian_python.require("numpy")
import numpy as np

Z_THRESHOLD = 3.5
MIN_STEPS = 3


def rank_steps(path):
    """(rank, dp group, {step: (compute_us, nccl_us)}) of one trace."""
    with open(path) as f:
        doc = json.load(f)
    info = doc.get("distributedInfo", {})
    rank = info["rank"]
    group = [rank]
    for pg in info.get("pg_config", []):
        if pg.get("pg_desc") == "DATA_PARALLEL_GROUP" and rank in pg["ranks"]:
            group = pg["ranks"]
    steps, launch_corr, launch_ts = [], [], []
    k_corr, k_dur, k_nccl = [], [], []
    for e in doc["traceEvents"]:
        if e.get("ph") != "X":
            continue
        cat = e.get("cat")
        if cat == "kernel":
            k_corr.append(e["args"]["correlation"])
            k_dur.append(e["dur"])
            k_nccl.append(e["name"].startswith("nccl"))
        elif cat == "cuda_runtime":
            c = e.get("args", {}).get("correlation")
            if c is not None:
                launch_corr.append(c)
                launch_ts.append(e["ts"])
        elif cat == "user_annotation" and e["name"].startswith("ProfilerStep#"):
            steps.append((e["ts"], e["ts"] + e["dur"], int(e["name"][len("ProfilerStep#") :])))
    steps.sort()
    starts = np.array([s[0] for s in steps])
    ends = np.array([s[1] for s in steps])
    numbers = np.array([s[2] for s in steps])
    # Launch time of each kernel through its correlation id.
    lc = np.array(launch_corr)
    lts = np.array(launch_ts)
    order = np.argsort(lc)
    lc, lts = lc[order], lts[order]
    kc = np.array(k_corr)
    pos = np.clip(np.searchsorted(lc, kc), 0, len(lc) - 1)
    launched = lc[pos] == kc
    ts = lts[pos]
    # The step whose range contains the launch.
    idx = np.searchsorted(starts, ts, side="right") - 1
    ok = launched & (idx >= 0)
    ok[ok] &= ts[ok] <= ends[idx[ok]]
    dur = np.array(k_dur)
    nccl = np.array(k_nccl)
    compute = np.bincount(idx[ok], weights=np.where(nccl[ok], 0.0, dur[ok]), minlength=len(steps))
    comm = np.bincount(idx[ok], weights=np.where(nccl[ok], dur[ok], 0.0), minlength=len(steps))
    return rank, tuple(group), {int(n): (c, m) for n, c, m in zip(numbers, compute, comm)}


def diagnose(folder):
    per_rank = [rank_steps(p) for p in sorted(glob.glob(os.path.join(folder, "rank_*.json")))]
    world = max(r for r, _, _ in per_rank) + 1
    step_numbers = sorted({n for _, _, s in per_rank for n in s})
    col = {n: i for i, n in enumerate(step_numbers)}
    compute = np.full((world, len(step_numbers)), np.nan)
    comm = np.full((world, len(step_numbers)), np.nan)
    groups = set()
    for r, g, s in per_rank:
        groups.add(g)
        for n, (c, m) in s.items():
            compute[r, col[n]] = c
            comm[r, col[n]] = m
    flagged = []
    for g in sorted(groups):
        x = compute[list(g)]
        med = np.nanmedian(x, axis=0)
        e = x - med
        scale = 1.4826 * np.nanmedian(np.abs(e))
        if not scale > 0:
            continue
        z = e / scale
        elevated = np.nansum(z > Z_THRESHOLD, axis=1)
        flagged += [g[i] for i in np.nonzero(elevated >= MIN_STEPS)[0]]
    return sorted(flagged), world, len(step_numbers)


def main():
    folder = sys.argv[1]
    expected = sorted(int(r) for r in sys.argv[2].split(",") if r)
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        flagged, world, steps = diagnose(folder)
        best = min(best, time.perf_counter() - t0)
    print(f"{world} ranks x {steps} steps, stragglers {flagged}, best {best:.3f} s", file=sys.stderr)
    if flagged != expected:
        print(f"peer flagged {flagged}, failslow {expected}")
        sys.exit(1)
    print(best / (world * steps))


if __name__ == "__main__":
    main()
