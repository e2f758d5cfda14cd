"""Peer of bench_detect's CUSUM: Page's recursion has a max(0, .) in the loop and does not
vectorise in numpy, so the peer is the Python loop over a numpy array a user would write.

usage: cusum_chart.py N
Prints the seconds per value (best of 3) as the last line.
"""
import os
import sys
import time

import _debian_python

_debian_python.require("numpy")
import numpy as np


def cusum(x, mu, sigma, k, h):
    sp = sm = 0.0
    alarms = 0
    for v in ((x - mu) / sigma).tolist():
        sp = max(0.0, sp + v - k)
        sm = max(0.0, sm - v - k)
        if sp > h or sm > h:
            alarms += 1
            sp = sm = 0.0
    return alarms


def main():
    n = int(sys.argv[1])
    x = np.random.default_rng(3).normal(size=n)
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        cusum(x, 0.0, 1.0, 0.5, 5.0)
        best = min(best, time.perf_counter() - t0)
    print(best / n)


if __name__ == "__main__":
    main()