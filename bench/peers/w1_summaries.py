"""Peer of the W1 matrix between reconstructed summaries: numpy/scipy as a user would write it.

usage: w1_summaries.py N K
N truncated lognormal mixtures (1-4 clusters each, the parameters below, the same formula as
bench_w1.cpp's summaries()), each rebuilt as a quantile vector at u_k = (k + 1/2) / K by
evaluating its CDF on a 4096-point log grid (scipy.special.ndtr, vectorised over clusters) and
inverting it with np.interp; then W1 = scipy.spatial.distance.cdist(Q, Q, 'cityblock') / K.
Timed (best of 3): the vectors and the matrix. Prints the seconds per item (one N x N matrix)
as the last line of stdout.
"""
import math
import sys
import time

import _debian_python

_debian_python.require("numpy", "scipy.special", "scipy.spatial.distance")
import numpy as np
import scipy.special
import scipy.spatial.distance

REPEATS = 3
GRID = 4096


def clusters(i):
    """(weight, mu, sigma, lo, hi) of summary i: the formula of bench_w1.cpp."""
    out = []
    for c in range(1 + i % 4):
        median = 10e3 * (1 + 0.01 * (i % 7)) * 3.0 ** c
        sigma = 0.03 + 0.02 * ((i + c) % 5)
        out.append((c + 1.0, math.log(median), sigma, median * math.exp(-3 * sigma), median * math.exp(3.2 * sigma)))
    return out


def quantile_vector(cl, u):
    w = np.array([c[0] for c in cl])
    w = w / w.sum()
    mu = np.array([c[1] for c in cl])[:, None]
    sd = np.array([c[2] for c in cl])[:, None]
    lo = np.array([c[3] for c in cl])[:, None]
    hi = np.array([c[4] for c in cl])[:, None]
    x = np.exp(np.linspace(math.log(lo.min()), math.log(hi.max()), GRID))
    a, b = scipy.special.ndtr((np.log(lo) - mu) / sd), scipy.special.ndtr((np.log(hi) - mu) / sd)
    f = np.clip((scipy.special.ndtr((np.log(x)[None, :] - mu) / sd) - a) / (b - a), 0, 1)
    cdf = (w[:, None] * f).sum(axis=0)
    return np.interp(u, cdf, x)


def main():
    n, k = int(sys.argv[1]), int(sys.argv[2])
    u = (np.arange(k) + 0.5) / k
    params = [clusters(i) for i in range(n)]
    best = math.inf
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        q = np.vstack([quantile_vector(cl, u) for cl in params])
        w = scipy.spatial.distance.cdist(q, q, "cityblock") / k
        best = min(best, time.perf_counter() - t0)
    print(f"w1_summaries: N={n} K={k}, mean W1 {w.mean():.6g}; best of {REPEATS}: {best:.4g} s", file=sys.stderr)
    print(best)


if __name__ == "__main__":
    main()
