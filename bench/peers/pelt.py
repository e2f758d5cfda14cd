"""Peer of bench_detect's PELT: the same search in numpy (vectorised over the candidate set).

usage: pelt.py N
Series: N points, a level change every 500 points (levels from a seeded numpy generator), unit
noise; cost RSS / sigma^2 with sigma = 1, penalty 2 ln N (BIC for a mean change), minimum segment
2, pruning as in Killick et al. 2012. Prints the seconds per point (best of 3) as the last line.
"""
import os
import sys
import time

import _debian_python

_debian_python.require("numpy")
import numpy as np


def series(n):
    rng = np.random.default_rng(1)
    levels = np.repeat(rng.normal(0.0, 3.0, size=n // 500 + 1), 500)[:n]
    return levels + rng.normal(size=n)


def pelt(y, beta, m):
    n = len(y)
    s1 = np.concatenate(([0.0], np.cumsum(y)))
    s2 = np.concatenate(([0.0], np.cumsum(y * y)))
    f = np.full(n + 1, np.inf)
    f[0] = -beta
    last = np.zeros(n + 1, dtype=np.int64)
    cand = np.zeros(0, dtype=np.int64)
    doomed = [np.zeros(0, dtype=np.int64) for _ in range(m)]
    for t in range(m, n + 1):
        d = doomed[t % m]
        if d.size:
            cand = np.setdiff1d(cand, d, assume_unique=True)
        s = t - m
        if np.isfinite(f[s]):
            cand = np.append(cand, s)
        seg = t - cand
        a = s1[t] - s1[cand]
        cost = (s2[t] - s2[cand]) - a * a / seg
        vals = f[cand] + cost + beta
        i = int(np.argmin(vals))
        f[t] = vals[i]
        last[t] = cand[i]
        doomed[t % m] = cand[vals - beta > f[t]]
    cps = []
    t = last[n]
    while t > 0:
        cps.append(int(t))
        t = last[t]
    return cps[::-1]


def main():
    n = int(sys.argv[1])
    y = series(n)
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        pelt(y, 2 * np.log(n), 2)
        best = min(best, time.perf_counter() - t0)
    print(best / n)


if __name__ == "__main__":
    main()