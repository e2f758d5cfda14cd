"""Type stub of failslow._core (python/src): what editors complete. Docstrings: help(failslow.X)."""

from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

ArrayLike = npt.ArrayLike
Bandwidth = Union[str, float]  # "rule_of_thumb", "robust_rule_of_thumb", "scott", "silverman", "isj" or h

class Error(RuntimeError): ...

class ParseError(Error, ValueError):
    file: str
    offset: int
    line: int
    column: int
    expected: str

class UnavailableError(Error): ...

event_dtype: np.dtype
event_kinds: Tuple[str, ...]

def _data_address(x: ArrayLike) -> int: ...

# statistics
def cluster(
    durations: ArrayLike,
    *,
    scale: str = "log",
    bandwidth: Bandwidth = "rule_of_thumb",
    grid_points: int = 1024,
    min_depth: float = 0.2,
    min_fraction: float = 0.01,
    min_count: int = 3,
    labels: bool = False,
) -> Dict[str, Any]: ...
def density(
    values: ArrayLike, *, scale: str = "log", bandwidth: Bandwidth = "rule_of_thumb", grid_points: int = 1024
) -> Dict[str, Any]: ...
def kde(
    values: ArrayLike,
    bandwidth: float,
    lo: float,
    hi: float,
    points: int,
    *,
    weights: Optional[ArrayLike] = None,
    method: str = "exact",
) -> npt.NDArray[np.float64]: ...
def w1(
    u: ArrayLike,
    v: ArrayLike,
    *,
    u_weights: Optional[ArrayLike] = None,
    v_weights: Optional[ArrayLike] = None,
    sorted: bool = False,
) -> float: ...
def w1_matrix(x: Union[ArrayLike, Sequence[ArrayLike]], *, threads: int = 1) -> npt.NDArray[np.float64]: ...
def quantile_vectors(samples: Sequence[ArrayLike], *, k: int = 256) -> npt.NDArray[np.float64]: ...
def reconstruct_lognormal(cluster: Mapping[str, float]) -> Dict[str, float]: ...

class LognormalMixture:
    def __init__(self, components: List[Mapping[str, float]], *, truncated: bool = False) -> None: ...
    @staticmethod
    def from_clusters(clusters: List[Mapping[str, Any]], *, truncated: bool = False) -> "LognormalMixture": ...
    @property
    def components(self) -> List[Dict[str, float]]: ...
    @property
    def truncated(self) -> bool: ...
    def cdf(self, x: ArrayLike) -> npt.NDArray[np.float64]: ...
    def survival(self, x: ArrayLike) -> npt.NDArray[np.float64]: ...
    def quantile(self, p: ArrayLike) -> npt.NDArray[np.float64]: ...
    def quantile_vector(self, k: int = 256) -> npt.NDArray[np.float64]: ...
    def w1(self, other: "LognormalMixture") -> float: ...

# detectors
def ewma(
    values: ArrayLike,
    *,
    lam: float = 0.2,
    L: float = 3.0,
    side: str = "both",
    limits: str = "asymptotic",
    baseline: str = "warmup_robust",
    warmup: int = 30,
    mu: Optional[float] = None,
    sigma: Optional[float] = None,
    trend_run: int = 5,
    trend_on: str = "observation",
    rules: int = 0,
    reset_after_alarm: bool = False,
) -> Dict[str, Any]: ...
def pelt(
    series: ArrayLike,
    *,
    model: str = "mean",
    penalty: Union[str, float] = "mbic",
    min_segment: int = 2,
    sigma: float = 0.0,
    variance_floor: float = 0.0,
) -> Dict[str, Any]: ...
def mahalanobis(
    x: ArrayLike,
    *,
    estimator: str = "ledoit_wolf",
    quantile: float = 0.99,
    threshold: str = "adaptive",
    standardize: bool = True,
    mcd_support: float = 0.75,
    mcd_starts: int = 100,
    mcd_seed: int = ...,
) -> Dict[str, Any]: ...
def bh(p_values: ArrayLike, *, q: float = 0.05, method: str = "bh") -> Dict[str, Any]: ...

# readers, compressor, codec, diagnosis
def _read_traces(
    paths: List[str],
    threads: int = 0,
    assume_missing_ranks: bool = False,
    skip_unreadable: bool = False,
    rank_of: Mapping[str, int] = ...,
) -> Dict[str, Any]: ...

class Compressor:
    def __init__(
        self,
        rank: int = 0,
        *,
        per_key_cap: int = 4096,
        max_window_ns: int = 0,
        precision_bits: int = 7,
        key_frame_interval: int = 16,
    ) -> None: ...
    def key(self, name: str) -> int: ...
    def add(self, name: Union[str, int], start_ns: int, duration_ns: int) -> bool: ...
    def add_events(
        self, names: Union[Sequence[str], ArrayLike], start_ns: ArrayLike, duration_ns: ArrayLike
    ) -> int: ...
    def add_launch(self, start_ns: int) -> bool: ...
    def close_window(self, end_ns: int = 0) -> List[Dict[str, Any]]: ...
    @property
    def windows(self) -> List[Dict[str, Any]]: ...
    @property
    def pending_events(self) -> int: ...
    def fsum(self) -> bytes: ...

def decode_fsum(data: bytes, source: str = "<fsum>") -> Dict[str, Any]: ...
def summarize_rank(path: str, rank: int = -1) -> Dict[str, Any]: ...
def _diagnose_paths(
    paths: List[str],
    topology: Optional[str] = None,
    order: str = "tp-cp-ep-dp-pp",
    threads: int = 0,
    format: str = "json",
    width: int = 100,
) -> str: ...
def _diagnose_parts(
    parts: List[Mapping[str, Any]],
    topology: Optional[str] = None,
    order: str = "tp-cp-ep-dp-pp",
    format: str = "json",
    width: int = 100,
) -> str: ...
