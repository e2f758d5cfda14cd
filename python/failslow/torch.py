"""failslow.torch: fail-slow diagnosis of a torch.distributed job from inside the job.

    import failslow.torch
    handler = failslow.torch.trace_handler()            # one per process
    with torch.profiler.profile(schedule=..., on_trace_ready=handler) as prof:
        for batch in loader:
            train_step(batch)
            prof.step()
    report = failslow.torch.gather_and_diagnose()      # the report on rank 0, None elsewhere

trace_handler() returns a torch.profiler `on_trace_ready` callable: each time the profiler hands
over a trace, the handler writes it (export_chrome_trace), compresses it into the rank's share
(failslow.summarize_rank: the per-step breakdown -- period, compute, communication, memory, idle
and each record_function phase's compute, in ns -- and the .fsum window summaries of the GPU
activities, one window per ProfilerStep) and deletes the JSON, unless trace_dir asks to keep
it. A share is a few KB per step instead of the trace's MB.
gather_and_diagnose(group) gathers every rank's shares on `dst` with
torch.distributed.gather_object (any backend: gloo, nccl, mpi) and diagnoses them there
(failslow.diagnose of the shares: the job model from the breakdowns, L3 from the summaries where
the ranks had GPU activity; the layout from `topology`, else pure data parallelism).

Debian's python3-torch (1.13, CPU) has no Kineto: its traces are the plain Chrome-trace array of
CPU operators, and the diagnosis measures the steps on the host (docs/inputs.md). Needs torch;
`import failslow` alone does not import it.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from typing import Any, Dict, List, Optional, Union

import torch  # noqa: F401  (fails here, clearly, where torch is not installed)
import torch.distributed as dist

from . import diagnose as _diagnose
from . import summarize_rank

__all__ = ["TraceHandler", "trace_handler", "gather_and_diagnose"]

_latest: Optional["TraceHandler"] = None


class TraceHandler:
    """A torch.profiler on_trace_ready handler that keeps the rank's share, not its JSON.

    rank: the rank the shares are given (None: torch.distributed's rank when initialised, else 0);
    trace_dir: keep the written traces there as rank-R[.cycle-N].pt.trace.json (None: a temporary
    folder, removed after each trace). shares: one dict per trace handed over (summarize_rank).
    """

    def __init__(self, rank: Optional[int] = None, trace_dir: Optional[str] = None):
        self.rank = rank
        self.trace_dir = trace_dir
        self.shares: List[Dict[str, Any]] = []

    def _rank(self) -> int:
        if self.rank is not None:
            return self.rank
        return dist.get_rank() if dist.is_available() and dist.is_initialized() else 0

    def __call__(self, prof) -> None:
        rank = self._rank()
        name = f"rank-{rank}" + (f".cycle-{len(self.shares)}" if self.shares else "") + ".pt.trace.json"
        folder = self.trace_dir or tempfile.mkdtemp(prefix="failslow-trace-")
        path = os.path.join(folder, name)
        try:
            prof.export_chrome_trace(path)
            self.shares.append(summarize_rank(path, rank))
        finally:
            if self.trace_dir is None:
                shutil.rmtree(folder, ignore_errors=True)


def trace_handler(rank: Optional[int] = None, trace_dir: Optional[str] = None) -> TraceHandler:
    """A new TraceHandler; gather_and_diagnose() uses the latest one by default."""
    global _latest
    _latest = TraceHandler(rank, trace_dir)
    return _latest


def gather_and_diagnose(
    group=None,
    *,
    handler: Optional[TraceHandler] = None,
    dst: int = 0,
    topology: Union[None, str, Dict[str, int]] = None,
    format: str = "dict",
) -> Union[None, Dict[str, Any], str]:
    """Gathers every rank's shares on global rank `dst` over torch.distributed (a collective: every
    rank of `group` calls it) and returns the diagnosis there (failslow.diagnose's `format`);
    None on the other ranks."""
    h = handler or _latest
    if h is None:
        raise ValueError("gather_and_diagnose: no trace handler (pass the profiler on_trace_ready=trace_handler())")
    if not dist.is_available() or not dist.is_initialized():
        return _diagnose(h.shares, topology=topology, format=format) if h.shares else None
    me = dist.get_rank()
    gathered: Optional[List[Any]] = [None] * dist.get_world_size(group) if me == dst else None
    dist.gather_object(h.shares, gathered, dst=dst, group=group)
    if me != dst:
        return None
    shares = [s for rank_shares in gathered for s in rank_shares]
    if not shares:
        raise ValueError("gather_and_diagnose: no rank handed over a trace (did the profiler schedule finish?)")
    return _diagnose(shares, topology=topology, format=format)
