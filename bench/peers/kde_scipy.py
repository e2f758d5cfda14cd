"""Peer of the KDE benchmark: what a Python user does to get a density for valley finding.

usage: kde_scipy.py N G
Data: N log-durations (numpy default_rng(1)): a 3-mode mixture in log space,
  ln(d) ~ 60% N(ln 20e3, 0.05), 30% N(ln 60e3, 0.08), 10% N(ln 300e3, 0.1)   (d in ns).
Timed (best of 3): scipy.stats.gaussian_kde(x) (Scott's factor) + evaluation on a G-point
numpy.linspace grid over [min - 3h, max + 3h], h = the kernel's standard deviation.
If N*G > 2e8 the evaluation is timed on a subsample of the grid (every k-th point, so that
N*G/k <= 2e8) and scaled linearly by G/(points evaluated); stderr says so.
Prints the seconds per item (one whole KDE of N samples on G points) as the last line of stdout.
"""
import os
import sys

import _debian_python

_debian_python.require("numpy", "scipy.stats")
import numpy as np
import scipy.stats
import math
import time

REPEATS = 3
MAX_WORK = 2e8


def make_data(n):
    rng = np.random.default_rng(1)
    comp = rng.choice(3, size=n, p=[0.6, 0.3, 0.1])
    mu = np.log(np.array([20e3, 60e3, 300e3]))[comp]
    sd = np.array([0.05, 0.08, 0.1])[comp]
    return rng.normal(mu, sd)


def main():
    n, g = int(sys.argv[1]), int(sys.argv[2])
    x = make_data(n)
    stride = max(1, math.ceil(n * g / MAX_WORK))
    if stride > 1:
        print(f"kde_scipy: N*G = {n * g:.3g} > {MAX_WORK:.0e}: evaluating every {stride}-th grid point "
              f"and scaling the evaluation time linearly", file=sys.stderr)
    best = math.inf
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        kde = scipy.stats.gaussian_kde(x)
        h = math.sqrt(kde.covariance[0, 0])
        grid = np.linspace(x.min() - 3 * h, x.max() + 3 * h, g)
        t1 = time.perf_counter()
        sub = grid[::stride]
        density = kde(sub)
        t2 = time.perf_counter()
        total = (t1 - t0) + (t2 - t1) * (g / sub.size)
        best = min(best, total)
    print(f"kde_scipy: N={n} G={g} h={h:.4g} evaluated {sub.size} points, max density {density.max():.4g}; "
          f"best of {REPEATS}: {best:.4g} s", file=sys.stderr)
    print(best)


if __name__ == "__main__":
    main()
