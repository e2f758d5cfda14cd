"""Peer of bench_detect's Mahalanobis detector: N workers x D features, standardised, covariance
by np.cov (sample) or the Ledoit-Wolf formula in numpy, squared distances by a Cholesky solve,
threshold sqrt(chi2_0.99(d)) (1 + 1/sqrt(N)) and p-values by scipy.stats.chi2.

usage: mahalanobis_workers.py N D sample|ledoit_wolf
Prints the seconds per worker (best of 5) as the last line.
"""
import math
import os
import sys
import time

import _debian_python

_debian_python.require("numpy", "scipy")
import numpy as np
from scipy import linalg, stats


def detect(x, method):
    n, d = x.shape
    z = (x - x.mean(axis=0)) / x.std(axis=0, ddof=1)
    if method == "sample":
        cov = np.cov(z, rowvar=False)
    else:
        s = z.T @ z / n
        mu = np.trace(s) / d
        x2 = z * z
        beta_bar = (np.sum(x2.sum(axis=1) ** 2) / n - np.sum(s * s)) / n / d
        delta = (np.sum(s * s) - 2 * mu * np.trace(s) + d * mu * mu) / d
        shrink = min(max(beta_bar, 0.0), delta) / delta
        cov = (1 - shrink) * s + shrink * mu * np.eye(d)
    c = linalg.cho_factor(cov)
    w = linalg.solve_triangular(c[0], z.T, lower=c[1], trans="T" if not c[1] else "N")
    d2 = np.sum(w * w, axis=0)
    thr = math.sqrt(stats.chi2.ppf(0.99, d)) * (1 + 1 / math.sqrt(n))
    p = stats.chi2.sf(d2, d)
    return np.nonzero(np.sqrt(d2) > thr)[0], p


def main():
    n, d, method = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    rng = np.random.default_rng(4)
    x = rng.normal(size=(n, d)) @ (rng.normal(size=(d, d)) + 2 * np.eye(d))
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        detect(x, method)
        best = min(best, time.perf_counter() - t0)
    print(best / n)


if __name__ == "__main__":
    main()