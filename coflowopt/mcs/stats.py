"""Coflow attributes and their statistics (MCS §V-A, Table I).

MCS classifies coflows by *width* because width is known when a coflow
arrives, while its *size* is not. Whether that works depends on how strongly
the two are correlated; the paper measures it with Pearson correlation
coefficients between width, size, minimal CCT and length, on the raw values
and on their base-10 logarithms (Table I). On the bundled Facebook trace these
functions reproduce every entry of Table I to the printed two decimals,
including the confidence intervals (Fisher z on the log values).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from .._frozen import Frozen
from .._frozen import readonly as _readonly
from ..errors import InstanceError
from ..instance import MB, Instance

__all__ = [
    "ATTRIBUTES",
    "Correlations",
    "JointDistribution",
    "Workload",
    "as_workload",
    "correlations",
    "decade_edges",
    "joint_distribution",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

ATTRIBUTES = ("width", "size", "gamma", "length")
"""Attribute names in the order of Table I: width, size, minimal CCT, length."""

_LABELS = {"width": "coflow width", "size": "coflow size", "gamma": "minimal CCT", "length": "coflow length"}


@dataclass(frozen=True, slots=True, eq=False)
class Workload(Frozen):
    """The per-coflow attributes MCS works with (MCS §II-A).

    Parameters
    ----------
    width
        Number of flows of each coflow (>= 1).
    size
        Total bytes of each coflow (> 0).
    length
        Bytes of each coflow's largest flow (``0 < length <= size``).
    gamma
        Minimal CCT *in bytes* (MCS §V-A): the largest number of bytes the
        coflow sends from one ingress port or to one egress port. On a fabric
        with equal port capacities it is proportional to the isolation time
        ``Instance.gamma``, so correlations are the same.
    name
        Label for reports.
    """

    width: IntArray
    size: FloatArray
    length: FloatArray
    gamma: FloatArray
    name: str = ""
    num_coflows: int = field(init=False, repr=False)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        raw_w = np.asarray(self.width)
        if raw_w.ndim != 1:
            raise InstanceError(f"widths must be a 1-D array, got shape {raw_w.shape}")
        if raw_w.size and (raw_w.dtype.kind not in "iuf" or np.any(raw_w != np.round(raw_w))):
            raise InstanceError("widths must be whole numbers of flows")
        width = np.array(raw_w, dtype=np.int64)
        n = width.size
        arrays = {}
        for name in ("size", "length", "gamma"):
            try:
                arr = np.array(getattr(self, name), dtype=np.float64)
            except (TypeError, ValueError) as exc:
                raise InstanceError(f"coflow {name}s must be numbers") from exc
            if arr.shape != (n,):
                raise InstanceError(f"expected {n} coflow {name}s (one per width), got shape {arr.shape}")
            bad = np.flatnonzero(~(np.isfinite(arr) & (arr > 0)))
            if bad.size:
                k = int(bad[0])
                raise InstanceError(f"coflow {k} has {name} {float(arr[k])!r}; it must be finite and > 0")
            arrays[name] = arr
        bad = np.flatnonzero(width < 1)
        if bad.size:
            k = int(bad[0])
            raise InstanceError(f"coflow {k} has width {int(width[k])}; every coflow has at least one flow")
        bad = np.flatnonzero(arrays["length"] > arrays["size"] * (1 + 1e-12))
        if bad.size:
            k = int(bad[0])
            raise InstanceError(f"coflow {k} has length {arrays['length'][k]!r} above its size")
        set_(self, "width", _readonly(width))
        for name, arr in arrays.items():
            set_(self, name, _readonly(arr))
        set_(self, "name", str(self.name or ""))
        set_(self, "num_coflows", int(n))

    @classmethod
    def from_instance(cls, inst: Instance) -> Workload:
        """Width, size, length and bytes-bottleneck of every coflow of an instance."""
        gamma = inst.load.max(axis=1) if inst.num_coflows else np.zeros(0)
        return cls(inst.width, inst.size, inst.length, gamma, name=inst.name)

    def attribute(self, name: str) -> FloatArray:
        """One of :data:`ATTRIBUTES` as floats."""
        if name not in ATTRIBUTES:
            raise InstanceError(f"unknown attribute '{name}'; choose from {', '.join(ATTRIBUTES)}")
        return np.asarray(getattr(self, name), dtype=np.float64)


def as_workload(data: Instance | Workload) -> Workload:
    """A :class:`Workload` from an instance (or the workload itself)."""
    if isinstance(data, Workload):
        return data
    if isinstance(data, Instance):
        return Workload.from_instance(data)
    raise InstanceError(f"expected an Instance or a Workload, got {type(data).__name__}")


# --------------------------------------------------------------------------- correlations


@dataclass(frozen=True, slots=True)
class Correlations:
    """Pearson correlations between the attributes, as in MCS Table I.

    ``pearson[a, b]`` uses the raw values, ``pearson_log[a, b]`` their log10;
    ``ci_log`` (and ``ci``) hold the two-sided confidence intervals from
    Fisher's z transform, ``tanh(atanh(r) -+ z_q / sqrt(n - 3))``. Table I
    prints the interval of the log correlation. Rows and columns follow
    :attr:`attributes`.
    """

    attributes: tuple[str, ...]
    pearson: FloatArray
    pearson_log: FloatArray
    ci: FloatArray
    """Shape ``(A, A, 2)``: interval of the raw correlation."""
    ci_log: FloatArray
    """Shape ``(A, A, 2)``: interval of the log correlation (the one Table I prints)."""
    confidence: float
    num_coflows: int

    def pair(self, a: str, b: str) -> dict[str, Any]:
        """Raw and log correlation of two attributes with the log interval."""
        i, j = self.attributes.index(a), self.attributes.index(b)
        return {
            "pearson": float(self.pearson[i, j]),
            "pearson_log": float(self.pearson_log[i, j]),
            "ci_log": (float(self.ci_log[i, j, 0]), float(self.ci_log[i, j, 1])),
        }

    def rows(self) -> list[list[Any]]:
        """Table I as text cells: ``raw/log (lo,hi)`` per pair."""
        out = []
        for i, a in enumerate(self.attributes):
            row: list[Any] = [_LABELS.get(a, a)]
            for j in range(len(self.attributes)):
                cell = f"{self.pearson[i, j]:.2f}/{self.pearson_log[i, j]:.2f}"
                if i != j:
                    cell += f" ({self.ci_log[i, j, 0]:.2f},{self.ci_log[i, j, 1]:.2f})"
                row.append(cell)
            out.append(row)
        return out

    def headers(self) -> list[str]:
        return ["attribute", *(_LABELS.get(a, a) for a in self.attributes)]


def _pearson(x: FloatArray) -> FloatArray:
    """Correlation matrix of the rows of ``x``; ``nan`` where a row is constant."""
    centred = x - x.mean(axis=1, keepdims=True)
    norm = np.sqrt((centred**2).sum(axis=1))
    out = np.full((x.shape[0], x.shape[0]), np.nan)
    ok = norm > 0
    if ok.any():
        unit = centred[ok] / norm[ok, None]
        out[np.ix_(ok, ok)] = np.clip(unit @ unit.T, -1.0, 1.0)
    return out


def _fisher(r: FloatArray, n: int, confidence: float) -> FloatArray:
    out = np.full((*r.shape, 2), np.nan)
    if n <= 3:
        return out
    half = statistics.NormalDist().inv_cdf(0.5 + confidence / 2) / math.sqrt(n - 3)
    ok = np.isfinite(r)
    # |r| = 1 has an infinite z; its interval is the point itself
    z = np.arctanh(np.clip(r[ok], -1 + 1e-15, 1 - 1e-15))
    out[ok, 0] = np.tanh(z - half)
    out[ok, 1] = np.tanh(z + half)
    exact = ok & (np.abs(np.nan_to_num(r)) >= 1.0)
    out[exact, 0] = out[exact, 1] = r[exact]
    return out


def correlations(
    data: Instance | Workload,
    *,
    attributes: Sequence[str] = ATTRIBUTES,
    confidence: float = 0.95,
) -> Correlations:
    """Pearson correlations between coflow attributes, raw and log10 (MCS Table I)."""
    w = as_workload(data)
    if w.num_coflows < 2:
        raise InstanceError(f"correlations need at least 2 coflows, got {w.num_coflows}")
    if not 0 < confidence < 1:
        raise InstanceError(f"confidence must be in (0, 1), got {confidence!r}")
    names = tuple(attributes)
    if not names:
        raise InstanceError("need at least one attribute")
    x = np.vstack([w.attribute(a) for a in names])
    raw = _pearson(x)
    logged = _pearson(np.log10(x))
    n = w.num_coflows
    return Correlations(
        attributes=names,
        pearson=_readonly(raw),
        pearson_log=_readonly(logged),
        ci=_readonly(_fisher(raw, n, confidence)),
        ci_log=_readonly(_fisher(logged, n, confidence)),
        confidence=float(confidence),
        num_coflows=n,
    )


# --------------------------------------------------------------------------- joint distribution


@dataclass(frozen=True, slots=True)
class JointDistribution:
    """Empirical joint distribution of coflow size and width on a grid.

    ``counts[a, b]`` is the number of coflows with
    ``size_edges[a] <= size < size_edges[a + 1]`` and
    ``width_edges[b] <= width < width_edges[b + 1]`` (half-open, as the
    classes of MCS §V-B). With the class thresholds as edges, the column sums
    divided by the number of coflows are the paper's ``alpha_i`` and the
    diagonal the ``beta_i``.
    """

    size_edges: FloatArray
    width_edges: FloatArray
    counts: IntArray
    num_coflows: int

    @property
    def fractions(self) -> FloatArray:
        return self.counts / max(self.num_coflows, 1)

    def rows(self, *, unit: float = MB) -> list[list[Any]]:
        """One row per size interval: the interval, then the count per width interval."""
        out = []
        for a in range(self.counts.shape[0]):
            lo, hi = self.size_edges[a] / unit, self.size_edges[a + 1] / unit
            out.append([f"[{lo:g}, {hi:g})", *(int(c) for c in self.counts[a])])
        return out

    def headers(self) -> list[str]:
        e = self.width_edges
        return ["size (MB) \\ width", *(f"[{e[b]:g}, {e[b + 1]:g})" for b in range(e.size - 1))]


def decade_edges(values: npt.ArrayLike, *, unit: float = 1.0) -> FloatArray:
    """Powers of ten (times ``unit``) from below the smallest to above the largest value."""
    raw = np.asarray(values, dtype=np.float64)
    if raw.size == 0:
        return np.array([unit, 10 * unit])
    v = raw / unit
    lo = math.floor(math.log10(float(v.min())))
    hi = math.floor(math.log10(float(v.max()))) + 1
    # log10 rounds up just below a power of ten (log10(99.99999999999999) is 2.0), and
    # so can the product with the unit: widen until the edges hold every value
    while 10.0 ** lo * unit > raw.min():
        lo -= 1
    while 10.0 ** hi * unit <= raw.max():
        hi += 1
    return np.asarray(10.0 ** np.arange(lo, hi + 1) * unit, dtype=np.float64)


def _edges(edges: npt.ArrayLike | None, values: FloatArray, unit: float, what: str) -> FloatArray:
    if edges is None:
        return decade_edges(values, unit=unit)
    e = np.array(edges, dtype=np.float64)
    if e.ndim != 1 or e.size < 2 or np.any(np.isnan(e)) or np.any(np.diff(e) <= 0):
        raise InstanceError(f"{what} edges must be at least two increasing numbers, got {edges!r}")
    return e


def joint_distribution(
    data: Instance | Workload,
    *,
    size_edges: npt.ArrayLike | None = None,
    width_edges: npt.ArrayLike | None = None,
) -> JointDistribution:
    """Counts of coflows per (size interval, width interval).

    The default edges are decades: powers of ten of MB for sizes (the
    trace's MB, 2^20 bytes) and powers of ten for widths. Coflows outside
    the edges are not counted (pass ``-inf``/``inf`` as outer edges to keep
    all).
    """
    w = as_workload(data)
    se = _edges(size_edges, w.size, MB, "size")
    we = _edges(width_edges, w.width.astype(float), 1.0, "width")
    si = np.searchsorted(se, w.size, side="right") - 1
    wi = np.searchsorted(we, w.width, side="right") - 1
    ok = (si >= 0) & (si < se.size - 1) & (wi >= 0) & (wi < we.size - 1)
    shape = (se.size - 1, we.size - 1)
    flat = np.bincount(si[ok] * shape[1] + wi[ok], minlength=shape[0] * shape[1])
    return JointDistribution(
        size_edges=_readonly(se),
        width_edges=_readonly(we),
        counts=_readonly(flat.reshape(shape).astype(np.int64)),
        num_coflows=w.num_coflows,
    )
