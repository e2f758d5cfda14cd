"""Peer of the all-pairs W1 benchmark on quantile functions: scipy's cdist on a quantile matrix.

usage: w1_cdist.py N K [pdist]
Q is an N x K float64 matrix whose rows are sorted (each row: K lognormal values, sorted -- a
rank's quantile function sampled at K equally spaced levels; numpy default_rng(1)). Then
W1(i, j) ~= mean_k |Q[i,k] - Q[j,k]|, so the whole matrix is
scipy.spatial.distance.cdist(Q, Q, 'cityblock') / K. Timed (best of 3): that expression, or
with `pdist` the condensed upper triangle scipy.spatial.distance.pdist(Q, 'cityblock') / K.
Prints the seconds per item (one whole N x N matrix) as the last line of stdout.
"""
import os
import sys

import _debian_python

_debian_python.require("numpy", "scipy.spatial.distance")
import numpy as np
import scipy.spatial.distance
import math
import time

REPEATS = 3


def main():
    n, k = int(sys.argv[1]), int(sys.argv[2])
    condensed = len(sys.argv) > 3 and sys.argv[3] == "pdist"
    rng = np.random.default_rng(1)
    q = np.sort(rng.lognormal(np.log(20e3), 0.1, size=(n, k)), axis=1)
    best = math.inf
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        if condensed:
            w = scipy.spatial.distance.pdist(q, "cityblock") / k
        else:
            w = scipy.spatial.distance.cdist(q, q, "cityblock") / k
        best = min(best, time.perf_counter() - t0)
    print(f"w1_cdist: N={n} K={k} {'pdist' if condensed else 'cdist'}, mean W1 {w.mean():.4g}; best of {REPEATS}: {best:.4g} s", file=sys.stderr)
    print(best)


if __name__ == "__main__":
    main()
