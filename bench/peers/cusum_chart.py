"""Peer of bench_detect's CUSUM: Page's recursion has a max(0, .) in the loop and does not
vectorise in numpy, so the peer is the Python loop over a numpy array a user would write.

usage: cusum_chart.py N
Prints the seconds per value (best of 3) as the last line.
"""
import os
import sys
import time

try:
    import numpy as np
except ImportError:  # the python3 on PATH (e.g. pyenv's) may lack numpy; Debian's has it
    if os.path.exists("/usr/bin/python3") and os.path.realpath(sys.executable) != os.path.realpath("/usr/bin/python3"):
        os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
    raise


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