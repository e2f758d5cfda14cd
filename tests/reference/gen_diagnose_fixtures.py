#!/usr/bin/env python3
"""Reference values for the diagnosis (failslow/diagnose/), from numpy/scipy, written from the
documented formulas of the C++ headers and not from their code.

usage: python3 tests/reference/gen_diagnose_fixtures.py     (writes tests/reference/diagnose/*.json)

  binomial.json   P(X >= k), X ~ Binomial(n, p): scipy.stats.binom.sf(k - 1, n, p), over a grid of
                  k, n, p including far tails (the L2 test per rank and phase)
  hypergeom.json  P(X >= k), X ~ Hypergeometric(N, K, n): scipy.stats.hypergeom.sf(k - 1, N, K, n)
                  (L2: a rank's elevated steps concentrated in its claim, or sporadic)
  rank_sum.json   one-sided rank-sum p-values: scipy.stats.mannwhitneyu(after, before,
                  alternative="greater", method="asymptotic", use_continuity=True), over sample
                  sizes 1-60, ties (rounded values), shifts and all-tied samples (L2: whether a
                  rank's excess rose and stayed up)
  student_t.json  scipy.stats.t.sf(t, nu) and t.isf(p, nu) (refined by Newton steps on t.sf) for
                  integer nu from 1 to 5000 (the
                  L1 threshold when the noise scale is estimated from few differences)
  l2_groups.json  one comparison group (ranks x steps of one phase) per case, with the L2
                  statistics of diagnose/l2_stragglers.hpp: the pooled robust scale, z-scores,
                  elevated steps, the persistent run (bridged by still-slow steps), the binomial p-value against the other
                  ranks' rate (the Jeffreys estimate (K + 1/2) / (N + 1)), the same count one bar
                  lower (z > BRIDGE_Z: moderate steps, deflated by the AR(1) design effect of the
                  group's lag-1 autocorrelation), twice the better of the two, and the Benjamini-Hochberg q-values
                  (as scipy.stats.false_discovery_control), and which ranks are stragglers
  window_scan.json  what the best window of a scan is worth: iid normal series of n steps, the
                  largest two-sample Student t (pooled variance) of every window of at least 3
                  steps against the rest (at least 3), over windows that end at the series' end
                  and over all windows; per n and level c, P(max t > c) / P(t(n - 2) > c), the
                  number of independent tests the scan is worth (seeded simulation)
"""
import json
import os

import numpy as np
from scipy import stats

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "diagnose")


def dump(name, obj):
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, name), "w") as f:
        json.dump(obj, f, indent=1, sort_keys=True)
        f.write("\n")


def binomial_cases():
    cases = []
    for n in [1, 3, 5, 10, 30, 100, 1000, 5000]:
        for p in [1e-6, 2.326e-4, 0.001, 0.01, 0.1, 0.3, 0.5, 0.9]:
            for k in sorted({0, 1, 2, n // 10, n // 3, n // 2, n - 1, n}):
                if 0 <= k <= n:
                    cases.append({"k": k, "n": n, "p": p, "sf": float(stats.binom.sf(k - 1, n, p))})
    return cases


def hypergeom_cases():
    cases = []
    for N in (4, 10, 40, 97, 400, 3000):
        for K in sorted({1, 2, 3, 5, N // 7, N // 3, N // 2, N - 1}):
            if K < 1 or K > N:
                continue
            for n in sorted({1, 3, 4, 7, N // 10, N // 2, N - 2, N}):
                if n < 1 or n > N:
                    continue
                for k in sorted({0, 1, 2, 3, 4, n // 2, min(K, n), min(K, n) + 1}):
                    cases.append({"k": k, "K": K, "n": n, "N": N,
                                  "sf": float(stats.hypergeom.sf(k - 1, N, K, n))})
    return cases


def rank_sum_cases():
    rng = np.random.default_rng(20261206)
    cases = []
    for nb in (1, 2, 3, 5, 8, 16, 40):
        for na in (1, 2, 4, 9, 24, 60):
            for shift in (0.0, 0.5, 2.0):
                for decimals in (None, 0):  # continuous, or rounded: ties
                    before = rng.standard_normal(nb)
                    after = rng.standard_normal(na) + shift
                    if decimals is not None:
                        before, after = np.round(before, decimals), np.round(after, decimals)
                    p = stats.mannwhitneyu(after, before, alternative="greater", method="asymptotic",
                                           use_continuity=True).pvalue
                    if not np.isfinite(p):  # every value tied: no evidence
                        p = 1.0
                    cases.append({"before": before.tolist(), "after": after.tolist(), "p": float(p)})
    cases.append({"before": [1.0, 1.0, 1.0], "after": [1.0, 1.0], "p": 1.0})
    return cases


def student_t_cases():
    sf, isf = [], []
    for nu in [1, 2, 3, 4, 5, 6, 7, 9, 10, 19, 30, 59, 60, 199, 999, 1000, 1001, 5000]:
        for t in [0.0, 0.5, 1.0, 2.0, 4.0, 7.5, 20.0, 100.0]:
            sf.append({"nu": nu, "t": t, "sf": float(stats.t.sf(t, nu))})
        for p in [0.4, 0.05, 1e-3, float(stats.norm.sf(3.5)), float(stats.norm.sf(4.0)), 1e-8]:
            # scipy's t.isf (cephes stdtri) is good to ~1e-9; three Newton steps on t.sf, which is
            # good to ~1e-13, make the reference as precise as the tail itself.
            q = float(stats.t.isf(p, nu))
            for _ in range(3):
                q += (float(stats.t.sf(q, nu)) - p) / float(stats.t.pdf(q, nu))
            isf.append({"nu": nu, "p": p, "isf": q})
    return {"sf": sf, "isf": isf}


Z_THRESHOLD = 3.5
MIN_EFFECT = 0.03
MIN_STEPS = 3
MIN_FRACTION = 0.6
MAX_GAP = 1
BRIDGE_Z = 2.0
FDR_Q = 0.01
RESOLUTION = 1e-3
MAD_TO_SIGMA = 1.482602218505602


def bh_adjusted(p):
    """Benjamini-Hochberg adjusted p-values, as scipy.stats.false_discovery_control (scipy >= 1.11)
    computes them: sort, scale by m / rank, reversed cumulative minimum, clip at 1."""
    m = len(p)
    order = np.argsort(p, kind="mergesort")
    ranked = p[order] * m / np.arange(1, m + 1)
    adj = np.empty(m)
    adj[order] = np.minimum(np.minimum.accumulate(ranked[::-1])[::-1], 1.0)
    return adj


def best_run(elevated, still_slow):
    """The run of elevated steps with the most elevated steps: gaps of at most MAX_GAP normal
    steps, a step still slow (z > BRIDGE_Z and rel > MIN_EFFECT) no gap. Returns (elevated
    count, elevated and still-slow count, first, last)."""
    best = (0, 0, 0, 0)
    s, S = 0, len(elevated)
    while s < S:
        if not elevated[s]:
            s += 1
            continue
        e, count, slow, gap, slow_in_gap = s, 1, 1, 0, 0
        for t in range(s + 1, S):
            if elevated[t]:
                e, count, slow, gap, slow_in_gap = t, count + 1, slow + 1 + slow_in_gap, 0, 0
            elif still_slow[t]:
                slow_in_gap += 1
            else:
                gap += 1
                if gap > MAX_GAP:
                    break
        if count > best[0]:
            best = (count, slow, s, e)
        s = e + 1
    return best


def group_lag1(x):
    """Median over members of the lag-1 autocorrelation of ln(x_r / median of the others), about
    the series' best single change of level (the split with the least squared error, 3 steps a
    side at least), with Kendall's bias correction (n r + 1) / (n - 3); clamped to [0, 0.9]."""
    G, S = x.shape
    lag1s = []
    for r in range(G):
        others = np.delete(x, r, axis=0)
        y = np.log(x[r] / np.median(others, axis=0))
        parts = [(0, S)]
        if S >= 6:
            cost = [((y[:t] - y[:t].mean()) ** 2).sum() + ((y[t:] - y[t:].mean()) ** 2).sum() for t in range(3, S - 2)]
            t = 3 + int(np.argmin(cost))
            parts = [(0, t), (t, S)]
        num = den = 0.0
        for a, b in parts:
            e = y[a:b] - y[a:b].mean()
            den += (e * e).sum()
            num += (e[1:] * e[:-1]).sum()
        if den > 0 and S > 3:
            lag1s.append((S * num / den + 1) / (S - 3))
    return float(np.clip(np.median(lag1s), 0.0, 0.9)) if lag1s else 0.0


def l2_group(x):
    """x: ranks x steps of one phase (all finite)."""
    G, S = x.shape
    med = np.median(x, axis=0)
    e = x - med
    scale = max(MAD_TO_SIGMA * np.median(np.abs(e)), RESOLUTION * np.median(med))
    z = e / scale
    rel = e / med
    elevated = (z > Z_THRESHOLD) & (rel > MIN_EFFECT)
    still_slow = (z > BRIDGE_Z) & (rel > MIN_EFFECT)
    k, km = elevated.sum(axis=1), still_slow.sum(axis=1)
    K, KM, N = k.sum(), km.sum(), G * S
    floor, moderate_floor = stats.norm.sf(Z_THRESHOLD), stats.norm.sf(BRIDGE_Z)
    keep = None
    p = np.ones(G)
    runs = []
    for i in range(G):
        count, slow, first, last = best_run(list(elevated[i]), list(still_slow[i]))
        run = (count, first, last, False)
        if count >= MIN_STEPS and slow >= MIN_FRACTION * (last - first + 1):
            rate = (K - k[i] + 0.5) / (N - S + 1)  # the peers' rate, Jeffreys estimate
            p[i] = stats.binom.sf(k[i] - 1, S, max(rate, floor))
        # Moderate steps: runs of them bridged by steps above the median (z > 0), 2 MIN_STEPS at
        # least, the run's median rel above 2 MIN_EFFECT; the counts deflated by (1 - rho) / (1 + rho), k down and n up.
        mcount, mslow, mfirst, mlast = best_run(list(still_slow[i]), list(z[i] > 0))
        if (mcount >= 2 * MIN_STEPS and mslow >= MIN_FRACTION * (mlast - mfirst + 1) and
                np.median(rel[i, mfirst:mlast + 1]) > 2 * MIN_EFFECT):
            if keep is None:
                rho = group_lag1(x)
                keep = (1 - rho) / (1 + rho)
            rate = max((KM - km[i] + 0.5) / (N - S + 1), moderate_floor)
            p2 = stats.binom.sf(int(np.floor(km[i] * keep)) - 1, max(1, int(np.ceil(S * keep))), rate)
            if p2 < p[i]:
                run = (mcount, mfirst, mlast, True)
                p[i] = p2
        p[i] = min(1.0, 2 * p[i])
        runs.append(run)
    q = bh_adjusted(p)
    ranks = []
    for i in range(G):
        if q[i] <= FDR_Q:
            count, first, last, moderate = runs[i]
            # A steady offset: at least half as far above the peers in the first max(MIN_STEPS,
            # S // 4) steps before the claim (MIN_STEPS or more) as inside it, needs MIN_FRACTION
            # of all steps elevated; a moderate claim needs those steps before it and no offset.
            inside = rel[i, first:last + 1]
            head = rel[i, :min(first, max(MIN_STEPS, S // 4))]
            if len(head) >= MIN_STEPS:
                if (np.median(inside) > 0 and np.median(head) >= 0.5 * np.median(inside) and
                        (moderate or k[i] < MIN_FRACTION * S)):
                    continue
            elif moderate:
                continue
            zs = z[i, first:last + 1]
            ratio = np.median(x[i, first:last + 1]) / np.median(med[first:last + 1])
            ranks.append({"rank": i, "first": first, "last": last, "elevated": int(count), "p": float(p[i]),
                          "q": float(q[i]), "z": float(np.median(zs)), "ratio": float(ratio)})
    return {"values": x.tolist(), "scale": float(scale), "p": p.tolist(), "q": q.tolist(), "stragglers": ranks}


def window_scan_cases():
    rng = np.random.default_rng(20261203)
    cases = []
    for n in (16, 24, 40, 60):
        reps = 40000 if n <= 40 else 16000
        x = rng.standard_normal((reps, n))
        cs = np.concatenate([np.zeros((reps, 1)), np.cumsum(x, 1)], 1)
        cs2 = np.concatenate([np.zeros((reps, 1)), np.cumsum(x * x, 1)], 1)
        best_end = np.full(reps, -np.inf)
        best_any = np.full(reps, -np.inf)
        for a in range(n):
            for b in range(a + 3, n + 1):  # the window is steps [a, b)
                inside, outside = b - a, n - (b - a)
                if outside < 3:
                    continue
                s_in = cs[:, b] - cs[:, a]
                mu_in, mu_out = s_in / inside, (cs[:, n] - s_in) / outside
                ss = (cs2[:, b] - cs2[:, a] - inside * mu_in ** 2) + (cs2[:, n] - (cs2[:, b] - cs2[:, a]) - outside * mu_out ** 2)
                t = (mu_in - mu_out) / (np.sqrt(ss / (n - 2)) * np.sqrt(1 / inside + 1 / outside))
                best_any = np.maximum(best_any, t)
                if b == n:
                    best_end = np.maximum(best_end, t)
        for c in (4.0, 4.5):
            single = float(stats.t.sf(c, n - 2))
            for to_end, best in ((True, best_end), (False, best_any)):
                hits = int((best > c).sum())
                cases.append({"n": n, "c": c, "to_end": to_end, "replicates": reps, "hits": hits,
                              "factor": hits / reps / single})
    return cases


def l2_cases():
    rng = np.random.default_rng(20261201)
    cases = []
    # (ranks, steps, noise, planted: list of (rank, first step, factor)), rotating: every 4th step a
    # different rank is slow for one step.
    specs = [
        (8, 30, 0.01, [(3, 10, 1.5)], False),
        (8, 30, 0.01, [(5, 10, 1.1)], False),
        (16, 20, 0.02, [(0, 0, 1.2), (9, 12, 1.3)], False),
        (8, 30, 0.01, [], True),
        (4, 12, 0.005, [(2, 4, 1.06)], False),
        (32, 40, 0.03, [], False),
        (8, 30, 0.01, [(1, 5, 1.04)], False),
        # wide noise (processes sharing cores): the moderate count finds what few z > 3.5 steps show
        (4, 20, 0.2, [(1, 4, 1.5)], False),
        (6, 24, 0.2, [(4, 6, 1.5)], False),
    ]
    for G, S, noise, planted, rotating in specs:
        base = 40e6 * (1 + 0.2 * rng.random(S))  # the step's work varies, all ranks alike
        x = base * np.exp(noise * rng.standard_normal((G, S)))
        for r, first, f in planted:
            x[r, first:] *= f
        if rotating:
            for t in range(0, S, 4):
                x[(t // 4 * 3) % G, t] *= 2.0
        case = l2_group(np.round(x))
        case["planted"] = [r for r, _, _ in planted]
        cases.append(case)
    return cases


if __name__ == "__main__":
    dump("binomial.json", binomial_cases())
    dump("hypergeom.json", hypergeom_cases())
    dump("rank_sum.json", rank_sum_cases())
    dump("student_t.json", student_t_cases())
    dump("l2_groups.json", l2_cases())
    dump("window_scan.json", window_scan_cases())
