"""Peer of bench_detect's Benjamini-Hochberg: sort, scale, reversed cumulative minimum in numpy
(statsmodels' algorithm; scipy.stats.false_discovery_control does the same from scipy 1.11).

usage: bh_fdr.py M
Prints the seconds per p-value (best of 5) as the last line.
"""
import os
import sys
import time

import _debian_python

_debian_python.require("numpy")
import numpy as np


def bh(p, q):
    m = len(p)
    order = np.argsort(p, kind="mergesort")
    ranked = p[order] * m / np.arange(1, m + 1)
    adj = np.minimum.accumulate(ranked[::-1])[::-1]
    out = np.empty(m)
    out[order] = np.minimum(adj, 1.0)
    return np.nonzero(out <= q)[0]


def main():
    m = int(sys.argv[1])
    p = np.random.default_rng(5).uniform(size=m)
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        bh(p, 0.05)
        best = min(best, time.perf_counter() - t0)
    print(best / m)


if __name__ == "__main__":
    main()