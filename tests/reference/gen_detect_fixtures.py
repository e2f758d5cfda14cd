#!/usr/bin/env python3
"""Reference values for the detectors (failslow/detect/), from numpy/scipy implementations
written independently of the C++ code.

usage: python3 tests/reference/gen_detect_fixtures.py      (writes tests/reference/detect/*.json)

  chi2.json          scipy.stats.chi2 quantiles and survival values; Mahalanobis thresholds;
                     exact in-sample false-alarm rates (scipy.stats.beta)
  mahalanobis.json   data sets with squared distances: sample covariance through
                     scipy.spatial.distance.mahalanobis with inv(np.cov); Ledoit-Wolf written out
                     from the 2004 paper's definitions (sum over observations, not the C++ algebra)
  ewma_arl.json      EWMA average run lengths by the Brook & Evans Markov chain (Lucas & Saccucci
                     1990) at 401 states and converged (Richardson from 801/1601 states); CUSUM
                     one-sided ARLs by the same method
  changepoint.json   small series with the optimal penalised segmentation by brute force over
                     every segmentation (2^(n-1) of them)
  fdr.json           Benjamini-Hochberg / -Yekutieli adjusted p-values (statsmodels' algorithm:
                     sort, scale, reversed cumulative minimum)
  ratio_gate.json    ratios (np.median of the previous w values) and windows from a direct
                     transcription of the gate's rules
"""
import itertools
import json
import math
import os

import numpy as np
from scipy import stats
from scipy.spatial import distance

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "detect")


def dump(name, obj):
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, name), "w") as f:
        json.dump(obj, f, indent=1, sort_keys=True)
        f.write("\n")


# ---------------------------------------------------------------- chi-square and thresholds
def gen_chi2():
    dofs = [1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 50, 100, 250]
    qs = [0.5, 0.9, 0.95, 0.975, 0.99, 0.999, 0.9999]
    quantiles = [{"dof": d, "q": q, "x": float(stats.chi2.ppf(q, d))} for d in dofs for q in qs]
    sf = []
    for d in dofs:
        for x in [0.01, 0.5, 1.0, d * 0.5, float(d), d * 2.0, d * 4.0 + 10.0]:
            sf.append({"dof": d, "x": x, "sf": float(stats.chi2.sf(x, d))})
    thresholds = []
    for d in [1, 3, 12, 40]:
        for n in [5, 50, 256, 10000]:
            base = math.sqrt(stats.chi2.ppf(0.99, d))
            thresholds.append({"dof": d, "n": n, "q": 0.99, "adaptive": base * (1 + 1 / math.sqrt(n)), "chi2": base})
    rates = []
    for n, d in [(20, 3), (50, 4), (200, 12), (1000, 12), (10000, 12)]:
        lam = math.sqrt(stats.chi2.ppf(0.99, d)) * (1 + 1 / math.sqrt(n))
        b = lam * lam * n / (n - 1) ** 2
        rates.append({"n": n, "d": d, "threshold": lam,
                      "rate": float(stats.beta.sf(b, d / 2, (n - d - 1) / 2)) if b < 1 else 0.0})
    dump("chi2.json", {"quantiles": quantiles, "sf": sf, "thresholds": thresholds, "false_alarm_rates": rates})


# ---------------------------------------------------------------- Mahalanobis
def ledoit_wolf_reference(z):
    """Ledoit & Wolf (2004), Lemma 3.2-3.4 notation, written with an explicit sum."""
    n, p = z.shape
    x = z - z.mean(axis=0)
    s = x.T @ x / n
    m = np.trace(s) / p
    ident = np.eye(p)
    d2 = np.sum((s - m * ident) ** 2) / p
    b_bar2 = 0.0
    for k in range(n):
        xk = x[k][:, None]
        b_bar2 += np.sum((xk @ xk.T - s) ** 2) / p
    b_bar2 /= n * n
    b2 = min(b_bar2, d2)
    shrink = b2 / d2 if d2 > 0 else 0.0
    return shrink * m * ident + (1 - shrink) * s, shrink


def mahalanobis_case(name, x, with_sample=True):
    n, d = x.shape
    sd = x.std(axis=0, ddof=1)
    big = np.abs(x).max(axis=0)
    keep = [j for j in range(d) if sd[j] > 1e-12 * big[j]]
    y = x[:, keep]
    case = {"name": name, "x": x.tolist(), "features": keep}
    if with_sample:
        cov = np.cov(y, rowvar=False, ddof=1)
        vi = np.linalg.inv(np.atleast_2d(cov))
        mean = y.mean(axis=0)
        case["sample_d2"] = [float(distance.mahalanobis(row, mean, vi) ** 2) for row in y]
    z = (y - y.mean(axis=0)) / y.std(axis=0, ddof=1)
    lw, shrink = ledoit_wolf_reference(z)
    vi = np.linalg.inv(lw)
    case["lw_d2"] = [float(distance.mahalanobis(row, np.zeros(len(keep)), vi) ** 2) for row in z]
    case["lw_shrinkage"] = float(shrink)
    dof = len(keep)
    case["threshold_adaptive"] = math.sqrt(stats.chi2.ppf(0.99, dof)) * (1 + 1 / math.sqrt(n))
    case["lw_p_values"] = [float(stats.chi2.sf(v, dof)) for v in case["lw_d2"]]
    return case


def gen_mahalanobis():
    rng = np.random.default_rng(20240605)
    cases = []
    a = rng.normal(size=(5, 5))
    x = rng.normal(size=(40, 5)) @ a + np.array([10.0, -3.0, 0.5, 100.0, 7.0])
    x[3] += 6 * a[0]
    x[17] -= 5 * a[2]
    cases.append(mahalanobis_case("correlated_40x5", x))
    x = rng.normal(size=(6, 12)) * np.linspace(0.5, 3.0, 12)
    cases.append(mahalanobis_case("wide_6x12", x, with_sample=False))
    x = rng.normal(size=(30, 4))
    x[:, 2] = 42.0
    cases.append(mahalanobis_case("constant_feature_30x4", x))
    x = rng.normal(size=(25, 3)) * np.array([1e-6, 1.0, 1e6]) + np.array([1e-3, 5.0, 1e9])
    x[0, 0] += 8e-6
    cases.append(mahalanobis_case("scales_25x3", x))
    x = rng.normal(size=(200, 12)) @ rng.normal(size=(12, 12))
    cases.append(mahalanobis_case("population_200x12", x))
    dump("mahalanobis.json", {"cases": cases})


# ---------------------------------------------------------------- EWMA / CUSUM ARL
def ewma_arl(lam, L, shift, m):
    h = L * math.sqrt(lam / (2 - lam))
    w = 2 * h / m
    c = -h + (np.arange(m) + 0.5) * w
    lo = -h + np.arange(m) * w
    hi = lo + w
    frm = (1 - lam) * c
    p = stats.norm.cdf((hi[None, :] - frm[:, None]) / lam - shift) - stats.norm.cdf(
        (lo[None, :] - frm[:, None]) / lam - shift)
    arl = np.linalg.solve(np.eye(m) - p, np.ones(m))
    return float(arl[(m - 1) // 2])


def cusum_arl_one_sided(k, h, shift, m):
    """Brook & Evans: state 0 is S = 0 (an atom), states i >= 1 the cells of width w around i w."""
    w = h / (m - 0.5)
    idx = np.arange(m)
    centre = idx * w
    # from state i: S' = max(0, c_i + u - k), u ~ N(shift, 1)
    p = np.zeros((m, m))
    for i in range(m):
        p[i, 0] = stats.norm.cdf(0.5 * w - centre[i] + k - shift)
        j = idx[1:]
        p[i, 1:] = stats.norm.cdf((j + 0.5) * w - centre[i] + k - shift) - stats.norm.cdf(
            (j - 0.5) * w - centre[i] + k - shift)
    arl = np.linalg.solve(np.eye(m) - p, np.ones(m))
    return float(arl[0])


def gen_arl():
    ewma = []
    for lam, L in [(0.2, 2.962), (0.1, 2.814), (0.05, 2.615), (1.0, 3.0), (0.2, 3.0), (0.2, 2.862), (0.2, 3.062)]:
        for shift in [0.0, 0.5, 1.0, 2.0]:
            a401 = ewma_arl(lam, L, shift, 401)
            a801 = ewma_arl(lam, L, shift, 801)
            a1601 = ewma_arl(lam, L, shift, 1601)
            # error ~ c / m^2: Richardson on the two finest grids
            conv = a1601 + (a1601 - a801) / 3.0
            ewma.append({"lambda": lam, "L": L, "shift": shift, "arl_401": a401, "arl": conv})
    cusum = []
    for k, h in [(0.5, 4.0), (0.5, 5.0), (0.25, 8.0)]:
        for shift in [0.0, 1.0]:
            a1 = cusum_arl_one_sided(k, h, shift, 800)
            a2 = cusum_arl_one_sided(k, h, shift, 1600)
            cusum.append({"k": k, "h": h, "shift": shift, "arl_upper": a2 + (a2 - a1) / 3.0})
    # Lucas & Saccucci (1990) table values quoted by the issue, for the record
    table = [{"lambda": 0.2, "L": 2.962, "arl0": 500}, {"lambda": 0.1, "L": 2.814, "arl0": 500},
             {"lambda": 0.05, "L": 2.615, "arl0": 500}, {"lambda": 1.0, "L": 3.0, "arl0": 370.4}]
    dump("ewma_arl.json", {"ewma": ewma, "cusum": cusum, "lucas_saccucci": table})


# ---------------------------------------------------------------- change points (brute force)
def seg_cost(y, model, floor):
    m = len(y)
    rss = float(np.sum((y - y.mean()) ** 2))
    if model == "mean":
        return rss
    v = max(rss / m, floor)
    return m * math.log(v) + rss / v


def brute_force(y, model, beta, minseg, mbic, floor):
    n = len(y)
    best = (math.inf, None)
    for k in range(0, n):
        for cps in itertools.combinations(range(1, n), k):
            bounds = [0, *cps, n]
            if any(b - a < minseg for a, b in zip(bounds, bounds[1:])):
                continue
            total = beta * k
            for a, b in zip(bounds, bounds[1:]):
                total += seg_cost(y[a:b], model, floor) + (math.log(b - a) if mbic else 0.0)
            if total < best[0] - 1e-12:
                best = (total, list(cps))
    no_change = seg_cost(y, model, floor) + (math.log(n) if mbic else 0.0)
    return best[1], no_change - best[0]


def gen_changepoint():
    rng = np.random.default_rng(7)
    cases = []
    for i in range(24):
        n = int(rng.integers(6, 15))
        y = rng.normal(size=n)
        # plant one or two shifts of varying size
        for _ in range(int(rng.integers(0, 3))):
            at = int(rng.integers(1, n))
            y[at:] += rng.normal(scale=3.0)
        if i % 3 == 2:
            y[n // 2:] *= 4.0
        model = "mean" if i % 2 == 0 else "meanvar"
        minseg = int(rng.integers(1, 4)) if model == "mean" else int(rng.integers(2, 4))
        pen_kind = ["fixed", "bic", "mbic"][i % 3]
        p = 1 if model == "mean" else 2
        beta = {"fixed": float(rng.uniform(0.5, 6.0)), "bic": (p + 1) * math.log(n), "mbic": (p + 1) * math.log(n)}[pen_kind]
        # sigma is given (1.0) for the mean model; meanvar uses an explicit variance floor (in the
        # series' units; the C++ cost rescales it with the series, which leaves the optimum and the
        # gain over "no change" unchanged)
        floor = 1e-6
        cps, gain = brute_force(y, model, beta, minseg, pen_kind == "mbic", floor)
        cases.append({"y": y.tolist(), "model": model, "min_segment": minseg, "penalty": pen_kind, "beta": beta,
                      "sigma": 1.0, "variance_floor": floor, "changes": cps, "gain": gain})
    dump("changepoint.json", {"cases": cases})


# ---------------------------------------------------------------- FDR
def bh_reference(p, method):
    p = np.asarray(p, dtype=float)
    m = len(p)
    order = np.argsort(p, kind="mergesort")
    ranked = p[order] * m / np.arange(1, m + 1)
    if method == "by":
        ranked *= np.sum(1.0 / np.arange(1, m + 1))
    adj_sorted = np.minimum.accumulate(ranked[::-1])[::-1]
    adj = np.empty(m)
    adj[order] = np.minimum(adj_sorted, 1.0)
    return adj


def gen_fdr():
    rng = np.random.default_rng(11)
    cases = []
    for m, signal in [(1, 0), (5, 2), (20, 5), (200, 20), (2000, 50)]:
        p = rng.uniform(size=m)
        p[:signal] = rng.uniform(0, 1e-3, size=signal)
        if m >= 20:
            p[5] = p[6]  # a tie
            p[7] = 1.0
            p[8] = 0.0
        for method in ["bh", "by"]:
            adj = bh_reference(p, method)
            cases.append({"p": p.tolist(), "method": method, "adjusted": adj.tolist(), "q": 0.05,
                          "rejected": [int(i) for i in np.nonzero(adj <= 0.05)[0]]})
    dump("fdr.json", {"cases": cases})


# ---------------------------------------------------------------- ratio gate
def ratio_gate_reference(x, w, open_t, close_t, close_after):
    ratios = [None] * len(x)
    hist = []
    windows = []
    cur = None
    below = 0
    for s, v in enumerate(x):
        if len(hist) < w:
            hist.append(v)
            continue
        r = v / float(np.median(hist[-w:]))
        ratios[s] = r
        if cur is None:
            if r > open_t:
                cur = {"first": s, "last": s, "peak_index": s, "peak_ratio": r}
                below = 0
        elif r >= close_t:
            below = 0
            cur["last"] = s
            if r > cur["peak_ratio"]:
                cur["peak_ratio"], cur["peak_index"] = r, s
        else:
            below += 1
            if below >= close_after:
                windows.append(cur)
                cur = None
        hist.append(v)
    if cur is not None:
        windows.append(cur)
    return ratios, windows


def gen_ratio_gate():
    rng = np.random.default_rng(3)
    cases = []
    for i, (n, w, close_after) in enumerate([(60, 5, 1), (200, 10, 2), (400, 16, 3), (120, 7, 1)]):
        x = 100.0 * np.exp(rng.normal(scale=0.03, size=n))
        for _ in range(3):
            a = int(rng.integers(w + 1, n - 4))
            x[a:a + int(rng.integers(1, 6))] *= rng.uniform(1.3, 2.0)
        ratios, windows = ratio_gate_reference(list(x), w, 1.2, 1.1, close_after)
        cases.append({"x": x.tolist(), "window": w, "open": 1.2, "close": 1.1, "close_after": close_after,
                      "ratios": ratios, "windows": windows})
    dump("ratio_gate.json", {"cases": cases})


if __name__ == "__main__":
    gen_chi2()
    gen_mahalanobis()
    gen_arl()
    gen_changepoint()
    gen_fdr()
    gen_ratio_gate()
