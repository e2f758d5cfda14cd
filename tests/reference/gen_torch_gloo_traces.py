#!/usr/bin/env python3
"""Real torch.distributed traces for the plain Chrome-trace reader and the CPU-side job model.

What it runs: a data-parallel job of WORLD = 4 processes on the CPU (torch.distributed, gloo
backend, 127.0.0.1), each training the same MLP (256 -> 512 -> 512 -> 256, batch 32, SGD) on
its own batch, with the four phases of a training step in record_function scopes:

    forward     the model's forward pass and an MSE loss
    backward    loss.backward()
    grad_sync   one dist.all_reduce per gradient (gloo, blocking), then / WORLD
    optimizer   SGD step and zero_grad

profiled by torch.profiler (CPU activity only; Debian's python3-torch is built without Kineto, so
export_chrome_trace writes the legacy form: a bare JSON array of "X" events without "cat",
pid "CPU functions", steps as ProfilerStep#N ops). One file per rank, gzipped:

    tests/data/torch_gloo/healthy/rank-R.pt.trace.json.gz     every rank does the same work
    tests/data/torch_gloo/straggler/rank-R.pt.trace.json.gz   from step SLOW_FROM on, rank
        SLOW_RANK runs EXTRA_MATMULS extra GEMMs inside its forward scope (twice the forward's
        multiply-adds; measured, its forward takes about 1.5x its peers', since the peers block
        in all_reduce and leave it the cores): a fail-slow straggler in compute that starts
        mid-run; its peers then wait for it inside all_reduce
    tests/data/torch_gloo/expected.json   the numbers the C++ tests check, computed here from
    tests/data/torch_gloo/pause/rank-R.pt.trace.json.gz   rank PAUSE_RANK sleeps PAUSE_MS (time.sleep,
        outside every operator and scope) before its forward in every PAUSE_EVERY-th iteration: a
        host pause that recurs on one rank (a periodic checkpoint or logging thread, a cron job on
        one node); its peers wait for it in all_reduce, the job's step grows by about the pause
    tests/data/torch_gloo/ddp_sleep/rank-R.pt.trace.json.gz   the model wrapped in
        DistributedDataParallel, a plain loop (no record_function scopes: DDP's own annotations,
        its bucketed asynchronous all_reduce inside backward), a fresh batch per step; from step
        SLOW_FROM on, rank SLOW_RANK sleeps DDP_SLEEP_MS before each forward (a data loader that
        cannot keep up): a host-bound straggler; the other hosts' idle is ~1 ms a step with
        4-10 ms hiccups in a fifth of the steps (4 processes on 2 cores), which are no stalls
    tests/data/torch_gloo/ddp_healthy/rank-R.pt.trace.json.gz   the same DDP job, every rank alike:
        per-step operator times vary 10-30 % as 4 processes share 2 cores
    tests/data/torch_gloo/ddp_gemm/rank-R.pt.trace.json.gz   the same DDP job over 20 steps; from
        step SLOW_FROM on, rank SLOW_RANK runs DDP_EXTRA_MATMULS extra GEMMs after its forward
        (outside DDP's annotations; about 1.4x its peers' compute per step): a compute straggler
        whose steps the scheduling noise keeps under 3.5 robust spreads in all but a few
    tests/data/torch_gloo/no_schedule/rank-R.pt.trace.json.gz   the straggler job profiled as many
        users do, with neither a schedule nor prof.step() (`with profile(...): for ...: step()`):
        no ProfilerStep#N at all; its iterations are told by the optimizer's own annotation
        (Optimizer.step#SGD.step), iteration i is step i, rank SLOW_RANK slow from step SLOW_FROM
        the written files with Python's json module (independently of the C++ code)

How the committed files were made (the torch version is also stored in expected.json):
    apt-get install -y python3-torch          # Debian bookworm: torch 1.13.1 (CPU, no Kineto)
    nice -n -10 /usr/bin/python3 tests/reference/gen_torch_gloo_traces.py [JOB ...]
(JOB: healthy, straggler, pause, ddp_sleep, ddp_healthy, ddp_gemm; default all; expected.json is always rewritten from the files)
on a 2-core machine shared with compiler jobs (nice 10): the negative nice keeps their load out of
the timings, as far as it can; 4 ranks on 2 cores still share them. The timings are real measurements, so a rerun writes other numbers (the
tests read expected.json, which always matches the files beside it).

Reference definitions (docs/diagnosis.md, "Traces without GPU activity"), per rank and step k
with CPU range W_k = [ts, ts + dur) of ProfilerStep#k:
    ops            complete events that are not annotations (every name with "::", autograd
                   nodes "...Backward<N>", collectives); annotations: ProfilerStep#N and user
                   scopes (record_function: here forward, backward, grad_sync, optimizer)
    collectives    ops whose name is a torch.distributed collective (c10d::*, gloo:*, nccl:*,
                   record_param_comms, *allreduce*, ...)
    communication  |union(collectives) & W_k|
    compute        |union(other ops) & W_k - union(collectives)|
    idle           max(0, period - |union(all ops) & W_k|)
    period         end(W_k) - end(W_{k-1}) for consecutive steps, else |W_k|
    phase P        |union(other ops) & union(scopes named P) & W_k - union(collectives)|
"""

import datetime
import gzip
import json
import os
import re
import shutil
import sys
import tempfile
import time

WORLD = 4
STEPS = 12  # profiled steps, ProfilerStep#0 .. #11
WARMUP = 3  # unprofiled iterations before
SLOW_RANK = 2
SLOW_FROM = 4  # first slow iteration of the straggler jobs: ProfilerStep#3 (step #N is iteration N + 1)
EXTRA_MATMULS = 4  # extra (32 x 256) @ (256 x 512) products in the straggler's forward: each is
# the first layer's GEMM, a quarter of the forward's multiply-adds
PAUSE_RANK = 1
PAUSE_MS = 80  # about the step time of this job on a 2-core machine
PAUSE_EVERY = 4  # iterations i with i % PAUSE_EVERY == 2: ProfilerStep#1, #5, #9
DDP_SLEEP_MS = 20
DDP_EXTRA_MATMULS = 8  # ddp_gemm: extra (32 x 256) @ (256 x 512) products after rank 2's forward
JOBS = ("healthy", "straggler", "pause", "ddp_sleep", "ddp_healthy", "ddp_gemm", "no_schedule")
JOB_STEPS = {"ddp_gemm": 20}  # profiled steps where not STEPS
HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.normpath(os.path.join(HERE, "..", "data", "torch_gloo"))
PHASES = ["forward", "backward", "grad_sync", "optimizer"]


def worker(rank, job, port, outdir, hooks=None):
    """One rank of the job. hooks: None (export the plain trace into outdir, as the committed
    files), or the name of a module with trace_handler(rank, outdir), the profiler's
    on_trace_ready, and after_profile(rank, outdir), called by every rank after the profiled
    steps; its STEPS, SLOW_FROM and EXTRA_MATMULS, where it has them, replace this module's
    (tests/python/torch_job_hooks.py: failslow.torch's handler and gather_and_diagnose)."""
    import importlib

    import torch
    import torch.distributed as dist
    from torch.profiler import ProfilerActivity, profile, record_function, schedule

    torch.set_num_threads(1)
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=WORLD)
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512), torch.nn.ReLU(),
        torch.nn.Linear(512, 256))
    ddp = job.startswith("ddp")
    if ddp:
        model = torch.nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    gen = torch.Generator().manual_seed(1000 + rank)
    x = torch.randn(32, 256, generator=gen)
    y = torch.randn(32, 256, generator=gen)
    extra = torch.randn(256, 512, generator=gen)

    hook = importlib.import_module(hooks) if hooks else None
    steps = getattr(hook, "STEPS", JOB_STEPS.get(job, STEPS))
    slow_from = getattr(hook, "SLOW_FROM", SLOW_FROM)
    extra_matmuls = getattr(hook, "EXTRA_MATMULS", EXTRA_MATMULS)

    def ddp_step(i, slow):
        xb = torch.randn(32, 256, generator=gen)
        yb = torch.randn(32, 256, generator=gen)
        if slow and job == "ddp_sleep":
            time.sleep(DDP_SLEEP_MS / 1000)
        out = model(xb)
        if slow and job == "ddp_gemm":
            for _ in range(DDP_EXTRA_MATMULS):
                torch.mm(xb, extra)
        loss = torch.nn.functional.mse_loss(out, yb)
        opt.zero_grad()
        loss.backward()
        opt.step()

    def step(i, slow, pause=False):
        if ddp:
            return ddp_step(i, slow)
        if pause:
            time.sleep(PAUSE_MS / 1000)
        with record_function("forward"):
            out = model(x)
            if slow:
                for _ in range(extra_matmuls):
                    torch.mm(x, extra)
            loss = torch.nn.functional.mse_loss(out, y)
        with record_function("backward"):
            loss.backward()
        with record_function("grad_sync"):
            for p in model.parameters():
                dist.all_reduce(p.grad)
                p.grad.div_(WORLD)
        with record_function("optimizer"):
            opt.step()
            opt.zero_grad()

    for i in range(WARMUP):
        step(i, False)
    dist.barrier()
    # ProfilerStep#N is recorded only with a schedule; torch 1.13 keeps the warmup step (#0) and
    # drops the last active one (its range closes after the profiler stopped): STEPS + 1
    # iterations give ProfilerStep#0 .. #STEPS-1.
    if job == "no_schedule":  # no schedule, no prof.step(): every iteration profiled, no ProfilerStep#N
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            for i in range(steps):
                step(i, rank == SLOW_RANK and i >= slow_from)
    else:
        with profile(activities=[ProfilerActivity.CPU],
                     schedule=schedule(wait=0, warmup=1, active=steps, repeat=1),
                     on_trace_ready=hook.trace_handler(rank, outdir) if hook else None) as prof:
            for i in range(steps + 1):
                step(i, job in ("straggler", "ddp_sleep", "ddp_gemm") and rank == SLOW_RANK and i >= slow_from,
                     job == "pause" and rank == PAUSE_RANK and i % PAUSE_EVERY == 2)
                prof.step()
    dist.barrier()
    if hook:
        hook.after_profile(rank, outdir)
    else:
        prof.export_chrome_trace(os.path.join(outdir, f"rank-{rank}.pt.trace.json"))
    dist.destroy_process_group()


def run_job(job, port):
    import torch.multiprocessing as mp

    tmp = tempfile.mkdtemp(prefix=f"torch_gloo_{job}_")
    mp.spawn(worker, args=(job, port, tmp), nprocs=WORLD, join=True)
    dest = os.path.join(OUT, job)
    if os.path.isdir(dest):
        shutil.rmtree(dest)
    os.makedirs(dest)
    for r in range(WORLD):
        src = os.path.join(tmp, f"rank-{r}.pt.trace.json")
        with open(src, "rb") as f:
            data = f.read()
        # mtime 0: the same trace gives the same bytes
        with open(os.path.join(dest, f"rank-{r}.pt.trace.json.gz"), "wb") as raw:
            with gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=9, mtime=0) as gz:
                gz.write(data)
    shutil.rmtree(tmp)


# ---- the reference numbers, from the files, with the json module ------------------------------

STEP_RE = re.compile(r"^ProfilerStep#(\d+)$")
OPTIMIZER_STEP_RE = re.compile(r"^Optimizer\.step#.+\.step$")
COLLECTIVE_PREFIXES = ("c10d::", "gloo:", "nccl:", "ucc:", "mpi:")
COLLECTIVE_WORDS = ("allreduce", "all_reduce", "allgather", "all_gather", "reduce_scatter", "reducescatter",
                    "alltoall", "all_to_all", "nccl")
AUTOGRAD_NODE = re.compile(r"^[A-Za-z0-9_]*Backward\d*$")


def is_collective(name):
    low = name.lower()
    return (name.startswith(COLLECTIVE_PREFIXES) or name == "record_param_comms" or
            any(w in low for w in COLLECTIVE_WORDS))


def is_op(name):
    return "::" in name or is_collective(name) or bool(AUTOGRAD_NODE.match(name))


def union(intervals):
    out = []
    for a, b in sorted(intervals):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


def intersect(u, v):
    out, i, j = [], 0, 0
    while i < len(u) and j < len(v):
        a, b = max(u[i][0], v[j][0]), min(u[i][1], v[j][1])
        if a < b:
            out.append([a, b])
        if u[i][1] < v[j][1]:
            i += 1
        else:
            j += 1
    return out


def subtract(u, v):
    out = []
    for a, b in u:
        cur = a
        for c, d in v:
            if d <= cur or c >= b:
                continue
            if c > cur:
                out.append([cur, c])
            cur = max(cur, d)
        if cur < b:
            out.append([cur, b])
    return out


def length(u):
    return sum(b - a for a, b in u)


def reference(path):
    with gzip.open(path, "rt") as f:
        events = json.load(f)
    steps, ops, colls, scopes = [], [], [], {}
    kinds = {"annotation": 0, "cpu_op": 0}
    for e in events:
        if e.get("ph") != "X":
            continue
        name = e["name"]
        iv = [int(e["ts"]) * 1000, (int(e["ts"]) + int(e["dur"])) * 1000]  # ns
        m = STEP_RE.match(name)
        if m:
            steps.append((int(m.group(1)), iv))
            kinds["annotation"] += 1
        elif is_op(name):
            (colls if is_collective(name) else ops).append(iv)
            kinds["cpu_op"] += 1
        else:
            scopes.setdefault(name, []).append(iv)
            kinds["annotation"] += 1
    steps.sort(key=lambda s: s[1][0])
    if not steps:
        # No ProfilerStep#N (profiled without prof.step()): iterations end where the most frequent
        # optimizer's "Optimizer.step#<class>.step" ends; the first starts at the first event.
        marks = {}
        for e in events:
            if e.get("ph") == "X" and OPTIMIZER_STEP_RE.match(e["name"]):
                marks.setdefault(e["name"], []).append((int(e["ts"]) + int(e["dur"])) * 1000)
        if marks:
            name = max(sorted(marks), key=lambda n: len(marks[n]))
            start = min(int(e["ts"]) * 1000 for e in events if e.get("ph") == "X")
            for end in sorted(set(marks[name])):
                if end > start:
                    steps.append((len(steps), [start, end]))
                    start = end
    u_coll = union(colls)
    u_compute = subtract(union(ops), u_coll)
    u_all = union(ops + colls)
    rows = []
    for k, (number, w) in enumerate(steps):
        period = w[1] - w[0]
        if k > 0 and steps[k - 1][0] + 1 == number and steps[k - 1][1][1] < w[1]:
            period = w[1] - steps[k - 1][1][1]
        busy = length(intersect(u_all, [w]))
        row = {
            "step": number,
            "period_ns": period,
            "compute_ns": length(intersect(u_compute, [w])),
            "communication_ns": length(intersect(u_coll, [w])),
            "idle_ns": max(0, period - busy),
            "phases": {},
        }
        for p in sorted(scopes):  # user scopes, and the annotations torch's own modules record
            row["phases"][p] = length(intersect(intersect(u_compute, union(scopes.get(p, []))), [w]))
        rows.append(row)
    return {"events": len(events), "kinds": kinds, "steps": rows}


def main():
    import torch

    if "--reference-only" not in sys.argv:
        asked = [a for a in sys.argv[1:] if not a.startswith("--")] or list(JOBS)
        for k, job in enumerate(JOBS):
            if job in asked:
                run_job(job, 29611 + 2 * k)
    expected = {
        "generator": "tests/reference/gen_torch_gloo_traces.py",
        "torch": torch.__version__,
        "made": datetime.date.today().isoformat(),
        "world_size": WORLD,
        "slow_rank": SLOW_RANK,
        "slow_from_step": SLOW_FROM,
        "pause_rank": PAUSE_RANK,
        "pause_ms": PAUSE_MS,
        "ddp_sleep_ms": DDP_SLEEP_MS,
        "pause_steps": [i - 1 for i in range(1, STEPS + 1) if i % PAUSE_EVERY == 2],
        "phases": PHASES,
        "jobs": {},
    }
    for job in JOBS:
        expected["jobs"][job] = {
            str(r): reference(os.path.join(OUT, job, f"rank-{r}.pt.trace.json.gz")) for r in range(WORLD)
        }
    with open(os.path.join(OUT, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1, sort_keys=True)
        f.write("\n")
    for job in JOBS:
        print(job)
        for r in range(WORLD):
            rows = expected["jobs"][job][str(r)]["steps"]
            fmt = " ".join(f"{row['phases'].get('forward', 0) / 1e6:5.1f}" for row in rows)
            com = " ".join(f"{row['communication_ns'] / 1e6:5.1f}" for row in rows)
            print(f"  rank {r} forward ms: {fmt}\n         comm ms:    {com}")


if __name__ == "__main__":
    main()
