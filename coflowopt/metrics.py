"""Metrics of completion times and schedules.

Completion times are absolute (``C_k``); the coflow completion time is
``CCT_k = C_k - r_k``. Percentiles use NumPy's default (linear
interpolation between order statistics).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass

import numpy as np
import numpy.typing as npt

from .errors import InstanceError
from .instance import BINS, NARROW_WIDTH, SHORT_LENGTH, Instance
from .schedule import TIME_ROUNDING, Schedule

__all__ = [
    "LinkUtilization",
    "Summary",
    "cct",
    "deadlines_met",
    "link_utilization",
    "summarize",
    "utilization",
]

FloatArray = npt.NDArray[np.float64]


def _completion(instance: Instance, completion: npt.ArrayLike) -> FloatArray:
    raw = np.asarray(completion)
    # (strings, bytes, None and booleans are not times; NaN is none)
    if raw.dtype.kind not in "iuf" or np.isnan(c := raw.astype(np.float64)).any():
        raise InstanceError(f"completion times must be numbers (inf: not completed), got "
                            f"{completion!r:.80}")
    if c.shape != (instance.num_coflows,):
        raise InstanceError(f"need one completion time per coflow ({instance.num_coflows}), "
                            f"got shape {c.shape}")
    return c


def cct(instance: Instance, completion: npt.ArrayLike) -> FloatArray:
    """Coflow completion times ``C_k - r_k``."""
    return _completion(instance, completion) - instance.release


def deadlines_met(
    instance: Instance, completion: npt.ArrayLike, *, rtol: float = 1e-9
) -> npt.NDArray[np.bool_]:
    """Which coflows with a deadline finish by it (coflows without one: False).

    A completion counts as on time up to ``rtol`` of the coflow's window (deadline less
    release) plus the simulator's time resolution at the deadline
    (:data:`~coflowopt.schedule.TIME_ROUNDING` of ``max(1, |D_k|)``): MADD at the deadline
    finishes there only up to rounding. Not ``rtol`` of ``|D_k|`` itself: with times on a
    Unix clock (1.7e9 s) that let a coflow 1.25 s late count as met.
    """
    c = _completion(instance, completion)
    d = instance.deadline
    with np.errstate(invalid="ignore"):
        slack = rtol * (d - instance.release) + TIME_ROUNDING * np.maximum(np.abs(d), 1.0)
    return np.isfinite(d) & (c <= d + np.where(np.isfinite(slack), slack, 0.0))


def utilization(instance: Instance, completion: npt.ArrayLike) -> float:
    """Average link utilization as Maluca defines it (Eq. 10).

    Data carried by all links (each flow crosses its uplink and its
    downlink) divided by the total link capacity times the schedule's length
    ``L``. Maluca takes all coflows released at 0 and ``L = max C_k``; with
    release times ``L`` runs from the first release to the last completion.
    """
    c = _completion(instance, completion)
    if instance.num_coflows == 0:
        return float("nan")
    span = float(c.max() - instance.release.min())
    if not np.isfinite(span) or span <= 0:
        return float("nan")
    carried = float(instance.load.sum())
    return carried / (span * float(instance.fabric.capacity.sum()))


@dataclass(frozen=True, slots=True)
class Summary:
    """Summary statistics of one schedule or simulation."""

    num_coflows: int
    weighted_completion: float
    """Sum of ``w_k C_k`` with absolute completion times."""
    weighted_cct: float
    """Sum of ``w_k (C_k - r_k)``."""
    mean_cct: float
    p50_cct: float
    p95_cct: float
    p99_cct: float
    max_cct: float
    bin_count: Mapping[str, int]
    bin_mean_cct: Mapping[str, float]
    """Mean CCT per bin (``nan`` for an empty bin)."""
    makespan: float
    """Last completion time ``max C_k``."""
    utilization: float
    """Maluca Eq. (10): see :func:`utilization`."""
    deadlines_met: int | None
    """Coflows that met their deadline; ``None`` when no coflow has one."""

    def as_dict(self) -> dict[str, object]:
        out = asdict(self)
        out["bin_count"] = dict(self.bin_count)
        out["bin_mean_cct"] = dict(self.bin_mean_cct)
        return out


def _percentile(x: FloatArray, q: float) -> float:
    """NumPy's (linear) percentile; with unfinished coflows (CCT ``inf``) ranked last, a
    percentile that interpolates towards one is ``inf`` (NumPy would give nan)."""
    if not np.isinf(x).any():
        return float(np.percentile(x, q))
    v = np.sort(x)
    pos = q / 100.0 * (v.size - 1)
    lo = int(np.floor(pos))
    hi = min(lo + 1, v.size - 1)
    if pos == lo or v[hi] == v[lo]:
        return float(v[lo])
    if np.isinf(v[hi]):
        return math.inf
    # between two finite values: NumPy's arithmetic, the infinities standing in last
    return float(np.percentile(np.where(np.isinf(x), np.finfo(np.float64).max, x), q))


def summarize(
    instance: Instance,
    completion: npt.ArrayLike,
    *,
    short_length: float = SHORT_LENGTH,
    narrow_width: int = NARROW_WIDTH,
) -> Summary:
    """Summary of completion times: sums, mean and tail CCTs, per-bin means (bins as
    :meth:`Instance.bins <coflowopt.Instance.bins>` makes them)."""
    c = _completion(instance, completion)
    x = c - instance.release
    w = instance.weight
    labels = instance.bins(short_length=short_length, narrow_width=narrow_width)
    counts = {b: int(np.count_nonzero(labels == b)) for b in BINS}
    means = {b: float(x[labels == b].mean()) if counts[b] else float("nan") for b in BINS}
    empty = x.size == 0

    def pct(q: float) -> float:
        return float("nan") if empty else _percentile(x, q)

    met = None
    if instance.has_deadlines:
        met = int(deadlines_met(instance, c).sum())
    return Summary(
        num_coflows=int(x.size),
        weighted_completion=float(np.dot(w, c)),
        weighted_cct=float(np.dot(w, x)),
        mean_cct=float("nan") if empty else float(x.mean()),
        p50_cct=pct(50),
        p95_cct=pct(95),
        p99_cct=pct(99),
        max_cct=float("nan") if empty else float(x.max()),
        bin_count=counts,
        bin_mean_cct=means,
        makespan=float("nan") if empty else float(c.max()),
        utilization=utilization(instance, c),
        deadlines_met=met,
    )


@dataclass(frozen=True, slots=True)
class LinkUtilization:
    """Per-link utilization over each link's active time (Maluca §V).

    A link's active time runs from the first instant it transmits until all
    data on it are sent; its utilization is the data it carried divided by
    capacity times active time. Links that carry nothing have ``nan``.
    """

    carried: FloatArray
    first: FloatArray
    last: FloatArray
    utilization: FloatArray

    @property
    def mean(self) -> float:
        """Average over the links that carried data."""
        u = self.utilization[np.isfinite(self.utilization)]
        return float(u.mean()) if u.size else float("nan")


def link_utilization(instance: Instance, schedule: Schedule) -> LinkUtilization:
    """Utilization of each link over its own active time."""
    fabric = instance.fabric
    L = fabric.num_links
    F = instance.num_flows
    # per flow first (a schedule's tied pieces are summed without expanding them), then per link
    amt = schedule.served(F)
    first_f, last_f = schedule.flow_span(F)
    inc = instance.routes.tocoo()
    rows, links = np.asarray(inc.row), np.asarray(inc.col)
    carried = np.bincount(links, weights=amt[rows] * inc.data, minlength=L).astype(np.float64)
    first = np.full(L, np.inf)
    last = np.full(L, -np.inf)
    np.minimum.at(first, links, first_f[rows])
    np.maximum.at(last, links, last_f[rows])
    active = last - first
    with np.errstate(invalid="ignore", divide="ignore"):
        util = np.where(carried > 0, carried / (fabric.capacity * active), np.nan)
    first[carried == 0] = np.nan
    last[carried == 0] = np.nan
    return LinkUtilization(carried, first, last, util)
