"""The Python bindings (python/src) against independent references -- scipy and numpy here, the
committed scipy/numpy fixtures of tests/reference (with the C++ tests' tolerances) -- and against
the failslow tool on the same inputs; zero-copy input, error mapping, the GIL release."""

import gzip
import json
import os
import subprocess
import sys
import threading

import numpy as np
import pytest
import scipy.spatial.distance
import scipy.stats

import failslow
from conftest import DATA, REFERENCE, TORCH_GLOO


def fixture(name):
    with open(os.path.join(REFERENCE, name)) as f:
        return json.load(f)


def values_of(path):
    return np.loadtxt(path, dtype=np.float64)


def lognormal_sample(rng, n, modes=((20e3, 0.05, 0.6), (60e3, 0.08, 0.4))):
    pick = rng.choice(len(modes), size=n, p=[m[2] for m in modes])
    mu = np.log([m[0] for m in modes])[pick]
    sd = np.array([m[1] for m in modes])[pick]
    return np.exp(rng.normal(mu, sd))


# ---- statistics -------------------------------------------------------------------------------


def test_cluster_equals_the_tool(cli):
    path = os.path.join(DATA, "gemm_durations_ns.txt")
    tool = json.loads(subprocess.run([cli, "cluster", path], check=True, capture_output=True, text=True).stdout)
    ours = failslow.cluster(values_of(path))
    assert list(ours["boundaries"]) == pytest.approx(tool["boundaries"], rel=1e-12)
    assert ours["bandwidth"] == pytest.approx(tool["bandwidth"], rel=1e-12)
    assert ours["used"] == tool["used"]
    assert len(ours["clusters"]) == len(tool["clusters"]) == 2
    for a, b in zip(ours["clusters"], tool["clusters"]):
        for key in ("count", "min", "max", "p50", "p99"):
            assert a[key] == pytest.approx(b[key], rel=1e-12)
        assert a["lognormal"]["sigma"] == pytest.approx(b["lognormal"]["sigma"], rel=1e-12)


def test_cluster_finds_two_modes_and_labels_every_value():
    x = lognormal_sample(np.random.default_rng(1), 4000)
    x[:3] = [np.nan, -1.0, 0.0]
    c = failslow.cluster(x, labels=True)
    assert len(c["boundaries"]) == 1
    assert 20e3 < c["boundaries"][0] < 60e3
    assert c["skipped"] == {"nonfinite": 1, "nonpositive": 2}
    assert list(c["labels"][:3]) == [-1, -1, -1]
    assert np.array_equal(c["labels"][3:], (x[3:] >= c["boundaries"][0]).astype(np.int64))
    assert sum(k["count"] for k in c["clusters"]) == len(x) - 3


def test_exact_kde_equals_scipy_fixture():
    for case in fixture("stats/kde.json")["cases"]:
        grid = np.array(case["grid"])
        expected = np.array(case["density"])
        f = failslow.kde(np.array(case["x"]), case["bandwidth"], grid[0], grid[-1], len(grid),
                         weights=None if case["weights"] is None else np.array(case["weights"]))
        np.testing.assert_allclose(f, expected, rtol=1e-10, atol=1e-14 * expected.max(), err_msg=case["name"])


def test_exact_kde_equals_scipy_gaussian_kde():
    x = np.random.default_rng(2).normal(size=300)
    kde = scipy.stats.gaussian_kde(x)
    h = float(np.sqrt(kde.covariance[0, 0]))
    grid = np.linspace(-4, 4, 257)
    np.testing.assert_allclose(failslow.kde(x, h, -4, 4, 257), kde(grid), rtol=1e-10, atol=1e-14)
    binned = failslow.kde(x, h, -4, 4, 257, method="binned")
    assert np.max(np.abs(binned - kde(grid))) <= 0.05 * ((8 / 256) / h) ** 2 * kde(grid).max()


def test_density_in_linear_scale():
    x = np.random.default_rng(3).normal(10, 2, size=1000)
    d = failslow.density(x, scale="linear", bandwidth="scott")
    assert d["bandwidth"] == pytest.approx(np.std(x, ddof=1) * len(x) ** -0.2, rel=1e-12)
    assert d["used"] == 1000
    assert np.trapz(d["density"], d["grid"]) == pytest.approx(1.0, abs=1e-6)


def test_w1_equals_scipy_fixture_and_scipy():
    for case in fixture("stats/wasserstein.json")["cases"]:
        u, v = np.array(case["u"]), np.array(case["v"])
        uw = None if case["u_weights"] is None else np.array(case["u_weights"])
        vw = None if case["v_weights"] is None else np.array(case["v_weights"])
        got = failslow.w1(u, v, u_weights=uw, v_weights=vw)
        assert got == pytest.approx(case["w1"], rel=1e-9, abs=1e-12 * (1 + abs(case["w1"]))), case["name"]
        if uw is None and vw is None:
            assert failslow.w1(np.sort(u), np.sort(v), sorted=True) == pytest.approx(case["w1"], rel=1e-9)
    rng = np.random.default_rng(4)
    u, v = rng.lognormal(10, 0.3, 5000), rng.lognormal(10.1, 0.2, 3000)
    assert failslow.w1(u, v) == pytest.approx(scipy.stats.wasserstein_distance(u, v), rel=1e-9)


def test_w1_matrix_equals_scipy():
    rng = np.random.default_rng(5)
    sets = [rng.lognormal(10 + 0.01 * i, 0.2, 200 + 10 * i) for i in range(12)]
    d = failslow.w1_matrix(sets, threads=2)
    ref = np.array([[scipy.stats.wasserstein_distance(a, b) for b in sets] for a in sets])
    np.testing.assert_allclose(d, ref, rtol=1e-9, atol=1e-12)
    q = failslow.quantile_vectors(sets, k=64)
    assert q.shape == (12, 64)
    sorted0 = np.sort(sets[0])
    expected_q0 = sorted0[np.minimum((np.arange(64) + 0.5) / 64 * len(sorted0), len(sorted0) - 1).astype(int)]
    assert np.all(np.diff(q[0]) >= 0) and q[0][0] >= sorted0[0] and q[0][-1] <= sorted0[-1]
    assert np.max(np.abs(q[0] - expected_q0)) <= (sorted0[-1] - sorted0[0])
    dq = failslow.w1_matrix(q, threads=2)
    np.testing.assert_allclose(dq, scipy.spatial.distance.cdist(q, q, "cityblock") / 64, rtol=1e-12, atol=1e-9)
    spread = np.array([[(a.max() - a.min()) + (b.max() - b.min()) for b in sets] for a in sets])
    assert np.all(np.abs(dq - ref) <= spread / 64)


def test_lognormal_reconstruction_and_mixtures_equal_scipy_fixture():
    comp = failslow.reconstruct_lognormal({"count": 100, "p50": 20e3, "p99": 30e3, "min": 15e3, "max": 31e3})
    assert comp["mu"] == pytest.approx(np.log(20e3), rel=1e-15)
    assert comp["sigma"] == pytest.approx(np.log(1.5) / scipy.stats.norm.ppf(0.99), rel=1e-14)
    assert (comp["lo"], comp["hi"]) == (15e3, 31e3)
    fx = fixture("stats/lognormal.json")
    for c in fx["single"]:
        m = failslow.LognormalMixture([{"mu": c["mu"], "sigma": c["sigma"]}])
        np.testing.assert_allclose(m.cdf(np.array(c["x"])), c["cdf"], rtol=1e-13, atol=1e-300)
        np.testing.assert_allclose(m.quantile(np.array(c["p"])), c["quantile"], rtol=1e-13)
    mixtures = {}
    for c in fx["mixtures"]:
        m = failslow.LognormalMixture(c["components"], truncated=c["truncated"])
        mixtures[c["name"]] = m
        np.testing.assert_allclose(m.cdf(np.array(c["x"])), c["cdf"], rtol=1e-12, atol=1e-15, err_msg=c["name"])
        np.testing.assert_allclose(m.quantile(np.array(c["p"])), c["quantile"], rtol=1e-12, err_msg=c["name"])
    for pair in fx["mixture_pairs"]:
        a = failslow.LognormalMixture(pair["a"]["components"], truncated=pair["a"]["truncated"])
        b = failslow.LognormalMixture(pair["b"]["components"], truncated=pair["b"]["truncated"])
        scale = float(a.quantile(np.array([0.5]))[0])
        assert a.w1(b) == pytest.approx(pair["w1"], rel=1e-8, abs=1e-12 * scale), pair["name"]
    with pytest.raises(ValueError):
        next(iter(mixtures.values())).quantile(np.array([1.5]))


def test_mixture_from_clusters_of_a_clustering():
    x = lognormal_sample(np.random.default_rng(6), 20000)
    c = failslow.cluster(x)
    m = failslow.LognormalMixture.from_clusters(c["clusters"])
    assert [k["mu"] for k in m.components] == pytest.approx([k["lognormal"]["mu"] for k in c["clusters"]])
    q = m.quantile_vector(256)
    assert failslow.w1(np.sort(x), q, sorted=True) / np.mean(x) < 0.01  # the reconstruction is close


# ---- detectors --------------------------------------------------------------------------------


def test_ewma_equals_its_recursion():
    rng = np.random.default_rng(7)
    x = np.concatenate([rng.normal(100, 2, 200), rng.normal(104, 2, 50)])
    lam, L, mu, sigma = 0.2, 3.0, 100.0, 2.0
    r = failslow.ewma(x, lam=lam, L=L, baseline="known", mu=mu, sigma=sigma, trend_run=0)
    z = np.empty_like(x)
    prev = mu
    for i, v in enumerate(x):
        prev = lam * v + (1 - lam) * prev
        z[i] = prev
    np.testing.assert_allclose(r["z"], z, rtol=1e-12)
    width = L * sigma * np.sqrt(lam / (2 - lam))
    np.testing.assert_allclose(r["ucl"], mu + width, rtol=1e-15)
    alarm = r["states"].index("alarm")
    assert np.array_equal(r["state"] == alarm, (z > mu + width) | (z < mu - width))
    assert r["alarms"] == int(np.sum(r["state"] == alarm)) > 0
    assert np.argmax(r["state"] == alarm) >= 200


def test_pelt_equals_numpy_fixture():
    for case in fixture("detect/changepoint.json")["cases"]:
        penalty = case["beta"] if case["penalty"] == "fixed" else case["penalty"]
        r = failslow.pelt(np.array(case["y"]), model=case["model"], penalty=penalty,
                          min_segment=case["min_segment"], sigma=case["sigma"],
                          variance_floor=case["variance_floor"])
        assert list(r["changes"]) == case["changes"]
        assert r["penalty"] == pytest.approx(case["beta"], rel=1e-12)
        segs = r["segments"]
        assert segs["begin"][0] == 0 and segs["end"][-1] == len(case["y"])


def test_mahalanobis_equals_scipy_fixture():
    for case in fixture("detect/mahalanobis.json")["cases"]:
        x = np.array(case["x"], dtype=np.float64)
        if "sample_d2" in case:
            r = failslow.mahalanobis(x, estimator="sample")
            assert list(r["features"]) == case["features"]
            np.testing.assert_allclose(r["d2"], case["sample_d2"], rtol=1e-8)
        r = failslow.mahalanobis(x)
        np.testing.assert_allclose(r["d2"], case["lw_d2"], rtol=1e-8)
        np.testing.assert_allclose(r["p_value"], case["lw_p_values"], rtol=1e-7, atol=1e-300)
        assert r["shrinkage"] == pytest.approx(case["lw_shrinkage"], rel=1e-9)
        assert r["threshold"] == pytest.approx(case["threshold_adaptive"], rel=1e-12)
        assert list(r["outliers"]) == list(np.flatnonzero(r["distance"] > r["threshold"]))


def test_mahalanobis_sample_equals_scipy_live():
    rng = np.random.default_rng(8)
    x = rng.multivariate_normal([0, 0, 0], [[1, 0.5, 0], [0.5, 1, 0.2], [0, 0.2, 1]], size=60)
    vi = np.linalg.inv(np.cov(x, rowvar=False))
    mean = x.mean(axis=0)
    ref = np.array([scipy.spatial.distance.mahalanobis(row, mean, vi) ** 2 for row in x])
    np.testing.assert_allclose(failslow.mahalanobis(x, estimator="sample")["d2"], ref, rtol=1e-8)


def test_bh_equals_scipy_fixture():
    for case in fixture("detect/fdr.json")["cases"]:
        r = failslow.bh(np.array(case["p"]), q=case["q"], method=case["method"])
        np.testing.assert_allclose(r["adjusted"], case["adjusted"], rtol=1e-13, atol=1e-300)
        assert list(r["rejected"]) == case["rejected"]


# ---- readers ----------------------------------------------------------------------------------


def test_readers_give_structured_arrays_of_every_event():
    expected = fixture("../data/torch_gloo/expected.json")
    traces = failslow.read_traces(os.path.join(TORCH_GLOO, "straggler"), threads=2)
    assert [t.rank for t in traces] == [0, 1, 2, 3]
    assert failslow.event_dtype.itemsize == 40
    for t in traces:
        ref = expected["jobs"]["straggler"][str(t.rank)]
        assert t.rank_from == "file name"
        assert t.events.dtype == failslow.event_dtype
        assert not t.events.flags.writeable
        assert t.stats["accounted"]
        assert t.stats["events_seen"] == ref["events"]
        kinds = np.bincount(t.events["kind"], minlength=len(failslow.event_kinds))
        assert kinds[failslow.event_kinds.index("cpu_op")] == ref["kinds"]["cpu_op"]
        assert kinds[failslow.event_kinds.index("annotation")] == ref["kinds"]["annotation"]
        names = t.event_names()
        steps = sorted(int(n.split("#")[1]) for n in names if n.startswith("ProfilerStep#"))
        assert steps == list(range(12))
        assert np.all(t.events["end_ns"] >= t.events["start_ns"])
        assert np.all(t.events["rank"] == t.rank)


def test_kernel_table_reader(tmp_path):
    table = tmp_path / "kernels.csv"
    table.write_text("rank,step,name,start_ns,duration_ns\n0,0,gemm,100,50\n1,0,gemm,100,70\n1,0,nccl_allreduce,200,30\n")
    traces = failslow.read_traces(str(table))
    assert [(t.rank, len(t)) for t in traces] == [(0, 1), (1, 2)]
    assert list(traces[1].events["end_ns"] - traces[1].events["start_ns"]) == [70, 30]
    assert traces[1].rank_from == "table"


def test_to_dataframe():
    pd = pytest.importorskip("pandas", reason="pandas is not installed: Trace.to_dataframe is not checked")
    t = failslow.read_trace(os.path.join(TORCH_GLOO, "healthy", "rank-1.pt.trace.json.gz"))
    df = t.to_dataframe()
    assert isinstance(df, pd.DataFrame) and len(df) == len(t)
    assert list(df["name"].astype(str)) == list(t.event_names())


def test_parse_error_names_the_file_and_offset(tmp_path):
    bad = tmp_path / "rank-0.json"
    bad.write_text('{"traceEvents": [{"ph": "X", "name": "k", "ts": 1, "dur": ]}')
    with pytest.raises(failslow.ParseError) as e:
        failslow.read_trace(bad)
    assert e.value.file == str(bad)
    assert isinstance(e.value.offset, int) and 0 < e.value.offset <= bad.stat().st_size
    assert isinstance(e.value, ValueError) and isinstance(e.value, failslow.Error)
    assert str(bad) in str(e.value)
    with pytest.raises(failslow.ParseError) as e:
        failslow.decode_fsum(b"not an fsum file")
    assert e.value.offset == 0


def test_errors_map_to_value_error():
    with pytest.raises(ValueError, match="no usable value"):
        failslow.cluster(np.array([np.nan, -1.0]))
    with pytest.raises(ValueError, match="scale must be one of 'log', 'linear'"):
        failslow.cluster(np.ones(10), scale="cubic")
    with pytest.raises(ValueError):
        failslow.w1(np.array([]), np.array([1.0]))
    with pytest.raises(ValueError):
        failslow.bh(np.array([0.5, 1.5]))
    with pytest.raises(ValueError):
        failslow.w1_matrix(np.ones((0, 4)))
    with pytest.raises(ValueError):
        failslow.read_traces("/no/such/folder")
    with pytest.raises(ValueError, match="one-dimensional"):
        failslow.pelt(np.ones((2, 2)))


# ---- compressor, codec, diagnosis -------------------------------------------------------------


def test_compressor_windows_and_fsum_roundtrip():
    rng = np.random.default_rng(9)
    comp = failslow.Compressor(rank=3)
    total = 0
    for step in range(4):
        d = np.concatenate([rng.lognormal(np.log(20e3), 0.03, 300), rng.lognormal(np.log(60e3), 0.03, 100)])
        d = d.astype(np.int64)
        starts = step * 10_000_000 + np.arange(len(d), dtype=np.int64) * 1000
        assert comp.add_events(["gemm"] * len(d), starts, d) == len(d)
        assert comp.add("nccl_allreduce", int(starts[-1]) + 1000, 5000)
        assert not comp.add("gemm", 0, -5)  # a negative duration: counted, not added
        for t in starts[::2]:  # the host's launch calls, 2 us apart
            assert comp.add_launch(int(t))
        total += int(d.sum())
        (w,) = comp.close_window(int(starts[-1]) + 10_000)
        gemm = next(k for k in w["kernels"] if k["name"] == "gemm")
        assert gemm["count"] == len(d) and gemm["total_ns"] == pytest.approx(d.sum(), rel=1e-12)
        assert len(gemm["clusters"]) == 2
        assert w["skipped"]["invalid_duration"] == 1
        assert w["launch"] == {"launches": 200, "median_interval_ns": 2000.0}
    with pytest.raises(ValueError, match="was not given by key"):
        comp.add(99, 0, 10)
    gemm_key = comp.key("gemm")
    assert comp.add_events(np.array([gemm_key], dtype=np.uint32), np.array([0]), np.array([20_000])) == 1
    comp.close_window()
    decoded = failslow.decode_fsum(comp.fsum())
    assert decoded["damaged"] == [] and len(decoded["windows"]) == 5
    assert sorted(decoded["names"].values()) == ["gemm", "nccl_allreduce"]
    for a, b in zip(comp.windows, decoded["windows"]):
        ga = next(k for k in a["kernels"] if k["name"] == "gemm")
        gb = next(k for k in b["kernels"] if k["name"] == "gemm")
        assert ga["count"] == gb["count"]
        assert b["launch"]["launches"] == a["launch"]["launches"]
        assert b["launch"]["median_interval_ns"] == pytest.approx(a["launch"]["median_interval_ns"], rel=2 ** -8)
        for ca, cb in zip(ga["clusters"], gb["clusters"]):
            assert cb["p50"] == pytest.approx(ca["p50"], rel=2 ** -8)  # 7-bit log quantisation


def test_diagnose_equals_the_tool_on_real_traces(cli):
    for job in ("straggler", "healthy"):
        path = os.path.join(TORCH_GLOO, job)
        tool = json.loads(subprocess.run([cli, "diagnose", path, "--format", "json"], check=True,
                                         capture_output=True, text=True).stdout)
        ours = failslow.diagnose(path)
        assert ours == tool, job
    straggler = failslow.diagnose(os.path.join(TORCH_GLOO, "straggler"))
    l2 = [f for f in straggler["findings"] if f["level"] == "L2"]
    assert [(f["ranks"], f["phase"]) for f in l2] == [([2], "forward")]
    assert straggler["schema"] == "failslow.report/1"


def test_python_m_failslow_diagnose_prints_what_the_tool_prints(cli):
    path = os.path.join(TORCH_GLOO, "straggler")
    for fmt in ("text", "json"):
        tool = subprocess.run([cli, "diagnose", path, "--format", fmt], check=True, capture_output=True, text=True)
        ours = subprocess.run([sys.executable, "-m", "failslow", "diagnose", path, "--format", fmt], check=True,
                              capture_output=True, text=True)
        assert ours.stdout == tool.stdout, fmt
    bad = subprocess.run([sys.executable, "-m", "failslow", "diagnose", "/no/such/path"], capture_output=True,
                         text=True)
    assert bad.returncode == 2 and bad.stderr.startswith("failslow: ")


def test_diagnose_from_fsum_bytes_and_rank_shares():
    path = os.path.join(TORCH_GLOO, "straggler")
    shares = [failslow.summarize_rank(os.path.join(path, f"rank-{r}.pt.trace.json.gz"), r) for r in range(4)]
    for s in shares:
        assert s["breakdown"]["from_host"] and len(s["breakdown"]["step"]) == 12
        assert s["fsum"][:4] == b"FSUM"
    from_shares = failslow.diagnose(shares)
    from_traces = failslow.diagnose(path)
    key = [(f["kind"], f["ranks"], f["phase"], f["first_step"]) for f in from_traces["findings"] if f["level"] == "L2"]
    assert [(f["kind"], f["ranks"], f["phase"], f["first_step"]) for f in from_shares["findings"]
            if f["level"] == "L2"] == key
    text = failslow.diagnose(shares, format="text", topology={"dp": 4})
    assert "rank 2" in text
    # Profiled without prof.step(): the steps are the iterations between optimizer steps.
    nosched = os.path.join(TORCH_GLOO, "no_schedule")
    for r in range(4):
        s = failslow.summarize_rank(os.path.join(nosched, f"rank-{r}.pt.trace.json.gz"), r)
        assert s["steps_inferred_from"] == "Optimizer.step#SGD.step"
        assert list(s["breakdown"]["step"]) == list(range(12))
    assert shares[0]["steps_inferred_from"] == ""
    with pytest.raises(ValueError, match="outside"):
        failslow.diagnose(shares, topology="dp=2")
    # .fsum bytes: a CPU-only job has no GPU windows, so the diagnosis says there is nothing to compare
    report = failslow.diagnose([s["fsum"] for s in shares])
    assert report["schema"] == "failslow.report/1"


# ---- zero copy and the GIL --------------------------------------------------------------------


def test_contiguous_float64_input_is_read_in_place():
    x = np.random.default_rng(10).normal(size=1000)
    assert failslow._core._data_address(x) == x.ctypes.data
    view = x[100:200]  # contiguous view: in place too
    assert failslow._core._data_address(view) == view.ctypes.data
    for converted in (x.astype(np.float32), x[::2], x.astype(np.float64).reshape(10, 100).T):
        assert failslow._core._data_address(converted) != converted.ctypes.data


def test_results_own_the_cpp_memory():
    rng = np.random.default_rng(11)
    d = failslow.w1_matrix(rng.normal(size=(20, 16)))
    assert not d.flags.owndata and type(d.base).__name__ == "PyCapsule"  # moved out of C++, not copied
    c = failslow.cluster(lognormal_sample(rng, 2000))
    assert len(c["boundaries"]) == 1 and type(c["boundaries"].base).__name__ == "PyCapsule"


def test_the_gil_is_released_while_computing():
    """Two threads in w1_matrix at once. With the switch interval at an hour, a thread waiting for
    the GIL gets it only when the holder releases it: the second thread starts while the first
    is still computing only if the first released it."""
    q = np.random.default_rng(12).normal(size=(1500, 256))
    state = {"a_done": False, "a_running_when_b_started": None}
    a_started = threading.Event()

    def a():
        a_started.set()
        failslow.w1_matrix(q)
        state["a_done"] = True

    def b():
        state["a_running_when_b_started"] = not state["a_done"]
        failslow.w1_matrix(q)

    old = sys.getswitchinterval()
    sys.setswitchinterval(3600)
    try:
        ta = threading.Thread(target=a)
        ta.start()
        a_started.wait()
        tb = threading.Thread(target=b)
        tb.start()
        ta.join()
        tb.join()
    finally:
        sys.setswitchinterval(old)
    assert state["a_running_when_b_started"] is True


def test_kineto_traces_of_a_simulated_job(cli, tmp_path):
    """The Kineto form (what torch.profiler writes with Kineto, GPU kernels and NCCL collectives,
    distributedInfo): traces the tool's simulator writes, read and diagnosed from Python as the
    tool does, and the same job compressed in Python diagnoses from its .fsum bytes."""
    out = tmp_path / "sim"
    subprocess.run([cli, "simulate", "--tp", "2", "--pp", "2", "--dp", "4", "--steps", "12", "--seed", "2",
                    "--fault-rank", "5", "--out", str(out)], check=True, capture_output=True)
    traces = failslow.read_traces(str(out), threads=2)
    assert [t.rank for t in traces] == list(range(16))
    kernel = failslow.event_kinds.index("kernel")
    for t in traces:
        assert t.rank_from == "distributedInfo" and t.distributed["world_size"] == 16
        assert t.stats["accounted"] and np.any(t.events["kind"] == kernel)
    tool = json.loads(subprocess.run([cli, "diagnose", str(out), "--format", "json"], check=True,
                                     capture_output=True, text=True).stdout)
    ours = failslow.diagnose(str(out))
    assert ours == tool
    assert any(f["level"] == "L2" and f["ranks"] == [5] for f in ours["findings"]), [f["summary"] for f in
                                                                                       ours["findings"]]
    shares = [failslow.summarize_rank(os.path.join(out, f), -1) for f in sorted(os.listdir(out))
              if f.endswith(".json") and f != "truth.json"]
    assert all(s["breakdown"]["device_events"] > 0 and not s["breakdown"]["from_host"] for s in shares)
    from_fsum = failslow.diagnose([s["fsum"] for s in shares], topology="tp=2,pp=2,dp=4")
    assert any(f["level"] == "L2" and f["ranks"] == [5] for f in from_fsum["findings"])
    from_shares = failslow.diagnose(shares, topology="tp=2,pp=2,dp=4")
    assert any(f["level"] == "L2" and f["ranks"] == [5] for f in from_shares["findings"])
