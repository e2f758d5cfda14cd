"""Peer of bench_detect's EWMA chart: z_t by scipy.signal.lfilter and the limit test vectorised,
which is how a numpy user charts a recorded series.

usage: ewma_chart.py N
Prints the seconds per value (best of 5) as the last line.
"""
import os
import sys
import time

import _debian_python

_debian_python.require("numpy", "scipy.signal")
import numpy as np
from scipy.signal import lfilter


def chart(x, lam, L, mu, sigma):
    z = lfilter([lam], [1.0, -(1.0 - lam)], x, zi=[(1.0 - lam) * mu])[0]
    width = L * sigma * np.sqrt(lam / (2.0 - lam))
    return (z > mu + width) | (z < mu - width)


def main():
    n = int(sys.argv[1])
    x = np.random.default_rng(2).normal(size=n)
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        chart(x, 0.2, 2.962, 0.0, 1.0)
        best = min(best, time.perf_counter() - t0)
    print(best / n)


if __name__ == "__main__":
    main()