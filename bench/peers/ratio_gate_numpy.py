"""Peer of bench_detect's ratio gate: ratios x_s / median(previous w) with numpy's
sliding_window_view + median (vectorised), then the open/close state machine in Python.

usage: ratio_gate_numpy.py N W
Prints the seconds per value (best of 3) as the last line.
"""
import os
import sys
import time

import _debian_python

_debian_python.require("numpy", "numpy.lib.stride_tricks")
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view


def gate(x, w, open_t, close_t):
    base = np.median(sliding_window_view(x[:-1], w), axis=1)
    r = x[w:] / base
    windows = []
    start = None
    for s, v in enumerate(r.tolist()):
        if start is None:
            if v > open_t:
                start = last = s
        elif v >= close_t:
            last = s
        else:
            windows.append((start + w, last + w))
            start = None
    return windows


def main():
    n, w = int(sys.argv[1]), int(sys.argv[2])
    x = 100.0 * np.exp(np.random.default_rng(6).normal(0.0, 0.03, size=n))
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        gate(x, w, 1.2, 1.1)
        best = min(best, time.perf_counter() - t0)
    print(best / n)


if __name__ == "__main__":
    main()