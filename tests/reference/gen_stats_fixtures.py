#!/usr/bin/env python3
r"""Reference fixtures for failslow's statistics core (include/failslow/stats/).

Run from the repository root:

    python3 tests/reference/gen_stats_fixtures.py

It needs numpy and scipy only (written against Debian's numpy 1.24.2 / scipy 1.10.1; if the
`python3` on PATH lacks them, the script re-runs itself under /usr/bin/python3). Every random
sample comes from numpy.random.default_rng with a fixed seed, so the output is deterministic for a
given numpy/scipy build. It writes seven JSON files into tests/reference/stats/, prints a summary,
and re-reads every file to check it parses and holds only finite numbers. Floats are written with
Python's repr (shortest round-trip form: full double precision, never rounded). JSON has no NaN or
Infinity: "not defined" is written as null. Durations are in nanoseconds.

-------------------------------------------------------------------------------------------------
stats/descriptive.json
  {"cases": [{"name", "x", "p", "quantiles": {method: [...]}, "mean", "variance", "median", "mad",
              "iqr", "cv", "modified_z"}]}
  x is in generation order (not sorted). p = [0, 0.01, 0.1, 0.25, 0.333, 0.5, 0.75, 0.9, 0.99, 1].
  quantiles[m]  numpy.quantile(x, p, method=m) for m in linear, lower, higher, nearest, midpoint,
                inverted_cdf, hazen, weibull, median_unbiased, normal_unbiased. With y = sorted x
                (0-based), n = len(x), numpy 1.24 computes a virtual index v and returns
                  linear            v = (n-1) p;  y[floor v] + (v - floor v)(y[floor v + 1] - y[floor v])
                  lower / higher    y[floor((n-1)p)] / y[ceil((n-1)p)]
                  nearest           y[round_half_even((n-1)p)]
                  midpoint          (y[floor((n-1)p)] + y[ceil((n-1)p)]) / 2
                  inverted_cdf      j = n p - 1: y[j] if j is an integer, else y[floor j + 1]
                                    (index clipped to [0, n-1])
                  continuous H&F    v = n p + alpha + p (1 - alpha - beta) - 1, interpolated as in
                                    linear, index clipped to [0, n-1]:
                                    hazen alpha=beta=1/2, weibull 0, median_unbiased 1/3,
                                    normal_unbiased 3/8
                numpy interpolates with lerp(a, b, g) = a + (b-a) g for g < 1/2 and b - (b-a)(1-g)
                otherwise, so results can differ from other formulas in the last ulp.
  mean          numpy.mean(x)
  variance      numpy.var(x, ddof=1) = sum (x - mean)^2 / (n-1); null when n < 2
  median        numpy.median(x)
  mad           scipy.stats.median_abs_deviation(x, scale=1.0) = median |x - median(x)| (unscaled)
  iqr           scipy.stats.iqr(x) = Q(0.75) - Q(0.25), linear method
  cv            scipy.stats.variation(x, ddof=1) = std(x, ddof=1) / mean(x) (sign of the mean is
                kept); null when n < 2 or mean == 0
  modified_z    0.6745 (x_i - median) / mad, in the order of x; null when mad == 0
  mean and variance are also checked against exact rational arithmetic (fractions.Fraction):
  they agree to < 1e-14 relative for every case, including the 1e9-offset one.

-------------------------------------------------------------------------------------------------
stats/bandwidth.json
  {"cases": [{"name", "x", "rule_of_thumb", "robust_rule_of_thumb", "scott", "silverman", "isj"}]}
  s = numpy.std(x, ddof=1), n = len(x), IQR = scipy.stats.iqr(x):
  rule_of_thumb          1.06 s n^(-1/5)
  robust_rule_of_thumb   1.06 min(s, IQR / 1.349) n^(-1/5)
  scott                  scipy.stats.gaussian_kde(x).factor * s               (= s n^(-1/5))
  silverman              gaussian_kde(x, bw_method='silverman').factor * s     (= s (3n/4)^(-1/5))
  isj                    improved Sheather-Jones (Botev, Grotowski & Kroese 2010, Ann. Statist.
                         38(5), 2916-2957), this file's own numpy/scipy implementation:
    1. Grid: lo = min(x) - r/10, hi = max(x) + r/10 with r = max(x) - min(x); R = hi - lo.
       G = 2^14 equal cells of width R/G; x_i goes to cell k = floor(G (x_i - lo) / R)
       (clipped to [0, G-1]); c_k = count_k / N, N = len(x) (all fixture samples have distinct
       values, so N is also Botev's length(unique(x))). Cell k is centred at (k + 1/2)/G of the
       unit interval the DCT works on.
       (Botev's kde.m bins with histc on G edges lo + k R/(G-1) instead; that variant changes h
       by 4e-5 .. 3.5e-4 relative on the fixture cases -- the script prints the difference.)
    2. a = scipy.fft.dct(c, type=2)  (unnormalised: a_k = 2 sum_j c_j cos(pi k (2j+1) / (2G)));
       for k = 1..G-1: I_k = k^2, a2_k = (a_k / 2)^2.
    3. ||f^(s)||^2 at time tau:  F_s(tau) = 2 pi^(2s) sum_k I_k^s a2_k exp(-I_k pi^2 tau).
    4. gamma^[l](t) with l = 7: f = F_7(t); for s = 6, 5, 4, 3, 2:
         K0 = (1*3*5*...*(2s-1)) / sqrt(2 pi),  c = (1 + 2^-(s + 1/2)) / 3,
         tau_s = (2 c K0 / (N f))^(2 / (3 + 2s)),  f = F_s(tau_s);
       fixed-point function  phi(t) = t - (2 N sqrt(pi) f)^(-2/5)   (the paper's t = xi gamma^[l](t)).
    5. t* = root of phi with scipy.optimize.brentq (xtol=1e-300, rtol=4*eps, the smallest brentq
       accepts), bracket as Botev's root(): [0, b] with b = 1e-12 + 0.01 (min(max(N,50),1050) - 50)
       / 1000, doubled (up to 0.1) until phi(b) > 0. The script also scans phi on 1500 log-spaced
       t in [1e-12, 0.1] and prints how many sign changes it saw (1 = unique fixed point there).
    6. h = sqrt(t*) R.
    Checks (printed): for N <= 2000 the same fixed point is recomputed without binning, with the
    exact Gaussian functionals ||f_t^(s)||^2 = (-1)^s / N^2 sum_ij phi^(2s)_{sqrt(2t)}(u_i - u_j)
    on u = (x - lo)/R (no reflecting boundary); it agrees to 1e-4 .. 3e-4 relative for N >= 1000
    and differs by ~14% for N = 50, where sqrt(t) is ~10% of the grid and the DCT's reflecting
    boundary at lo/hi matters -- the reflecting (DCT) version is Botev's definition and the one
    stored. For normal data the result is also compared with the normal-reference AMISE
    bandwidth (4/3)^(1/5) s n^(-1/5) (ratios 0.99 .. 1.12).

-------------------------------------------------------------------------------------------------
stats/kde.json
  {"cases": [{"name", "x", "weights", "bandwidth", "grid", "density"}]}
  bandwidth h is the kernel standard deviation. grid = numpy.linspace(min(x) - 4h, max(x) + 4h, 512).
  density = k(grid) with k = scipy.stats.gaussian_kde(x, weights=weights) after
  k.set_bandwidth(bw_method = h / sqrt(k._data_covariance[0,0])); the script asserts
  k.covariance[0,0] == h^2 to 1e-12 relative. Mathematically
      density(g) = sum_i w_i exp(-(g - x_i)^2 / (2 h^2)) / (sqrt(2 pi) h sum_i w_i),  w_i = 1 if
  weights is null. (Checked against that direct numpy sum: max relative difference printed.)
  Where h comes from a rule, it is the rule_of_thumb 1.06 s n^(-1/5) above.

-------------------------------------------------------------------------------------------------
stats/wasserstein.json
  {"cases": [{"name", "u", "v", "u_weights", "v_weights", "w1"}]}
  w1 = scipy.stats.wasserstein_distance(u, v, u_weights, v_weights) = integral |U(x) - V(x)| dx of
  the two (weighted) empirical CDFs; weights are normalised by their sums; null weights = equal.
  Checked against an exact rational (fractions.Fraction) evaluation of the same integral: max
  relative difference printed (< 1e-13 required).

-------------------------------------------------------------------------------------------------
stats/lognormal.json
  {"single": [{"mu", "sigma", "x", "cdf", "p", "quantile"}],
   "mixtures": [{"name", "components": [{"weight", "mu", "sigma", "lo", "hi"}], "truncated",
                 "x", "cdf", "p", "quantile"}],
   "mixture_pairs": [{"name", "a": {"name", "components", "truncated"}, "b": {...}, "w1",
                      "w1_error_estimate"}]}
  single: cdf = scipy.stats.lognorm(s=sigma, scale=exp(mu)).cdf(x), quantile = the same .ppf(p).
          x = 25 log-spaced points from ppf(0.001) to ppf(0.999);
          p = [1e-9, 1e-4, 0.01, 0.1, 0.5, 0.9, 0.99, 0.9999, 1-1e-9].
  Definitions for mixtures (Phi = standard normal CDF, scipy.special.ndtr):
    component c with sigma > 0:  F_c(x) = Phi((ln x - mu) / sigma) for x > 0, 0 for x <= 0;
    component c with sigma == 0: point mass at m = exp(mu), F_c(x) = 1[x >= m].
    Mixture F(x) = sum_c w_c F_c(x); the weights sum to 1.
    truncated == true: each sigma > 0 component is restricted to [lo, hi] and renormalised:
      F_c(x) = (Phi(z(clip(x, lo, hi))) - Phi(z(lo))) / (Phi(z(hi)) - Phi(z(lo)));
      point masses are unchanged. truncated == false: lo and hi are present (finite; for a point
      mass lo = hi = exp(mu)) but not used -- they are the bounds the truncated variant uses.
    Differences of Phi are evaluated on the side of the median with less cancellation
    (Phi(b) - Phi(a) or Phi(-a) - Phi(-b)).
    Quantile Q(p) = inf{x : F(x) >= p}: a point mass at m with F(m-) < p <= F(m) gives Q = m
    exactly; otherwise the root of F(x) = p between neighbouring point masses is found with
    scipy.optimize.brentq in x (xtol=1e-300, rtol=4*eps; scipy refuses rtol below 4*eps =
    8.9e-16), then moved ulp by ulp to the smallest double x with F(x) >= p as F is computed
    here (for p > 1/2 as the smallest x with S(x) = 1 - F(x) <= 1 - p, S summed from the
    components' survival functions, so upper-tail quantiles keep full relative precision). The p
    lists include values strictly inside each point mass's jump, and leave out p within 1e-9 of
    a partial sum of the weights (in order of mu) -- there F is flat or nearly flat between
    clusters, and Q(p) would hinge on how the weights' sum rounds -- and any p whose Q would
    move by more than 1e-13 relative for a 1e-16 relative change of F.
    x lists: 60 log-spaced points between Q(0.001) and Q(0.999), plus each point mass and the double
    just below it, and (truncated mixtures) each lo and hi and the doubles just outside them.
  mixture_pairs: w1 = integral_0^inf |F_a(x) - F_b(x)| dx, computed as
    integral |F_a(e^t) - F_b(e^t)| e^t dt with scipy.integrate.quad (epsabs=0, epsrel=1e-11,
    limit=500) on each piece between consecutive split points: every point mass, truncation bound
    (truncated mixtures) and component median exp(mu) of both mixtures, and the ends of the range
    [min exp(mu - 12 sigma), max exp(mu + 12 sigma)] over both mixtures' components (with lo/hi and
    point masses) -- which covers quantiles 1e-15 .. 1 - 1e-15 of both (asserted); the tails left
    out are < 1e-25 relative. Where F_a + F_b > 1 the integrand is |S_a - S_b| (survival functions),
    so the long upper tail is not lost to cancellation against 1. w1_error_estimate = the sum of
    quad's error estimates over the pieces: 0 (identical), 3.1e-7 on 5.8e4 (scaled), 9.9e-9 on
    1.5e4 (2 vs 3 clusters), 3.7e-11 on 26.7 (truncated vs untruncated) -- all < 1e-11 relative.
    Checks (printed): the scaled pair against 0.1 E[X] = 0.1 sum_c w_c exp(mu_c + sigma_c^2/2)
    (exact for X vs 1.1 X; agrees to 8e-15), and every pair against
    integral_0^1 |Q_a(p) - Q_b(p)| dp (quad at epsrel 1e-8; agrees to 1e-8 or better).

-------------------------------------------------------------------------------------------------
stats/normal_quantile.json
  {"p": [...], "z": [...], "ndtri": [...]}
  z = the standard normal quantile Phi^-1(p) of each double p, to 50 digits (mpmath, which Debian's
  python3-scipy pulls in): Newton's method on Phi(z) = p (Phi from mpmath.ncdf, the upper tail as
  1 - ncdf(-z)) from scipy.special.ndtri(p), to 1e-45, then rounded to double. ndtri = scipy's own
  value (cephes), for comparison: within 5e-16 relative of z. p: 300 log-spaced from 1e-300 to 1/2,
  300 uniform on (0, 1) (default_rng(22)), 1 - 2^-k for k = 2..53, and the ends of AS 241's
  branches (0.075, 0.925, exp(-25), 1 - exp(-25)) with their neighbouring doubles.

-------------------------------------------------------------------------------------------------
stats/special_functions.json
  {"gamma": [{"a", "x", "p", "q"}], "beta": [{"a", "b", "x", "lower", "upper"}],
   "gamma_inverse": [{"a", "t", "x_lower", "x_upper"}]}
  To 40 digits with mpmath, then rounded to double: p = P(a, x) and q = Q(a, x), the regularised
  incomplete gamma functions (mpmath.gammainc(a, 0, x) and (a, x, inf), regularized); lower =
  I_x(a, b) and upper = I_{1-x}(b, a) = 1 - I_x(a, b), the regularised incomplete beta (mpmath.betainc,
  the upper tail by symmetry so it is not 1 minus a rounded lower tail); x_lower / x_upper the x with
  P(a, x) = t / Q(a, x) = t (Newton in 40 digits on the log of the smaller tail, from scipy's
  gammaincinv / gammainccinv, to 1e-35 relative). a from 0.5 to 5000 (chi-square degrees of freedom 1 to 10,000 are a = d / 2), x from
  1e-10 to far in the upper tail (values down to 1e-300); b up to 4993.5 (the in-sample false-alarm
  rate's (N - d - 1) / 2 at N = 10^4); t from 1e-300 to 1 - 1e-10. Printed for comparison: scipy's
  own gammainc / gammaincc / betainc against these (scipy is off by up to ~1.5e-12 at a = 5000).
"""

import os
import sys

try:
    import numpy as np
    import scipy
except ImportError:  # the python3 on PATH (e.g. pyenv's) may lack numpy; Debian's has it
    if os.path.exists("/usr/bin/python3") and os.path.realpath(sys.executable) != os.path.realpath("/usr/bin/python3"):
        os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
    raise

import json
import math
import warnings
from fractions import Fraction

import scipy.fft
import scipy.integrate
import scipy.optimize
import scipy.special
import scipy.stats

OUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "stats")
EPS = np.finfo(float).eps
BRENTQ_RTOL = 4 * EPS


def fl(v):
    """A JSON-safe float (None for NaN/inf)."""
    v = float(v)
    return v if math.isfinite(v) else None


def fl_list(a):
    return [fl(v) for v in np.asarray(a, dtype=float).ravel()]


def write_json(name, obj):
    path = os.path.join(OUT_DIR, name)
    with open(path, "w") as f:
        json.dump(obj, f, allow_nan=False, separators=(",", ":"))
        f.write("\n")
    return path


# ------------------------------------------------------------------------------------------------
# (a) descriptive
# ------------------------------------------------------------------------------------------------
QUANTILE_METHODS = ["linear", "lower", "higher", "nearest", "midpoint", "inverted_cdf", "hazen", "weibull",
                    "median_unbiased", "normal_unbiased"]
DESCRIPTIVE_P = [0, 0.01, 0.1, 0.25, 0.333, 0.5, 0.75, 0.9, 0.99, 1]


def exact_mean_var(x):
    fr = [Fraction(float(v)) for v in x]
    n = len(fr)
    mean = sum(fr) / n
    var = sum((v - mean) ** 2 for v in fr) / (n - 1) if n > 1 else None
    return mean, var


def descriptive_cases():
    rng = np.random.default_rng(20240601)
    cases = [
        ("n1", np.array([4.25])),
        ("n2", np.array([3.0, -1.5])),
        ("n7_small_ints", np.array([3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0])),
        ("normal_n100", rng.normal(10.0, 2.0, 100)),
        ("normal_n1001", rng.normal(-3.0, 0.5, 1001)),
        ("lognormal_sigma1.5_n500", rng.lognormal(0.0, 1.5, 500)),
        ("ties_ints_0_5_n60", rng.permutation(np.repeat(np.arange(6.0), 10))),
        ("neg_pos_n33", rng.uniform(-5.0, 3.0, 33)),
        ("offset_1e9_n200", 1e9 + rng.normal(0.0, 1.0, 200)),
    ]
    out = []
    worst = 0.0
    for name, x in cases:
        x = np.asarray(x, dtype=float)
        n = x.size
        q = {m: fl_list(np.quantile(x, DESCRIPTIVE_P, method=m)) for m in QUANTILE_METHODS}
        mean = float(np.mean(x))
        var = float(np.var(x, ddof=1)) if n >= 2 else None
        median = float(np.median(x))
        mad = float(scipy.stats.median_abs_deviation(x, scale=1.0))
        iqr = float(scipy.stats.iqr(x))
        if n >= 2 and mean != 0:
            cv = float(scipy.stats.variation(x, ddof=1))
        else:
            cv = None
        mz = fl_list(0.6745 * (x - median) / mad) if mad > 0 else None
        # exact cross-check of mean / variance
        em, ev = exact_mean_var(x)
        rel_m = abs(Fraction(mean) - em) / abs(em) if em != 0 else abs(Fraction(mean) - em)
        worst = max(worst, float(rel_m))
        if var is not None:
            rel_v = abs(Fraction(var) - ev) / ev
            worst = max(worst, float(rel_v))
        out.append({"name": name, "x": fl_list(x), "p": list(map(float, DESCRIPTIVE_P)), "quantiles": q,
                    "mean": mean, "variance": var, "median": median, "mad": mad, "iqr": iqr, "cv": cv,
                    "modified_z": mz})
    assert worst < 1e-14, worst
    print(f"  descriptive: numpy mean/variance vs exact rationals: max relative difference {worst:.2e}")
    return {"cases": out}


# ------------------------------------------------------------------------------------------------
# (b) bandwidth, ISJ
# ------------------------------------------------------------------------------------------------
ISJ_GRID = 2 ** 14
ISJ_L = 7


def isj_prepare(x, binning="cells"):
    x = np.asarray(x, dtype=float)
    N = x.size
    xmin, xmax = x.min(), x.max()
    r = xmax - xmin
    lo, hi = xmin - r / 10, xmax + r / 10
    R = hi - lo
    G = ISJ_GRID
    if binning == "cells":
        k = np.floor(G * (x - lo) / R).astype(np.int64)
        k = np.clip(k, 0, G - 1)
        counts = np.bincount(k, minlength=G).astype(float)
    elif binning == "botev_histc":
        edges = lo + np.arange(G) * (R / (G - 1))
        k = np.searchsorted(edges, x, side="right") - 1  # histc: edges[k] <= x < edges[k+1]
        counts = np.bincount(np.clip(k, 0, G - 1), minlength=G).astype(float)
    else:
        raise ValueError(binning)
    c = counts / N
    c = c / c.sum()
    a = scipy.fft.dct(c, type=2)
    I = np.arange(1, G, dtype=float) ** 2
    a2 = (a[1:] / 2) ** 2
    return N, R, I, a2


def isj_functional_dct(I, a2):
    pi2 = np.pi ** 2

    def F(s, tau):
        return 2 * np.pi ** (2 * s) * np.sum(I ** s * a2 * np.exp(-I * pi2 * tau))

    return F


def isj_gamma_fixed_point(F, N):
    def phi(t):
        f = F(ISJ_L, t)
        for s in range(ISJ_L - 1, 1, -1):
            K0 = np.prod(np.arange(1, 2 * s, 2, dtype=float)) / np.sqrt(2 * np.pi)
            c = (1 + 0.5 ** (s + 0.5)) / 3
            tau = (2 * c * K0 / N / f) ** (2 / (3 + 2 * s))
            f = F(s, tau)
        return t - (2 * N * np.sqrt(np.pi) * f) ** (-2 / 5)

    return phi


def isj_solve(phi, N, lower=0.0):
    Nc = max(min(1050, N), 50)
    b = 1e-12 + 0.01 * (Nc - 50) / 1000
    while phi(b) <= 0:
        if b >= 0.1:
            raise RuntimeError("ISJ: no sign change on [0, 0.1]")
        b = min(2 * b, 0.1)
    return scipy.optimize.brentq(phi, lower, b, xtol=1e-300, rtol=BRENTQ_RTOL, maxiter=1000)


def isj_bandwidth(x, binning="cells"):
    N, R, I, a2 = isj_prepare(x, binning)
    phi = isj_gamma_fixed_point(isj_functional_dct(I, a2), N)
    t = isj_solve(phi, N)
    return math.sqrt(t) * R, phi


def isj_sign_changes(phi):
    ts = np.logspace(-12, -1, 1500)
    v = np.array([phi(t) for t in ts])
    return int(np.count_nonzero(np.diff(np.sign(v)) != 0))


def isj_bandwidth_direct(x):
    """The same fixed point with exact (unbinned) Gaussian functionals; O(N^2)."""
    x = np.asarray(x, dtype=float)
    N = x.size
    r = x.max() - x.min()
    lo, hi = x.min() - r / 10, x.max() + r / 10
    R = hi - lo
    u = (x - lo) / R
    d = (u[:, None] - u[None, :])[np.triu_indices(N, 1)]
    herm = {s: np.polynomial.hermite_e.HermiteE.basis(2 * s) for s in range(2, ISJ_L + 1)}

    def F(s, tau):
        sig = math.sqrt(2 * tau)
        z = d / sig
        pdf = np.exp(-0.5 * z * z) / math.sqrt(2 * math.pi)
        he0 = herm[s](0.0) / math.sqrt(2 * math.pi)  # diagonal terms, z = 0
        total = N * he0 + 2 * np.sum(herm[s](z) * pdf)
        return (-1) ** s * total / (N * N) / sig ** (2 * s + 1)

    phi = isj_gamma_fixed_point(F, N)
    t = isj_solve(phi, N, lower=1e-14)  # the exact functionals need t > 0
    return math.sqrt(t) * R


def mixture_sample(rng, n, weights, means, sds):
    comp = rng.choice(len(weights), size=n, p=np.asarray(weights) / np.sum(weights))
    return rng.normal(np.asarray(means)[comp], np.asarray(sds)[comp])


def claw_sample(rng, n):
    # Marron & Wand (1992) #10: 1/2 N(0,1) + sum_{l=0}^{4} 1/10 N(l/2 - 1, (1/10)^2)
    return mixture_sample(rng, n, [0.5] + [0.1] * 5, [0.0] + [l / 2 - 1 for l in range(5)], [1.0] + [0.1] * 5)


def rule_of_thumb(x):
    x = np.asarray(x, dtype=float)
    return 1.06 * np.std(x, ddof=1) * x.size ** -0.2


def bandwidth_cases():
    rng = np.random.default_rng(20240602)
    cases = [
        ("normal_n50", rng.normal(0.0, 1.0, 50), True),
        ("normal_n1000", rng.normal(2.0, 3.0, 1000), True),
        ("bimodal_0.7N(0,1)+0.3N(5,0.5)_n2000", mixture_sample(rng, 2000, [0.7, 0.3], [0.0, 5.0], [1.0, 0.5]), False),
        ("log_durations_N(3,0.2)_n5000", rng.normal(3.0, 0.2, 5000), True),
        ("five_modes_n10000", mixture_sample(rng, 10000, [0.3, 0.2, 0.2, 0.2, 0.1], [0.0, 2.0, 4.5, 7.0, 10.0],
                                             [0.3, 0.5, 0.4, 0.6, 0.3]), False),
        ("claw_marron_wand10_n2000", claw_sample(rng, 2000), False),
    ]
    out = []
    for name, x, is_normal in cases:
        x = np.asarray(x, dtype=float)
        assert np.unique(x).size == x.size
        n = x.size
        s = float(np.std(x, ddof=1))
        iqr = float(scipy.stats.iqr(x))
        kde_scott = scipy.stats.gaussian_kde(x)
        kde_silv = scipy.stats.gaussian_kde(x, bw_method="silverman")
        scott = kde_scott.factor * s
        silverman = kde_silv.factor * s
        assert abs(scott / (s * n ** -0.2) - 1) < 1e-14 and abs(silverman / (s * (0.75 * n) ** -0.2) - 1) < 1e-14
        isj, phi = isj_bandwidth(x)
        roots = isj_sign_changes(phi)
        isj_histc, _ = isj_bandwidth(x, "botev_histc")
        note = f"    {name}: isj {isj:.6g} (sign changes of phi on [1e-12,0.1]: {roots}); " \
               f"histc binning rel diff {abs(isj_histc / isj - 1):.1e}"
        if n <= 2000:
            direct = isj_bandwidth_direct(x)
            note += f"; unbinned exact functionals rel diff {abs(direct / isj - 1):.1e}"
        if is_normal:
            amise = (4 / 3) ** 0.2 * s * n ** -0.2
            note += f"; normal AMISE ref {amise:.6g} (ratio {isj / amise:.3f})"
        print(note)
        out.append({"name": name, "x": fl_list(x),
                    "rule_of_thumb": float(1.06 * s * n ** -0.2),
                    "robust_rule_of_thumb": float(1.06 * min(s, iqr / 1.349) * n ** -0.2),
                    "scott": float(scott), "silverman": float(silverman), "isj": float(isj)})
    return {"cases": out}


# ------------------------------------------------------------------------------------------------
# (c) kde
# ------------------------------------------------------------------------------------------------
def kde_cases():
    rng = np.random.default_rng(20240603)
    log_dur = mixture_sample(rng, 5000, [0.6, 0.3, 0.1], [math.log(10e3), math.log(40e3), math.log(200e3)],
                             [0.05, 0.08, 0.1])
    bimodal = mixture_sample(rng, 1000, [0.7, 0.3], [0.0, 5.0], [1.0, 0.5])
    weighted_x = mixture_sample(rng, 300, [0.5, 0.5], [-1.0, 2.0], [0.5, 0.8])
    weighted_w = rng.uniform(0.1, 3.0, 300)
    ties = rng.permutation(np.repeat(np.arange(10.0), [3, 7, 12, 20, 25, 18, 9, 4, 1, 1]))
    cases = [
        ("normal_n200_h0.3", rng.normal(0.0, 1.0, 200), None, 0.3),
        ("bimodal_n1000_rule_of_thumb", bimodal, None, rule_of_thumb(bimodal)),
        ("log_durations_3mode_n5000_rule_of_thumb", log_dur, None, rule_of_thumb(log_dur)),
        ("weighted_n300_h0.4", weighted_x, weighted_w, 0.4),
        ("tiny_n3_h0.5", np.array([1.0, 2.5, 2.75]), None, 0.5),
        ("ties_ints_n100_h0.5", ties, None, 0.5),
    ]
    out = []
    worst = 0.0
    for name, x, w, h in cases:
        x = np.asarray(x, dtype=float)
        h = float(h)
        kde = scipy.stats.gaussian_kde(x, weights=w)
        kde.set_bandwidth(bw_method=h / math.sqrt(kde._data_covariance[0, 0]))
        assert abs(kde.covariance[0, 0] / h ** 2 - 1) < 1e-12, (name, kde.covariance[0, 0], h ** 2)
        grid = np.linspace(x.min() - 4 * h, x.max() + 4 * h, 512)
        dens = kde(grid)
        ww = np.ones_like(x) if w is None else np.asarray(w, dtype=float)
        direct = (ww[None, :] * np.exp(-0.5 * ((grid[:, None] - x[None, :]) / h) ** 2)).sum(1) / (
            math.sqrt(2 * math.pi) * h * ww.sum())
        rel = float(np.max(np.abs(dens / direct - 1)))
        worst = max(worst, rel)
        assert rel < 1e-10, (name, rel)
        out.append({"name": name, "x": fl_list(x), "weights": None if w is None else fl_list(w), "bandwidth": h,
                    "grid": fl_list(grid), "density": fl_list(dens)})
    print(f"  kde: scipy vs direct numpy sum: max relative difference {worst:.2e}")
    return {"cases": out}


# ------------------------------------------------------------------------------------------------
# (d) wasserstein
# ------------------------------------------------------------------------------------------------
def exact_w1(u, v, uw=None, vw=None):
    u = [Fraction(float(a)) for a in u]
    v = [Fraction(float(a)) for a in v]
    uw = [Fraction(1)] * len(u) if uw is None else [Fraction(float(a)) for a in uw]
    vw = [Fraction(1)] * len(v) if vw is None else [Fraction(float(a)) for a in vw]
    su, sv = sum(uw), sum(vw)
    events = sorted([(a, w / su, 0) for a, w in zip(u, uw)] + [(a, w / sv, 1) for a, w in zip(v, vw)],
                    key=lambda e: e[0])
    Fu = Fv = Fraction(0)
    total = Fraction(0)
    prev = None
    for a, w, side in events:
        if prev is not None and a != prev:
            total += abs(Fu - Fv) * (a - prev)
        if side == 0:
            Fu += w
        else:
            Fv += w
        prev = a
    return total


def wasserstein_cases():
    rng = np.random.default_rng(20240604)
    base = rng.normal(0.0, 1.0, 64)
    cases = [
        ("equal_sizes_n100", rng.normal(0.0, 1.0, 100), rng.normal(0.5, 1.5, 100), None, None),
        ("unequal_sizes_37_vs_1000", rng.normal(1.0, 2.0, 37), rng.normal(0.0, 1.0, 1000), None, None),
        ("weights_both", rng.normal(0.0, 1.0, 80), rng.normal(0.3, 1.2, 120), rng.uniform(0.1, 2.0, 80),
         rng.uniform(0.1, 2.0, 120)),
        ("weights_u_only", rng.exponential(1.0, 50), rng.exponential(1.3, 70), rng.uniform(0.5, 5.0, 50), None),
        ("ties_integers", rng.integers(0, 6, 90).astype(float), rng.integers(1, 8, 60).astype(float), None, None),
        ("heavy_tails_lognormal2_n500_vs_pareto1.5_n700", rng.lognormal(0.0, 2.0, 500),
         rng.pareto(1.5, 700) + 1.0, None, None),
        ("pure_shift_3.7", base, base + 3.7, None, None),
        ("identical", base, base.copy(), None, None),
        ("single_each", np.array([1.5]), np.array([4.0]), None, None),
        ("single_vs_many", np.array([0.25]), rng.normal(0.0, 1.0, 200), None, None),
        ("large_values_1e9_offset", 1e9 + rng.normal(0.0, 1e3, 150), 1e9 + 250.0 + rng.normal(0.0, 800.0, 170),
         None, None),
    ]
    out = []
    worst = 0.0
    for name, u, v, uw, vw in cases:
        w1 = float(scipy.stats.wasserstein_distance(u, v, uw, vw))
        ex = exact_w1(u, v, uw, vw)
        if ex == 0:
            rel = abs(w1)
        else:
            rel = float(abs(Fraction(w1) - ex) / ex)
        worst = max(worst, rel)
        assert rel < 1e-13, (name, rel)
        out.append({"name": name, "u": fl_list(u), "v": fl_list(v),
                    "u_weights": None if uw is None else fl_list(uw),
                    "v_weights": None if vw is None else fl_list(vw), "w1": w1})
    print(f"  wasserstein: scipy vs exact rationals: max relative difference {worst:.2e}")
    return {"cases": out}


# ------------------------------------------------------------------------------------------------
# (e) lognormal singles, mixtures, W1 between mixtures
# ------------------------------------------------------------------------------------------------
Phi = scipy.special.ndtr


def phi_diff(a, b):
    """Phi(b) - Phi(a) for a <= b, on the side with less cancellation."""
    if a + b <= 0:
        return Phi(b) - Phi(a)
    return Phi(-a) - Phi(-b)


class Mixture:
    def __init__(self, name, components, truncated):
        self.name = name
        self.components = [dict(c) for c in components]
        self.truncated = truncated
        wsum = math.fsum(c["weight"] for c in self.components)
        assert abs(wsum - 1) < 1e-15, wsum
        masses = {}
        for c in self.components:
            if c["sigma"] == 0:
                m = math.exp(c["mu"])
                assert c["lo"] == m and c["hi"] == m
                masses[m] = masses.get(m, 0.0) + c["weight"]
            else:
                assert c["lo"] < math.exp(c["mu"]) < c["hi"]
        self.masses = sorted(masses.items())
        self.cont = [c for c in self.components if c["sigma"] > 0]

    def json(self):
        return {"name": self.name, "components": [{k: float(c[k]) for k in ("weight", "mu", "sigma", "lo", "hi")}
                                                  for c in self.components], "truncated": self.truncated}

    def _z(self, c, x):
        return (math.log(x) - c["mu"]) / c["sigma"]

    def comp_cdf(self, c, x):
        """F_c(x) for a sigma > 0 component."""
        if x <= 0:
            return 0.0
        if not self.truncated:
            return float(Phi(self._z(c, x)))
        xc = min(max(x, c["lo"]), c["hi"])
        zl, zh, zx = self._z(c, c["lo"]), self._z(c, c["hi"]), self._z(c, xc)
        return float(phi_diff(zl, zx) / phi_diff(zl, zh))

    def comp_sf(self, c, x):
        """1 - F_c(x), computed without cancellation."""
        if x <= 0:
            return 1.0
        if not self.truncated:
            return float(Phi(-self._z(c, x)))
        xc = min(max(x, c["lo"]), c["hi"])
        zl, zh, zx = self._z(c, c["lo"]), self._z(c, c["hi"]), self._z(c, xc)
        return float(phi_diff(zx, zh) / phi_diff(zl, zh))

    def comp_logpdf_density(self, c, x):
        """x f_c(x): the density of ln X at ln x."""
        z = self._z(c, x)
        d = math.exp(-0.5 * z * z) / math.sqrt(2 * math.pi) / c["sigma"]
        if not self.truncated:
            return d
        if not (c["lo"] <= x <= c["hi"]):
            return 0.0
        return d / float(phi_diff(self._z(c, c["lo"]), self._z(c, c["hi"])))

    def cont_cdf(self, x):
        return math.fsum(c["weight"] * self.comp_cdf(c, x) for c in self.cont)

    def cont_sf(self, x):
        return math.fsum(c["weight"] * self.comp_sf(c, x) for c in self.cont)

    def mass_below(self, x):
        """Point-mass weight at locations <= x."""
        return math.fsum(w for m, w in self.masses if m <= x)

    def mass_above(self, x):
        """Point-mass weight at locations > x."""
        return math.fsum(w for m, w in self.masses if m > x)

    def cdf(self, x):
        return self.cont_cdf(x) + self.mass_below(x)

    def sf(self, x):
        """1 - F(x)."""
        return self.cont_sf(x) + self.mass_above(x)

    def log_density(self, x):
        return math.fsum(c["weight"] * self.comp_logpdf_density(c, x) for c in self.cont)

    def support(self):
        """[a, b] outside which F is 0 / 1 to < 1e-30 (exp(mu -/+ 12 sigma), lo/hi, point masses)."""
        pts = []
        for c in self.components:
            if c["sigma"] == 0:
                pts.append(math.exp(c["mu"]))
            elif self.truncated:
                pts += [c["lo"], c["hi"]]
            else:
                pts += [math.exp(c["mu"] - 12 * c["sigma"]), math.exp(c["mu"] + 12 * c["sigma"])]
        return min(pts), max(pts)

    def quantile(self, p):
        """Q(p) = inf{x : F(x) >= p}. For p > 1/2 the equivalent test S(x) <= 1 - p is used (1 - p is
        exact there), so upper-tail quantiles keep full relative precision."""
        assert 0 < p < 1
        upper = p > 0.5
        q = 1 - p
        a = 0.0
        for m, w in self.masses:
            if upper:  # F(m-) >= p  <=>  S(m-) = S(m) + w <= 1 - p
                s_m = self.sf(m)
                at_or_above_left = s_m + w <= q
                inside = (not at_or_above_left) and s_m <= q
            else:
                F_left = self.cdf(m) - w
                at_or_above_left = F_left >= p
                inside = (not at_or_above_left) and p <= F_left + w
            if at_or_above_left:
                return self._root(p, a, m)
            if inside:
                return m
            a = m
        return self._root(p, a, math.inf)

    def _reached(self, x, p):
        """F(x) >= p (tested as S(x) <= 1 - p for p > 1/2)."""
        return self.sf(x) <= 1 - p if p > 0.5 else self.cdf(x) >= p

    def _root(self, p, a, b):
        lo_s, hi_s = self.support()
        left = max(a, 0.5 * lo_s)
        right = min(b, 2.0 * hi_s)
        below = self.mass_below(a) if a > 0 else 0.0  # masses <= a
        above = math.fsum(w for m, w in self.masses if m >= b)  # no masses lie in (a, b)
        if p > 0.5:
            h = lambda x: (1 - p) - (self.cont_sf(x) + above)  # noqa: E731  increasing, continuous on (a, b)
        else:
            h = lambda x: self.cont_cdf(x) + below - p  # noqa: E731
        assert h(left) < 0 <= h(right), (self.name, p, h(left), h(right))
        x = scipy.optimize.brentq(h, left, right, xtol=1e-300, rtol=BRENTQ_RTOL, maxiter=1000)
        # polish: the smallest double x with F(x) >= p. Where F is flat to double precision at level p
        # (between clusters) this can take many steps; such p are dropped by the caller
        # (quantile_rel_condition), so give up after 1000 steps.
        steps = 0
        while not self._reached(x, p) and steps < 1000:
            x = float(np.nextafter(x, math.inf))
            steps += 1
        while self._reached(float(np.nextafter(x, 0)), p) and steps < 1000:
            x = float(np.nextafter(x, 0))
            steps += 1
        return float(x)

    def quantile_rel_condition(self, p, x):
        """Relative error of Q(p) caused by a relative error of 1e-16 in F (or S): large where the
        mixture's F is (nearly) flat at level p."""
        dens = self.log_density(x)
        return math.inf if dens == 0 else 1e-16 * min(p, 1 - p) / dens

    def split_points(self):
        pts = []
        for c in self.components:
            pts.append(math.exp(c["mu"]))
            if self.truncated and c["sigma"] > 0:
                pts += [c["lo"], c["hi"]]
        return pts

    def mean(self):
        tot = []
        for c in self.components:
            mu, s, w = c["mu"], c["sigma"], c["weight"]
            if s == 0:
                tot.append(w * math.exp(mu))
            elif not self.truncated:
                tot.append(w * math.exp(mu + s * s / 2))
            else:
                zl, zh = (math.log(c["lo"]) - mu) / s, (math.log(c["hi"]) - mu) / s
                tot.append(w * math.exp(mu + s * s / 2) * phi_diff(zl - s, zh - s) / phi_diff(zl, zh))
        return math.fsum(tot)

    def scaled(self, name, k):
        comps = []
        for c in self.components:
            d = dict(c)
            d["mu"] = c["mu"] + math.log(k)
            if c["sigma"] == 0:
                d["lo"] = d["hi"] = math.exp(d["mu"])
            else:
                d["lo"], d["hi"] = c["lo"] * k, c["hi"] * k
            comps.append(d)
        return Mixture(name, comps, self.truncated)


def comp(weight, median, sigma, lo_z=-3.5, hi_z=3.5):
    mu = math.log(median)
    if sigma == 0:
        m = math.exp(mu)
        return {"weight": weight, "mu": mu, "sigma": 0.0, "lo": m, "hi": m}
    return {"weight": weight, "mu": mu, "sigma": sigma, "lo": math.exp(mu + lo_z * sigma),
            "hi": math.exp(mu + hi_z * sigma)}


def w1_mixtures(A, B):
    sa, sb = A.support(), B.support()
    lo, hi = min(sa[0], sb[0]), max(sa[1], sb[1])
    for M in (A, B):
        assert lo <= M.quantile(1e-15) and M.quantile(1 - 1e-15) <= hi
    pts = sorted({lo, hi} | {p for p in A.split_points() + B.split_points() if lo < p < hi})
    ts = [math.log(p) for p in pts]

    def integrand(t):
        x = math.exp(t)
        fa, fb = A.cdf(x), B.cdf(x)
        if fa + fb > 1:  # upper side: |F_a - F_b| = |S_a - S_b| without cancellation against 1
            return abs(A.sf(x) - B.sf(x)) * x
        return abs(fa - fb) * x

    total, err = [], []
    for t0, t1 in zip(ts[:-1], ts[1:]):
        if t1 <= t0:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("error", scipy.integrate.IntegrationWarning)
            v, e = scipy.integrate.quad(integrand, t0, t1, epsabs=0, epsrel=1e-11, limit=500)
        total.append(v)
        err.append(e)
    return math.fsum(total), math.fsum(err)


def w1_via_quantiles(A, B):
    f = lambda p: abs(A.quantile(p) - B.quantile(p))  # noqa: E731
    edges = sorted({1e-12, 1 - 1e-12} | {float(np.cumsum([c["weight"] for c in M.components])[i])
                                         for M in (A, B) for i in range(len(M.components) - 1)})
    tot = 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for p0, p1 in zip(edges[:-1], edges[1:]):
            tot += scipy.integrate.quad(f, p0, p1, epsabs=0, epsrel=1e-8, limit=200)[0]
    return tot


SINGLE_P = [1e-9, 1e-4, 0.01, 0.1, 0.5, 0.9, 0.99, 0.9999, 1 - 1e-9]


def lognormal_cases():
    singles = []
    worst = 0.0
    for mu, sigma in [(0.0, 1.0), (math.log(25e3), 0.05), (math.log(1e6), 0.8), (-3.0, 2.5)]:
        dist = scipy.stats.lognorm(s=sigma, scale=math.exp(mu))
        x = np.exp(np.linspace(math.log(dist.ppf(0.001)), math.log(dist.ppf(0.999)), 25))
        cdf = dist.cdf(x)
        own = Phi((np.log(x) - mu) / sigma)
        worst = max(worst, float(np.max(np.abs(own / cdf - 1))))
        singles.append({"mu": mu, "sigma": sigma, "x": fl_list(x), "cdf": fl_list(cdf), "p": SINGLE_P,
                        "quantile": fl_list(dist.ppf(SINGLE_P))})
    print(f"  lognormal singles: scipy cdf vs Phi((ln x - mu)/sigma): max relative difference {worst:.1e}")

    two = Mixture("two_cluster_20us_60us", [comp(0.8, 20e3, 0.03), comp(0.2, 60e3, 0.05)], False)
    three_comps = [comp(0.6, 20e3, 0.04, -3.0, 3.0), comp(0.3, 45e3, 0.0), comp(0.1, 150e3, 0.1, -2.5, 4.0)]
    three = Mixture("three_cluster_point_mass", three_comps, False)
    three_t = Mixture("three_cluster_point_mass_truncated", three_comps, True)
    five = Mixture("five_cluster_heavy", [comp(0.5, 8e3, 0.05), comp(0.2, 25e3, 0.1), comp(0.15, 80e3, 0.2),
                                          comp(0.1, 400e3, 0.5), comp(0.05, 5e6, 1.2)], False)
    mixtures = []
    base_p = [1e-9, 1e-4, 0.01, 0.1, 0.25, 0.4, 0.5, 0.55, 0.75, 0.9, 0.92, 0.99, 0.9999, 1 - 1e-9]
    for M in (two, three, three_t, five):
        cand = list(base_p)
        below = 0.0
        for m, w in M.masses:  # values strictly inside each jump
            Fm = M.cont_cdf(m) + below
            cand += [Fm + 0.01 * w, Fm + 0.5 * w, Fm + 0.99 * w]
            below += w
        # levels where F is flat (truncated clusters) or nearly so (clusters far apart), or jumps
        by_mu = sorted(M.components, key=lambda c: c["mu"])
        levels = np.cumsum([c["weight"] for c in by_mu])[:-1]
        ps, q, dropped = [], [], []
        for p in sorted(set(cand)):
            if np.min(np.abs(levels - p)) < 1e-9:
                dropped.append(p)  # Q(p) would hinge on how the weights' sum rounds
                continue
            x = M.quantile(p)
            is_mass = any(x == m for m, _ in M.masses)
            # drop ill-conditioned levels (where F is flat to double precision, e.g. between clusters)
            if not is_mass and M.quantile_rel_condition(p, x) > 1e-13:
                dropped.append(p)
                continue
            ps.append(p)
            q.append(x)
        assert all(q1 <= q2 for q1, q2 in zip(q, q[1:]))
        print(f"    mixture {M.name}: {len(ps)} quantiles" + (f", dropped ill-conditioned p {dropped}" if dropped else ""))
        xs = set(np.exp(np.linspace(math.log(M.quantile(0.001)), math.log(M.quantile(0.999)), 60)).tolist())
        for m, _ in M.masses:
            xs |= {m, float(np.nextafter(m, 0))}
        if M.truncated:
            for c in M.cont:
                xs |= {c["lo"], c["hi"], float(np.nextafter(c["lo"], 0)), float(np.nextafter(c["hi"], math.inf))}
        xs = sorted(xs)
        d = M.json()
        d.update({"x": fl_list(xs), "cdf": fl_list([M.cdf(x) for x in xs]), "p": fl_list(ps), "quantile": fl_list(q)})
        mixtures.append(d)

    pairs = []
    for name, A, B in [("identical", five, Mixture("five_cluster_heavy", five.components, False)),
                       ("scaled_by_1.1", five, five.scaled("five_cluster_heavy_x1.1", 1.1)),
                       ("two_vs_three_cluster", two, three),
                       ("truncated_vs_untruncated", three_t, three),
                       # single lognormals: the closed form of W1 (equal sigmas, crossing
                       # quantile functions, a point mass) and the quantile-grid form
                       ("single_equal_sigma", Mixture("a", [comp(1, 20e3, 0.05)], False),
                        Mixture("b", [comp(1, 21e3, 0.05)], False)),
                       ("single_crossing_sigma", Mixture("a", [comp(1, 20e3, 0.05)], False),
                        Mixture("b", [comp(1, 20.5e3, 0.25)], False)),
                       ("single_vs_point_mass", Mixture("a", [comp(1, 20e3, 0.1)], False),
                        Mixture("b", [comp(1, 21e3, 0.0)], False)),
                       ("single_truncated_vs_untruncated", Mixture("a", [comp(1, 20e3, 0.3, -1.5, 2.0)], True),
                        Mixture("b", [comp(1, 20e3, 0.3)], False)),
                       ("four_cluster_truncated_slowed_5pct",
                        Mixture("a", [comp(0.55, 12e3, 0.04, -3.2, 3.4), comp(0.25, 30e3, 0.08, -2.8, 3.1),
                                      comp(0.15, 95e3, 0.15, -2.5, 3.0), comp(0.05, 700e3, 0.3, -2.0, 2.6)], True),
                        Mixture("a", [comp(0.55, 12e3, 0.04, -3.2, 3.4), comp(0.25, 30e3, 0.08, -2.8, 3.1),
                                      comp(0.15, 95e3, 0.15, -2.5, 3.0), comp(0.05, 700e3, 0.3, -2.0, 2.6)],
                                True).scaled("a_x1.05", 1.05))]:
        w1, err = w1_mixtures(A, B)
        check = f"    pair {name}: w1 {w1:.12g}, quad error estimate {err:.1e}"
        if name == "identical":
            assert w1 == 0
        else:
            wq = w1_via_quantiles(A, B)
            check += f"; vs integral |Q_a - Q_b| dp: rel diff {abs(wq / w1 - 1):.1e}"
            assert abs(wq / w1 - 1) < 1e-6
        if name == "scaled_by_1.1":
            ref = 0.1 * A.mean()
            check += f"; vs 0.1 E[X] = {ref:.12g}: rel diff {abs(w1 / ref - 1):.1e}"
            assert abs(w1 / ref - 1) < 1e-10
        print(check)
        pairs.append({"name": name, "a": A.json(), "b": B.json(), "w1": float(w1), "w1_error_estimate": float(err)})
    return {"single": singles, "mixtures": mixtures, "mixture_pairs": pairs}


# ------------------------------------------------------------------------------------------------
# (f) normal quantile
# ------------------------------------------------------------------------------------------------
def normal_quantile_cases():
    import mpmath

    mpmath.mp.dps = 50

    def exact(p):
        pm = mpmath.mpf(p)
        z = mpmath.mpf(float(scipy.special.ndtri(p)))
        for _ in range(100):
            f = mpmath.ncdf(z) if z < 0 else 1 - mpmath.ncdf(-z)
            dz = (f - pm) / mpmath.npdf(z)
            z -= dz
            if abs(dz) < mpmath.mpf(10) ** -45 * (1 + abs(z)):
                return float(z)
        raise RuntimeError(p)

    rng = np.random.default_rng(22)
    ps = list(np.logspace(-300, math.log10(0.5), 300)) + list(rng.uniform(0, 1, 300))
    ps += [1 - 2.0 ** -k for k in range(2, 54)]
    for edge in (0.075, 0.925, math.exp(-25), 1 - math.exp(-25)):
        ps += [np.nextafter(edge, 0), edge, np.nextafter(edge, 1)]
    ps = sorted({float(p) for p in ps if 0 < p < 1})
    z = [exact(p) for p in ps]
    nd = [float(scipy.special.ndtri(p)) for p in ps]
    worst = max(abs(a - b) / abs(b) for a, b in zip(nd, z) if b != 0)
    print(f"  ndtri vs 50-digit quantile: max relative difference {worst:.2e}")
    assert worst < 5e-16
    return {"p": ps, "z": z, "ndtri": nd}


# ------------------------------------------------------------------------------------------------
# (g) incomplete gamma and beta functions and the gamma inverse (the chi-square of detect/)
# ------------------------------------------------------------------------------------------------
def special_function_cases():
    import mpmath

    mpmath.mp.dps = 40
    mp = mpmath.mpf
    worst = {"gammainc": 0.0, "betainc": 0.0}

    def rel(a, b):
        return abs(a - b) / abs(b) if b != 0 else abs(a)

    gamma = []
    for a in [0.5, 1, 1.5, 2, 3, 5, 9.5, 10, 12, 25, 50, 125, 500, 5000]:
        xs = {1e-10, 1e-3, 0.1, 0.5, 1.0, a * 0.5, a * 0.9, a, a + 1, a * 1.1, a * 1.5, a * 2,
              a * 4 + 10, a + 40 * math.sqrt(a) + 50}
        for x in sorted(xs):
            p = float(mpmath.gammainc(mp(a), 0, mp(x), regularized=True))
            q = float(mpmath.gammainc(mp(a), mp(x), mpmath.inf, regularized=True))
            gamma.append({"a": float(a), "x": float(x), "p": p, "q": q})
            worst["gammainc"] = max(worst["gammainc"], rel(float(scipy.special.gammainc(a, x)), p),
                                    rel(float(scipy.special.gammaincc(a, x)), q))
    beta = []
    for a in [0.5, 1, 2, 3, 5, 6, 12, 25, 50]:
        for b in [0.5, 1, 2.5, 10, 20, 47.5, 100, 500, 4993.5]:
            m = a / (a + b)
            s = math.sqrt(a * b / ((a + b) ** 2 * (a + b + 1)))
            xs = {1e-12, 1e-6, 1e-3, 0.01, m * 0.5, m, m + s, m + 3 * s, m + 8 * s, 0.5, 0.9, 0.999}
            for x in sorted(v for v in xs if 0 < v < 1):
                lower = float(mpmath.betainc(mp(a), mp(b), 0, mp(x), regularized=True))
                upper = float(mpmath.betainc(mp(b), mp(a), 0, 1 - mp(x), regularized=True))
                beta.append({"a": float(a), "b": float(b), "x": float(x), "lower": lower, "upper": upper})
                worst["betainc"] = max(worst["betainc"], rel(float(scipy.special.betainc(a, b, x)), lower))

    def invert(a, t, upper):
        # Newton in 40 digits on ln tail(x) - ln target, on the tail that is the smaller at the
        # answer (its logarithm keeps every digit), from scipy's gammaincinv / gammainccinv.
        start = float(scipy.special.gammainccinv(a, t) if upper else scipy.special.gammaincinv(a, t))
        if not (start > 0 and math.isfinite(start)):
            return None
        solve_upper = upper == (t < 0.5)
        target = mp(t) if t < 0.5 else 1 - mp(t)
        tail = (lambda x: mpmath.gammainc(mp(a), x, mpmath.inf, regularized=True)) if solve_upper else \
               (lambda x: mpmath.gammainc(mp(a), 0, x, regularized=True))
        x = mp(start)
        for _ in range(200):
            d = mpmath.exp(-x) * x ** (mp(a) - 1) / mpmath.gamma(mp(a))
            tx = tail(x)
            step = (mpmath.log(tx) - mpmath.log(target)) / ((-d if solve_upper else d) / tx)
            x -= step
            if abs(step) < mp(10) ** -35 * x:
                return float(x)
        raise RuntimeError((a, t, upper))

    inverse = []
    for d in [1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 50, 100, 250, 1000, 10000]:
        a = d / 2
        for t in [1e-300, 1e-100, 1e-10, 1e-3, 0.025, 0.4875, 0.5, 0.9, 0.975, 0.99, 0.999, 1 - 1e-10]:
            lo, hi = invert(a, t, False), invert(a, t, True)
            if lo is None or hi is None:
                continue
            inverse.append({"a": float(a), "t": float(t), "x_lower": lo, "x_upper": hi})
    print(f"  scipy vs 40-digit: gammainc/gammaincc {worst['gammainc']:.2e}, betainc {worst['betainc']:.2e}")
    print(f"  {len(gamma)} gamma, {len(beta)} beta, {len(inverse)} inverse points")
    return {"gamma": gamma, "beta": beta, "gamma_inverse": inverse}


# ------------------------------------------------------------------------------------------------
def check_finite(obj, path="$"):
    """Every number finite; returns the count of numbers."""
    if isinstance(obj, bool) or obj is None or isinstance(obj, str):
        return 0
    if isinstance(obj, (int, float)):
        assert math.isfinite(obj), path
        return 1
    if isinstance(obj, list):
        return sum(check_finite(v, f"{path}[{i}]") for i, v in enumerate(obj))
    if isinstance(obj, dict):
        return sum(check_finite(v, f"{path}.{k}") for k, v in obj.items())
    raise TypeError(path)


def main():
    print(f"numpy {np.__version__}, scipy {scipy.__version__}, python {sys.version.split()[0]}")
    os.makedirs(OUT_DIR, exist_ok=True)
    files = {}
    print("descriptive.json")
    files["descriptive.json"] = descriptive_cases()
    print("bandwidth.json")
    files["bandwidth.json"] = bandwidth_cases()
    print("kde.json")
    files["kde.json"] = kde_cases()
    print("wasserstein.json")
    files["wasserstein.json"] = wasserstein_cases()
    print("lognormal.json")
    files["lognormal.json"] = lognormal_cases()
    print("normal_quantile.json")
    files["normal_quantile.json"] = normal_quantile_cases()
    print("special_functions.json")
    files["special_functions.json"] = special_function_cases()

    print("summary:")
    for name, obj in files.items():
        path = write_json(name, obj)
        size = os.path.getsize(path)
        assert size < 2_000_000, (name, size)
        with open(path) as f:
            back = json.load(f)
        assert back == json.loads(json.dumps(obj, allow_nan=False)), name
        count = check_finite(back)
        if "p" in back:
            print(f"  {name}: {len(back['p'])} points, {count} numbers, {size / 1024:.0f} KiB")
        elif "gamma" in back:
            print(f"  {name}: {count} numbers, {size / 1024:.0f} KiB")
        elif "cases" in back:
            desc = ", ".join(c["name"] for c in back["cases"])
            print(f"  {name}: {len(back['cases'])} cases, {count} numbers, {size / 1024:.0f} KiB: {desc}")
        else:
            print(f"  {name}: {len(back['single'])} single, {len(back['mixtures'])} mixtures, "
                  f"{len(back['mixture_pairs'])} pairs, {count} numbers, {size / 1024:.0f} KiB")


if __name__ == "__main__":
    main()
