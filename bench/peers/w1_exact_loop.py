"""Peer of the exact all-pairs W1 benchmark: a Python double loop over scipy.stats.wasserstein_distance.

usage: w1_exact_loop.py R S
R ranks with S lognormal samples each (numpy default_rng(1); rank r has median 20e3 * (1 + r/R/10),
sigma 0.1). The full job is the loop `for i < j: scipy.stats.wasserstein_distance(a[i], a[j])`
over all R(R-1)/2 pairs; timed (best of 3) on the first min(#pairs, 2000) pairs of a fixed random
permutation of them, divided by the number of pairs timed.
Prints the seconds per item (one pair) as the last line of stdout.
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
MAX_PAIRS = 2000


def main():
    r, s = int(sys.argv[1]), int(sys.argv[2])
    rng = np.random.default_rng(1)
    medians = 20e3 * (1 + np.arange(r) / r / 10)
    a = [rng.lognormal(np.log(m), 0.1, size=s) for m in medians]
    iu, ju = np.triu_indices(r, 1)
    order = rng.permutation(iu.size)[:MAX_PAIRS]
    pairs = list(zip(iu[order].tolist(), ju[order].tolist()))
    if not pairs:
        raise SystemExit("w1_exact_loop: need R >= 2")
    w1 = scipy.stats.wasserstein_distance
    best = math.inf
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        total = 0.0
        for i, j in pairs:
            total += w1(a[i], a[j])
        best = min(best, time.perf_counter() - t0)
    print(f"w1_exact_loop: R={r} S={s}, {iu.size} pairs, timed {len(pairs)}; mean W1 {total / len(pairs):.4g}; "
          f"best of {REPEATS}: {best:.4g} s", file=sys.stderr)
    print(best / len(pairs))


if __name__ == "__main__":
    main()
