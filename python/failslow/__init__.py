"""failslow from Python: the statistics, detectors, readers, compressor and diagnosis of the C++
library failslow (header-only, C++17), compiled into failslow._core with pybind11.

Arrays: float64 C-contiguous numpy arrays are read in place (no copy; anything else is converted
once), results come back as numpy arrays that own the C++ memory (no copy either). The GIL is
released while the C++ code runs, so threads compute at once.

    import failslow
    failslow.w1(a, b)                         # exact Wasserstein-1, as scipy.stats.wasserstein_distance
    failslow.w1_matrix(failslow.quantile_vectors(samples), threads=2)
    failslow.cluster(durations_ns)            # KDE valley clusters, as `failslow cluster`
    traces = failslow.read_traces(["traces/"])  # events as structured arrays (failslow.event_dtype)
    report = failslow.diagnose("traces/")     # the report failslow.report/1 as a dict

Units: durations and times in integer nanoseconds where they come from traces; the statistics
keep the units of their input. Errors: ValueError for invalid arguments, failslow.ParseError
(file, offset, line, column) for malformed files, failslow.UnavailableError for a reader that was
not compiled in, failslow.Error for the rest. The `failslow.torch` helper (torch.profiler handler,
gather_and_diagnose over torch.distributed) is imported on its own: `import failslow.torch`.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Union

import numpy as np

from . import _core
from ._core import (
    Compressor,
    Error,
    LognormalMixture,
    ParseError,
    UnavailableError,
    bh,
    cluster,
    decode_fsum,
    density,
    event_dtype,
    event_kinds,
    ewma,
    kde,
    mahalanobis,
    pelt,
    quantile_vectors,
    reconstruct_lognormal,
    summarize_rank,
    w1,
    w1_matrix,
)

__version__ = "0.1.0"

__all__ = [
    "Compressor",
    "Error",
    "LognormalMixture",
    "ParseError",
    "Trace",
    "UnavailableError",
    "bh",
    "cluster",
    "decode_fsum",
    "density",
    "diagnose",
    "event_dtype",
    "event_kinds",
    "ewma",
    "kde",
    "mahalanobis",
    "pelt",
    "quantile_vectors",
    "read_trace",
    "read_traces",
    "reconstruct_lognormal",
    "summarize_rank",
    "w1",
    "w1_matrix",
]

PathLike = Union[str, "os.PathLike[str]"]


class Trace:
    """One rank's trace as the readers give it (io/trace_data.hpp).

    events: a read-only structured numpy array of failslow.event_dtype, one row per event in file
    order (start_ns, end_ns: integer ns; name: an index into `names`; kind: an index into
    failslow.event_kinds; rank, stream, device, correlation, flags), a view of the C++ memory;
    names: the name table the traces of one read_traces call share; stats: what the reader saw
    and skipped (every record stored or counted: stats["accounted"]); rank and rank_from: the
    rank and the rule that gave it (distributedInfo, file name, table, mapping, assumed, unknown);
    distributed: the distributedInfo block or None.
    """

    def __init__(self, raw: Dict[str, Any], names: List[str]):
        self.rank: int = raw["rank"]
        self.rank_from: str = raw["rank_from"]
        self.source: str = raw["source"]
        self.events: np.ndarray = raw["events"]
        self.names: List[str] = names
        self.stats: Dict[str, Any] = raw["stats"]
        self.distributed: Optional[Dict[str, Any]] = raw["distributed"]
        self.base_time_ns: int = raw["base_time_ns"]

    def __len__(self) -> int:
        return len(self.events)

    def __repr__(self) -> str:
        return f"<failslow.Trace rank {self.rank} ({self.rank_from}), {len(self.events)} events, {self.source}>"

    def event_names(self) -> np.ndarray:
        """The name of every event (an object array of str)."""
        table = np.array(self.names, dtype=object)
        return table[self.events["name"]] if len(self.names) else np.empty(0, dtype=object)

    def to_dataframe(self):
        """The events as a pandas DataFrame: name and kind as categoricals (codes = the ids, no
        string per row), duration_ns = end_ns - start_ns. Needs pandas."""
        try:
            import pandas as pd
        except ImportError as e:  # pragma: no cover - depends on the machine
            raise ImportError("Trace.to_dataframe needs pandas (Debian: apt-get install python3-pandas)") from e
        ev = self.events
        return pd.DataFrame(
            {
                "start_ns": ev["start_ns"],
                "end_ns": ev["end_ns"],
                "duration_ns": ev["end_ns"] - ev["start_ns"],
                "name": pd.Categorical.from_codes(ev["name"].astype(np.int64), categories=self.names),
                "kind": pd.Categorical.from_codes(ev["kind"].astype(np.int64), categories=list(event_kinds)),
                "rank": ev["rank"],
                "stream": ev["stream"],
                "device": ev["device"],
                "correlation": ev["correlation"],
            }
        )


def read_traces(
    paths: Union[PathLike, Sequence[PathLike]],
    *,
    threads: int = 0,
    assume_missing_ranks: bool = False,
    skip_unreadable: bool = False,
    rank_of: Optional[Mapping[PathLike, int]] = None,
) -> List[Trace]:
    """The traces of files and folders (trace/load_trace_set.hpp), sorted by rank.

    Folders are searched for *.json, *.json.gz (PyTorch profiler: Kineto or the plain Chrome
    trace without Kineto), *.csv, *.tsv (kernel tables: one trace per rank of the table) and
    *.sqlite (Nsight Systems exports). threads: files read at once (0: every core). Ranks:
    rank_of (path -> rank), the table's rank column, distributedInfo, the file name (rank-3,
    worker_3), else assumed (assume_missing_ranks) or -1. A malformed file raises ParseError
    unless skip_unreadable.
    """
    plist = [os.fspath(paths)] if isinstance(paths, (str, os.PathLike)) else [os.fspath(p) for p in paths]
    mapping = {os.fspath(k): int(v) for k, v in (rank_of or {}).items()}
    raw = _core._read_traces(plist, threads, assume_missing_ranks, skip_unreadable, mapping)
    names = raw["names"]
    return [Trace(t, names) for t in raw["traces"]]


def read_trace(path: PathLike, *, rank: Optional[int] = None) -> Trace:
    """One trace file (see read_traces); rank: the rank to give it, else the file's own."""
    p = os.fspath(path)
    traces = read_traces([p], threads=1, rank_of={p: rank} if rank is not None else None)
    if len(traces) != 1:
        raise ValueError(f"read_trace: {p} holds {len(traces)} traces (a kernel table of several ranks?): use read_traces")
    return traces[0]


def _topology_text(topology: Union[None, str, Mapping[str, int]]) -> Optional[str]:
    if topology is None or isinstance(topology, str):
        return topology
    return ",".join(f"{k}={int(v)}" for k, v in topology.items())


Inputs = Union[PathLike, bytes, Mapping[str, Any], Sequence[Union[PathLike, bytes, Mapping[str, Any]]]]


def diagnose(
    inputs: Inputs,
    *,
    topology: Union[None, str, Mapping[str, int]] = None,
    order: str = "tp-cp-ep-dp-pp",
    threads: int = 0,
    format: str = "dict",
    width: int = 100,
) -> Union[Dict[str, Any], str]:
    """Diagnoses a job: L1 slow windows, L2 stragglers, L3 degraded kernels, links and stages, L4
    who waits for whom (diagnose/diagnose.hpp), as `failslow diagnose` does.

    inputs: trace files and folders, or .fsum files (paths, str or os.PathLike); or .fsum bytes
    (Compressor.fsum(), one bytes object per file); or the rank shares failslow.summarize_rank
    returns (what failslow.torch gathers). One kind per call.
    topology: "tp=2,pp=4,dp=8" or {"tp": 2, "pp": 4, "dp": 8}; None: from the traces' pg_config,
    else pure data parallelism (the report says which). order: the Megatron order, fastest first.
    format: "dict" (the report failslow.report/1 as Python objects, docs/report.md), "json" (its
    text, as `failslow diagnose --format json`) or "text" (the report for people, wrapped at
    `width` columns). The GIL is released while the job loads and is diagnosed.
    """
    fmt = format if format != "dict" else "json"
    if fmt not in ("json", "text"):
        raise ValueError(f"format must be one of 'dict', 'json', 'text', not {format!r}")
    items = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
    if not items:
        raise ValueError("diagnose: no inputs")
    topo = _topology_text(topology)
    if all(isinstance(i, Mapping) for i in items):
        text = _core._diagnose_parts(list(items), topo, order, fmt, width)
    elif all(isinstance(i, (bytes, bytearray, memoryview)) for i in items):
        tmp = tempfile.mkdtemp(prefix="failslow-fsum-")
        try:
            files = []
            for n, data in enumerate(items):
                files.append(os.path.join(tmp, f"summaries-{n}.fsum"))
                with open(files[-1], "wb") as f:
                    f.write(bytes(data))
            text = _core._diagnose_paths(files, topo, order, threads, fmt, width)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    elif all(isinstance(i, (str, os.PathLike)) for i in items):
        text = _core._diagnose_paths([os.fspath(i) for i in items], topo, order, threads, fmt, width)
    else:
        raise ValueError("diagnose: inputs are paths, .fsum bytes or rank shares (summarize_rank), one kind per call")
    return json.loads(text) if format == "dict" else text

