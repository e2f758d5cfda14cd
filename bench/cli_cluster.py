"""Whole-process `failslow cluster FILE` against scipy's gaussian_kde, the peer of bench_kde.

usage: python3 bench/cli_cluster.py FAILSLOW [N...]      (default N: 100000 1000000)

Data: the peer's mixture (peers/kde_scipy.py, numpy default_rng(1)): ln(d) ~ 60% N(ln 20e3, 0.05),
30% N(ln 60e3, 0.08), 10% N(ln 300e3, 0.1), d in ns, written one value per line to a temporary
folder in two forms: integer nanoseconds (what a profiler export holds) and numpy.savetxt's
default '%.18e' (25 characters a value).
Timed: the wall time of the whole process -- start, read and parse the file, KDE valley
clustering on a 1024-point grid, cluster summaries, JSON on stdout (to /dev/null) -- best and
median of 15 runs after one warm-up (the file is in the page cache), and its CPU time (user +
system, getrusage of the child; what a loaded machine does not inflate), best of the 15.
Peer: peers/kde_scipy.py N 1024 (gaussian_kde fit + evaluation on 1024 points, on data already in
memory: no file read), best of 3.
Prints one line per form and N, and the ratio peer / failslow (best of each) for N = 1e5.
"""
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers"))
import _debian_python  # noqa: E402

_debian_python.require("numpy")
import numpy as np  # noqa: E402

RUNS = 15


def make_data(n):
    rng = np.random.default_rng(1)
    comp = rng.choice(3, size=n, p=[0.6, 0.3, 0.1])
    mu = np.log(np.array([20e3, 60e3, 300e3]))[comp]
    sd = np.array([0.05, 0.08, 0.1])[comp]
    return np.exp(rng.normal(mu, sd))


def time_process(cmd):
    """Best and median wall time of the whole process, and its best CPU time (user + system)."""
    subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)  # warm-up
    times, cpu = [], []
    for _ in range(RUNS):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - t0)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append((r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime))
    return min(times), statistics.median(times), min(cpu)


def main():
    tool = os.path.abspath(sys.argv[1])
    sizes = [int(float(a)) for a in sys.argv[2:]] or [100000, 1000000]
    peer = os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers", "kde_scipy.py")
    with tempfile.TemporaryDirectory() as tmp:
        results = {}
        for n in sizes:
            d = make_data(n)
            for form, fmt in (("integer ns", "%d"), ("%.18e", "%.18e")):
                path = os.path.join(tmp, "d_%d_%s.txt" % (n, "int" if fmt == "%d" else "e"))
                np.savetxt(path, np.rint(d) if fmt == "%d" else d, fmt=fmt)
                best, med, cpu = time_process([tool, "cluster", path])
                results[(n, form)] = best
                print("failslow cluster, %8d values (%s, %.1f MB): wall best %.2f ms, median %.2f ms; CPU %.2f ms"
                      % (n, form, os.path.getsize(path) / 1e6, best * 1e3, med * 1e3, cpu * 1e3))
        if 100000 in sizes:
            out = subprocess.run([sys.executable, peer, "100000", "1024"], capture_output=True, text=True,
                                 check=True)
            scipy_s = float(out.stdout.strip().splitlines()[-1])
            print("scipy gaussian_kde, 100000 values on 1024 points (in memory): %.1f ms" % (scipy_s * 1e3))
            for form in ("integer ns", "%.18e"):
                print("ratio, 1e5 values, %s: %.0fx" % (form, scipy_s / results[(100000, form)]))


if __name__ == "__main__":
    main()
