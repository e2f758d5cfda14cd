"""failslow from Python against scipy on the same arrays (bench/README.md, "Python bindings").

usage: PYTHONPATH=build/release/python /usr/bin/python3 bench/python/bench_bindings.py [--quick]

Each line times failslow's binding and the scipy/numpy call a Python user would otherwise make,
on the same numpy arrays in the same process, best of REPEATS, and prints a markdown table row
with the ratio (peer time / failslow time). Data as the C++ benchmarks' peers (bench/peers):
  W1 matrix of quantile vectors   Q: N x 256 sorted lognormal rows (default_rng(1)), failslow.w1_matrix(Q)
                                  vs scipy.spatial.distance.cdist(Q, Q, 'cityblock') / K
  exact W1 matrix of samples      R ranks x n lognormal samples: failslow.w1_matrix(list) vs a loop of
                                  scipy.stats.wasserstein_distance over the pairs
  exact W1 of two sample sets     failslow.w1 vs scipy.stats.wasserstein_distance
  valley clustering               10^5 durations, ln d ~ 60% N(ln 20e3, 0.05), 30% N(ln 60e3, 0.08),
                                  10% N(ln 300e3, 0.1): failslow.cluster (KDE on 1024 points, valleys,
                                  cluster summaries) vs scipy.stats.gaussian_kde on the log-durations
                                  evaluated on a 1024-point grid (the density alone, no valleys)
HTA (Holistic Trace Analysis) is not installable on this machine (no Debian package; pip is not used
here), so failslow.diagnose is not compared with its trace loading.
"""
import math
import sys
import time

import numpy as np
import scipy.spatial.distance
import scipy.stats

import failslow

REPEATS = 3


def best(f, repeats=REPEATS):
    t = math.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        f()
        t = min(t, time.perf_counter() - t0)
    return t


def fmt(s):
    return f"{s * 1e3:.3g} ms" if s < 1 else f"{s:.3g} s"


def row(what, ours, peer_name, peer):
    print(f"| {what} | {fmt(ours)} | {peer_name}: {fmt(peer)} | {peer / ours:,.1f}x |", flush=True)


def main():
    quick = "--quick" in sys.argv
    print("| from Python | failslow | peer (same arrays) | ratio |")
    print("|---|---|---|---|")
    rng = np.random.default_rng(1)
    for n in ((200,) if quick else (1000, 4000)):
        q = np.sort(rng.lognormal(np.log(20e3), 0.1, size=(n, 256)), axis=1)
        peer = best(lambda: scipy.spatial.distance.cdist(q, q, "cityblock") / 256)
        for threads in (1, 2):
            ours = best(lambda: failslow.w1_matrix(q, threads=threads))
            row(f"`w1_matrix`, {n} quantile vectors x 256, {threads} thread(s)", ours, "`cdist(Q, Q, 'cityblock') / K`",
                peer)
    ranks, n = (8, 1000) if quick else (32, 10_000)
    sets = [rng.lognormal(np.log(20e3) + 0.01 * r, 0.1, n) for r in range(ranks)]

    def loop():
        return [[scipy.stats.wasserstein_distance(a, b) for b in sets[i + 1:]] for i, a in enumerate(sets)]

    peer = best(loop, 1)
    ours = best(lambda: failslow.w1_matrix(sets, threads=1))
    row(f"`w1_matrix`, exact, {ranks} ranks x {n:,} samples, 1 thread", ours,
        "loop of `wasserstein_distance` over the pairs", peer)
    u, v = sets[0], sets[1]
    row(f"`w1`, two sets of {n:,} samples", best(lambda: failslow.w1(u, v)), "`wasserstein_distance`",
        best(lambda: scipy.stats.wasserstein_distance(u, v)))
    m = 10_000 if quick else 100_000
    comp = rng.choice(3, size=m, p=[0.6, 0.3, 0.1])
    logd = rng.normal(np.log(np.array([20e3, 60e3, 300e3]))[comp], np.array([0.05, 0.08, 0.1])[comp])
    d = np.exp(logd)

    def scipy_density():
        kde = scipy.stats.gaussian_kde(logd)
        h = math.sqrt(kde.covariance[0, 0])
        return kde(np.linspace(logd.min() - 3 * h, logd.max() + 3 * h, 1024))

    c = failslow.cluster(d)
    assert len(c["boundaries"]) == 2, c["boundaries"]
    row(f"`cluster`, {m:,} durations, 1024-point grid ({len(c['clusters'])} clusters found)",
        best(lambda: failslow.cluster(d)), "`gaussian_kde` on the log-durations, 1024 points (density only)",
        best(scipy_density, 1 if not quick else REPEATS))


if __name__ == "__main__":
    main()
