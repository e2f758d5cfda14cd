"""Peer of bench_diagnose's straggler statistics: L2's computation (diagnose/l2_stragglers.hpp)
in numpy/scipy, vectorised over ranks and steps, on the model the benchmark wrote.

usage: stragglers_numpy.py FILE RANKS PHASES STEPS ROLES EXPECTED_RANKS
  FILE            float64, native byte order: iteration_ns (RANKS x STEPS), then phase_ns
                  (RANKS x PHASES x STEPS), row-major, as failslow::diagnose::job_model holds them
  ROLES           one letter per phase: w (work), a (annotated work: forward, backward, ...;
                  preferred when a rank is slow in several phases), c (communication: never
                  blamed, the victim guard reads it), i (idle: judged against the median
                  iteration time)
  EXPECTED_RANKS  comma-separated ranks failslow called stragglers; the peer must find exactly
                  these (it exits 1 otherwise, printing what it found)
One comparison group (the whole job: data parallelism). Per phase: step medians over ranks
(np.median over axis 0), robust z on the pooled MAD, elevated cells (z > 3.5 and 3 % over the
median), the per-step CV; per rank: the run of elevated steps with the most of them (gaps of at
most one step; it needs 3 elevated steps and 60 % of its span), its binomial tail against the
other ranks' rate (scipy.stats.binom.sf); Benjamini-Hochberg at 0.01 over every (rank, phase);
for each significant rank the victim guard (its own communication z over the claim) and the
ranks that wait for it. Prints the seconds per (rank, step) of the best of 3 as the last line.
"""
import sys
import time

import _debian_python

_debian_python.require("numpy", "scipy.stats")
import numpy as np
from scipy.stats import binom, norm

from bh_fdr import bh  # the Benjamini-Hochberg peer of bench_detect, shared

Z, MIN_EFFECT, MIN_STEPS, MIN_FRACTION, MAX_GAP, FDR_Q = 3.5, 0.03, 3, 0.6, 1, 0.01
MIN_PHASE_NS, RESOLUTION, MAD_TO_SIGMA = 1000.0, 1e-3, 1.4826


def best_run(row):
    """(first, last, count) of the run of elevated steps with the most of them."""
    best = (0, 0, 0)
    steps = np.flatnonzero(row)
    if steps.size == 0:
        return best
    # Runs: split where the distance to the previous elevated step exceeds MAX_GAP + 1.
    cuts = np.flatnonzero(np.diff(steps) > MAX_GAP + 1) + 1
    for run in np.split(steps, cuts):
        if run.size > best[2]:
            best = (int(run[0]), int(run[-1]), int(run.size))
    return best


def robust(x, denom, resolution_level):
    med = np.median(x, axis=0)
    e = x - med
    scale = max(MAD_TO_SIGMA * np.median(np.abs(e)), RESOLUTION * resolution_level)
    return med, e, (scale if scale > 0 else 1.0)


def stragglers(it, ph, roles):
    R, P, S = ph.shape
    comm_p = roles.index("c")
    p_floor = norm.sf(Z)
    tests = []  # (phase, rank, first, last, p)
    pvals = []
    stats = {}
    phase_cv = {}
    for p in range(P):
        if roles[p] == "c":
            continue
        x = ph[:, p, :]
        idle = roles[p] == "i"
        med = np.median(x, axis=0)
        denom = np.median(it, axis=0) if idle else med
        level, dlevel = np.median(med), np.median(denom)
        if not dlevel >= MIN_PHASE_NS or not (idle or level >= MIN_PHASE_NS):
            continue
        phase_cv[p] = np.median(x.std(axis=0, ddof=1) / x.mean(axis=0))
        med, e, scale = robust(x, denom, dlevel)
        elevated = (e / scale > Z) & (e / denom > MIN_EFFECT)
        k = elevated.sum(axis=1)
        K, n, N = k.sum(), S, R * S
        p_rank = np.ones(R)
        for r in np.flatnonzero(k >= MIN_STEPS):  # the others cannot be persistent
            first, last, count = best_run(elevated[r])
            if count >= MIN_STEPS and count >= MIN_FRACTION * (last - first + 1):
                rate = max((K - k[r]) / (N - n), p_floor)
                p_rank[r] = binom.sf(k[r] - 1, n, rate)
                tests.append((len(pvals) * R + r, p, r, first, last))
        pvals.append(p_rank)
        stats[p] = (med, e, scale)
    pvals = np.concatenate(pvals)
    significant = set(bh(pvals, FDR_Q).tolist())
    comm = ph[:, comm_p, :]
    cmed, ce, cscale = robust(comm, None, max(np.median(np.median(comm, axis=0)), 1.0))
    cscale = max(cscale, 1.0)
    claims = {}
    for j, p, r, first, last in tests:
        if j not in significant:
            continue
        med, e, scale = stats[p]
        claim = slice(first, last + 1)
        if np.median(ce[r, claim]) / cscale > Z:  # it waits too: a victim
            continue
        excess = np.median(ph[r, p, claim]) - np.median(med[claim])
        key = (roles[p] == "a", excess)  # the annotated phase with the largest excess first
        if r not in claims or key > claims[r][0]:
            claims[r] = (key, p, excess, first, last)
    waiting = {}
    for r, (_, p, excess, first, last) in claims.items():
        inside = np.zeros(S, dtype=bool)
        inside[first : last + 1] = True
        up = np.median(comm[:, inside], axis=1) - np.median(comm[:, ~inside], axis=1)
        up[r] = 0
        waiting[r] = int((up > 0.25 * max(excess, 0.0)).sum())
    return sorted(claims), waiting, phase_cv


def main():
    path, R, P, S, roles = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
    expected = sorted(int(r) for r in sys.argv[6].split(",") if r)
    data = np.fromfile(path, dtype=np.float64)
    it = data[: R * S].reshape(R, S)
    ph = data[R * S :].reshape(R, P, S)
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        found, waiting, _ = stragglers(it, ph, roles)
        best = min(best, time.perf_counter() - t0)
    print(f"{R} ranks x {S} steps x {P} phases: stragglers {found}, waiting {waiting}, best {best:.3f} s",
          file=sys.stderr)
    if found != expected:
        print(f"peer found {found}, failslow {expected}")
        sys.exit(1)
    print(best / (R * S))


if __name__ == "__main__":
    main()
