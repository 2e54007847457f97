"""Schedules and their independent verifier.

A :class:`Schedule` is a set of *pieces*: piece ``i`` serves flow ``flow[i]``
(a global flow index of the instance) at constant rate ``rate[i]`` during
``[start[i], end[i])``. Piecewise-constant rates per flow over time segments
are exactly this; :meth:`Schedule.from_segments` builds one from breakpoints
and a (segments x flows) rate matrix, and :meth:`Schedule.segments` goes back.

:func:`check_feasible` verifies a schedule against an instance with its own
code: it shares nothing with the solvers, bounds or the simulator, and it
measures every violation in data (amounts) rather than in time wherever it
can, so that its tolerance means the same on every time scale.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from ._frozen import Frozen
from ._frozen import readonly as _readonly
from ._text import plural
from .errors import ScheduleError
from .instance import Instance

__all__ = [
    "VIOLATION_KINDS",
    "FeasibilityReport",
    "Schedule",
    "ScheduleBuilder",
    "Violation",
    "check_feasible",
    "time_resolution",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]



# --------------------------------------------------------------------------- Schedule


@dataclass(frozen=True, slots=True, eq=False)
class Schedule(Frozen):
    """Piecewise-constant rates per flow.

    Piece ``i`` serves flow ``flow[i]`` at ``rate[i]`` over ``[start[i], end[i])``.
    Pieces of one flow should not overlap (the verifier reports it if they
    do). Construction checks only shapes and types; :func:`check_feasible`
    checks everything else.
    """

    flow: IntArray
    start: FloatArray
    end: FloatArray
    rate: FloatArray

    def __post_init__(self) -> None:
        try:
            raw = np.asarray(self.flow).reshape(-1)
            as_float = None if raw.dtype.kind in "iu" else np.asarray(raw, dtype=np.float64)
            start = np.array(self.start, dtype=np.float64, copy=True).reshape(-1)
            end = np.array(self.end, dtype=np.float64, copy=True).reshape(-1)
            rate = np.array(self.rate, dtype=np.float64, copy=True).reshape(-1)
        except (TypeError, ValueError) as exc:
            raise ScheduleError(f"schedule arrays must be numeric: {exc}") from None
        # not truncated: a flow index 1.99 is a mistake, not flow 1
        bad = (np.zeros(0, np.int64) if as_float is None else
               np.flatnonzero(~np.isfinite(as_float) | (as_float != np.round(as_float))))
        if bad.size:
            assert as_float is not None
            raise ScheduleError(f"flow indices must be integers, got {float(as_float[bad[0]])!r} "
                                f"(piece {int(bad[0])})")
        flow = np.array(raw, dtype=np.int64, copy=True)
        if not (flow.size == start.size == end.size == rate.size):
            raise ScheduleError(
                f"schedule arrays differ in length: flow {flow.size}, start {start.size}, "
                f"end {end.size}, rate {rate.size}"
            )
        for name, arr in (("flow", flow), ("start", start), ("end", end), ("rate", rate)):
            object.__setattr__(self, name, _readonly(arr))

    # -------------------------------------------------------------- construction

    @classmethod
    def _adopt(cls, flow: IntArray, start: FloatArray, end: FloatArray, rate: FloatArray) -> Schedule:
        """A schedule that takes over arrays nobody else holds, without copying them.

        For the simulator's recorded pieces (hundreds of millions on a large trace,
        where the constructor's copies doubled the peak memory). The arrays must be
        1-D, of one length, ``int64`` flows and ``float64`` times and rates.
        """
        arrays = (flow, start, end, rate)
        assert flow.dtype == np.int64 and all(a.dtype == np.float64 for a in arrays[1:])
        assert all(a.ndim == 1 and a.size == flow.size for a in arrays)
        out = object.__new__(cls)
        for name, arr in zip(("flow", "start", "end", "rate"), arrays, strict=True):
            object.__setattr__(out, name, _readonly(arr))
        return out

    @classmethod
    def empty(cls) -> Schedule:
        return cls(np.zeros(0, np.int64), np.zeros(0), np.zeros(0), np.zeros(0))

    @classmethod
    def from_segments(cls, times: npt.ArrayLike, rates: Any) -> Schedule:
        """Build from breakpoints ``t_0 < ... < t_m`` and an ``(m, F)`` rate matrix.

        ``rates`` may be a dense array or a SciPy sparse matrix; only nonzero
        entries become pieces.
        """
        t = np.asarray(times, dtype=np.float64).reshape(-1)
        m = t.size - 1
        if sp.issparse(rates):
            coo = sp.coo_array(rates)
            seg, flow, val = coo.row, coo.col, coo.data
            shape = coo.shape
        else:
            dense = np.asarray(rates, dtype=np.float64)
            if dense.ndim != 2:
                raise ScheduleError(f"rates must be a 2-D (segments x flows) array, got {dense.shape}")
            seg, flow = np.nonzero(dense)
            val = dense[seg, flow]
            shape = dense.shape
        if m < 0 or shape[0] != m:
            raise ScheduleError(f"{t.size} breakpoints need {max(m, 0)} rows of rates, got {shape[0]}")
        keep = val != 0
        seg, flow, val = seg[keep], flow[keep], val[keep]
        return cls(flow, t[seg], t[seg + 1], val)

    @classmethod
    def from_pieces(cls, pieces: Iterable[Sequence[float]]) -> Schedule:
        """Build from ``(flow, start, end, rate)`` rows."""
        rows = [tuple(p) for p in pieces]
        if not rows:
            return cls.empty()
        if any(len(r) != 4 for r in rows):
            raise ScheduleError("pieces must be (flow, start, end, rate) rows")
        arr = np.array(rows, dtype=np.float64)
        if np.any(arr[:, 0] != np.round(arr[:, 0])):
            raise ScheduleError("piece flow indices must be integers")
        return cls(arr[:, 0].astype(np.int64), arr[:, 1], arr[:, 2], arr[:, 3])

    @classmethod
    def concatenate(cls, schedules: Iterable[Schedule]) -> Schedule:
        parts = list(schedules)
        if not parts:
            return cls.empty()
        return cls(
            np.concatenate([s.flow for s in parts]),
            np.concatenate([s.start for s in parts]),
            np.concatenate([s.end for s in parts]),
            np.concatenate([s.rate for s in parts]),
        )

    # -------------------------------------------------------------- queries

    @property
    def num_pieces(self) -> int:
        return int(self.flow.size)

    def amounts(self) -> FloatArray:
        """Data served by each piece."""
        return self.rate * (self.end - self.start)

    def served(self, num_flows: int) -> FloatArray:
        """Total data served per flow."""
        s, e, r = self.start, self.end, self.rate
        return _per_flow_sums(self.flow, num_flows, lambda sl: r[sl] * (e[sl] - s[sl]))

    def flow_completion(self, instance: Instance, *, rtol: float = 1e-9) -> FloatArray:
        """Time each flow has received its size (``inf`` if it never does).

        That is the end of the piece with which the flow's cumulative service
        reaches ``size * (1 - rtol)``; later pieces that carry only rounding
        noise do not delay it.
        """
        return _completion_times(self.flow, self.start, self.end, self.rate, instance.flow_size,
                                 rtol, float(instance.fabric.capacity.max(initial=0.0)))

    def coflow_completion(self, instance: Instance, *, rtol: float = 1e-9) -> FloatArray:
        """Completion time ``C_k`` of each coflow (its last flow's completion)."""
        fc = self.flow_completion(instance, rtol=rtol)
        if instance.num_flows == 0:
            return np.zeros(0)
        return np.maximum.reduceat(fc, instance.ptr[:-1])

    def coflow_start(self, instance: Instance) -> FloatArray:
        """First time each coflow is served at a positive rate (``inf`` if never)."""
        pos = (self.rate > 0) & (self.end > self.start)
        first = np.full(instance.num_flows, np.inf)
        np.minimum.at(first, self.flow[pos], self.start[pos])
        if instance.num_flows == 0:
            return np.zeros(0)
        return np.minimum.reduceat(first, instance.ptr[:-1])

    def segments(self) -> tuple[FloatArray, sp.csr_array]:
        """Breakpoints and the ``(segments x flows)`` rate matrix.

        The inverse of :meth:`from_segments` (pieces of one flow that overlap
        add up).
        """
        times = np.unique(np.concatenate([self.start, self.end]))
        if times.size < 2:
            return times, sp.csr_array((max(times.size - 1, 0), int(self.flow.max(initial=-1)) + 1))
        i0 = np.searchsorted(times, self.start)
        i1 = np.searchsorted(times, self.end)
        n = np.maximum(i1 - i0, 0)
        rows = np.repeat(i0, n) + _ranges(n)
        cols = np.repeat(self.flow, n)
        vals = np.repeat(self.rate, n)
        shape = (times.size - 1, int(self.flow.max(initial=-1)) + 1)
        return times, sp.csr_array((vals, (rows, cols)), shape=shape)

    def trimmed(self, instance: Instance, *, rtol: float = 1e-9) -> Schedule:
        """The schedule without the pieces that start after their flow completed.

        Such pieces carry only rounding (an LP's amounts of 1e-10 of a flow's size,
        spread over later slots): they do not change :meth:`flow_completion`, but a
        reader taking a flow's last piece as its end would see a later time.
        """
        fc = self.flow_completion(instance, rtol=rtol)
        done = fc[self.flow]
        keep = self.start < done
        if keep.all():
            return self
        return Schedule(self.flow[keep], self.start[keep], self.end[keep], self.rate[keep])

    def shifted(self, offset: float) -> Schedule:
        """The same schedule ``offset`` time units later."""
        return Schedule(self.flow, self.start + offset, self.end + offset, self.rate)

    def __repr__(self) -> str:
        if self.num_pieces == 0:
            return "Schedule(pieces=0)"
        return (
            f"Schedule(pieces={self.num_pieces}, flows={np.unique(self.flow).size}, "
            f"span=[{self.start.min():g}, {self.end.max():g}])"
        )


class ScheduleBuilder:
    """Accumulates pieces in batches (for simulators and solvers)."""

    def __init__(self) -> None:
        self._parts: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []

    def add(
        self,
        flows: npt.ArrayLike,
        start: float | npt.ArrayLike,
        end: float | npt.ArrayLike,
        rates: npt.ArrayLike,
    ) -> None:
        """Serve ``flows`` at ``rates`` over ``[start, end)``; zero rates are skipped."""
        f = np.asarray(flows, dtype=np.int64).reshape(-1)
        r = np.broadcast_to(np.asarray(rates, dtype=np.float64), f.shape)
        s = np.broadcast_to(np.asarray(start, dtype=np.float64), f.shape)
        e = np.broadcast_to(np.asarray(end, dtype=np.float64), f.shape)
        keep = r != 0
        if keep.any():
            self._parts.append((f[keep], s[keep].copy(), e[keep].copy(), r[keep].copy()))

    def build(self) -> Schedule:
        if not self._parts:
            return Schedule.empty()
        cols = list(zip(*self._parts, strict=True))
        return Schedule(*(np.concatenate(c) for c in cols))


def _ranges(n: IntArray) -> IntArray:
    """Concatenation of ``arange(n_i)`` for each ``n_i``."""
    total = int(n.sum())
    if total == 0:
        return np.zeros(0, np.int64)
    starts = np.cumsum(n) - n
    return np.arange(total, dtype=np.int64) - np.repeat(starts, n)


def _segmented_cumsum(values: FloatArray, group: IntArray) -> FloatArray:
    """Inclusive cumulative sum within runs of equal ``group`` (sorted by group).

    A doubling scan: no running total crosses a group boundary, so a small
    flow's cumulative amount never carries the rounding error of a large
    total accumulated before it.
    """
    out = values.astype(np.float64, copy=True)
    n = out.size
    d = 1
    while d < n:
        same = group[d:] == group[:-d]
        if not same.any():
            break
        add = np.where(same, out[:-d], 0.0)
        out[d:] += add
        d *= 2
    return out


def _completion_times(
    flow: IntArray,
    start: FloatArray,
    end: FloatArray,
    rate: FloatArray,
    size: FloatArray,
    rtol: float,
    top: float,
) -> FloatArray:
    """End of the piece with which each flow has received ``size * (1 - rtol)`` (less the
    resolution of its pieces' times, :func:`time_resolution` with rates up to ``top``)."""
    F = size.size
    out = np.full(F, np.inf)
    valid = (flow >= 0) & (flow < F) & (end > start) & (rate > 0)
    if not valid.any():
        return out
    f, s, e, r = flow[valid], start[valid], end[valid], rate[valid]
    order = np.lexsort((s, f))
    f, s, e, r = f[order], s[order], e[order], r[order]
    a = r * (e - s)
    cum = _segmented_cumsum(a, f)
    target = (size[f] * (1.0 - rtol) - _segmented_cumsum(time_resolution(s, e, r, top), f)
              - top * np.spacing(np.abs(e)))  # and an instant too short to state, at its end
    hit = np.flatnonzero(cum >= target)
    flows_hit, first = np.unique(f[hit], return_index=True)
    # A feasible schedule's pieces end when their flow completes, so the end of
    # the piece that brings a flow to its size is the completion time.
    out[flows_hit] = e[hit[first]]
    return out


def time_resolution(start: FloatArray, end: FloatArray, rate: FloatArray,
                    top: float = np.inf) -> FloatArray:
    """How precisely float64 times can state each piece's amount: its rate (at most
    ``top``, the fastest link: no feasible rate is above it, and a piece too short to be
    checked for capacity could claim any) times the spacing of floats at its start plus
    that at its end."""
    return np.minimum(rate, top) * (np.spacing(np.abs(start)) + np.spacing(np.abs(end)))


def amount_resolution(flow: IntArray, start: FloatArray, end: FloatArray, rate: FloatArray,
                      num_flows: int, top: float) -> FloatArray:
    """How precisely float64 times can state each flow's total amount: the
    :func:`time_resolution` of its pieces, plus one instant at its last time too short to
    state (a flow that finishes with less than ``top * spacing(t)`` left gets it in no
    time: a review's 1e-6 B flow at t = 1.2e8 finished its last 1.1e-10 B at rate 0.1
    that way). ``flow`` indexes ``0 .. num_flows - 1``."""
    out = _per_flow_sums(flow, num_flows,
                         lambda sl: time_resolution(start[sl], end[sl], rate[sl], top))
    if flow.size:
        last = np.zeros(num_flows)
        for lo in range(0, flow.size, SLICE):
            np.maximum.at(last, flow[lo : lo + SLICE], np.abs(end[lo : lo + SLICE]))
        out += top * np.spacing(last)
    return out


SLICE = 1 << 22
"""Pieces per slice in the per-flow sums over a schedule: their temporaries stay near
32 MiB each however many pieces there are (on the Facebook trace a recorded schedule
has up to 10^8)."""


def _per_flow_sums(flow: IntArray, num_flows: int,
                   values: Callable[[slice], FloatArray]) -> FloatArray:
    """Per flow, the sum of ``values(piece slice)`` over its pieces, a :data:`SLICE` at a time."""
    out = np.zeros(num_flows)
    for lo in range(0, flow.size, SLICE):
        sl = slice(lo, min(lo + SLICE, flow.size))
        out += np.bincount(flow[sl], weights=values(sl), minlength=num_flows)[:num_flows]
    return out


# --------------------------------------------------------------------------- verifier

VIOLATION_KINDS = (
    "unknown-flow",
    "not-finite",
    "bad-interval",
    "negative-rate",
    "overlap",
    "before-release",
    "capacity",
    "amount",
    "starts-after",
    "finishes-before",
    "deadline",
)
"""Every kind of violation :func:`check_feasible` reports."""


@dataclass(frozen=True, slots=True)
class Violation:
    """One way in which a schedule breaks the model.

    ``excess`` is by how much: data served too early, too much or too little,
    or the rate above a link's capacity.
    """

    kind: str
    message: str
    coflow: str | None = None
    flow: int | None = None
    link: int | None = None
    interval: tuple[float, float] | None = None
    excess: float = 0.0


@dataclass(frozen=True, slots=True)
class FeasibilityReport:
    """The result of :func:`check_feasible`; true when the schedule is feasible.

    ``violations`` lists up to ``max_reports`` examples per kind, worst
    first; ``counts`` gives the total number per kind.
    """

    violations: tuple[Violation, ...]
    counts: Mapping[str, int]
    max_link_utilization: float
    """Largest rate / capacity over all links and segments."""
    tol: float

    @property
    def ok(self) -> bool:
        return not self.violations

    def __bool__(self) -> bool:
        return self.ok

    def kinds(self) -> set[str]:
        return {v.kind for v in self.violations}

    def raise_if_infeasible(self) -> None:
        if not self.ok:
            raise ScheduleError(str(self))

    def __str__(self) -> str:
        if self.ok:
            return f"feasible (tolerance {self.tol:g}, peak link load {self.max_link_utilization:.6g})"
        lines = ["infeasible: " + ", ".join(f"{n} {k}" for k, n in self.counts.items() if n)]
        lines += [f"  [{v.kind}] {v.message}" for v in self.violations]
        return "\n".join(lines)


def check_feasible(
    instance: Instance,
    schedule: Schedule,
    tol: float = 1e-6,
    *,
    deadlines: bool = False,
    max_reports: int = 5,
) -> FeasibilityReport:
    """Verify a schedule against an instance.

    Checks, each with a relative tolerance ``tol``:

    - every piece names a flow of the instance, with finite times and rate,
      ``end >= start`` and ``rate >= 0``; pieces of one flow do not overlap;
    - no flow is served before it is available (its coflow's release plus
      its delay): data served early <= ``tol * size``;
    - on every link and every segment between consecutive breakpoints, the
      sum of the rates of the flows crossing it <= ``capacity * (1 + tol)``
      (a segment no longer than :data:`TIME_ROUNDING` ``* max(1, |t|)`` is
      one instant whose breakpoints differ by rounding, and is not checked);
    - every flow receives exactly its size, within ``tol * size`` plus the
      resolution of its pieces' times (:func:`time_resolution`: a piece's
      amount is known only to ``rate`` times the spacing of float64 at its
      start and end, 2.3e-10 of a unit rate near ``t = 1e6``, which is more
      than ``tol`` of a 1e-6-byte flow);
    - ``starts_after``: data of each flow of the coflow served before each
      predecessor completes <= ``tol * size`` of that flow;
      ``finishes_before``: data of each flow of each predecessor served after
      the coflow completes <= ``tol * size`` of that flow;
    - with ``deadlines=True``: data of each flow served after its coflow's
      deadline <= ``tol * size`` of that flow.

    A flow or coflow *completes* when it has received ``size * (1 - tol)``
    (less its pieces' time resolution).

    Returns
    -------
    FeasibilityReport
        True when feasible; otherwise its violations name the flow, coflow,
        link and segment and say by how much.
    """
    if not isinstance(schedule, Schedule):
        raise ScheduleError(f"expected a Schedule, got {type(schedule).__name__}")
    if not (tol >= 0):
        raise ScheduleError(f"tolerance must be >= 0, got {tol!r}")
    F = instance.num_flows
    size = instance.flow_size
    ids = instance.ids
    fco = instance.flow_coflow
    found: dict[str, list[tuple[float, Violation]]] = {k: [] for k in VIOLATION_KINDS}
    counts = dict.fromkeys(VIOLATION_KINDS, 0)

    def report(kind: str, items: list[tuple[float, Violation]], total: int) -> None:
        counts[kind] += total
        found[kind].extend(items)

    def describe(f: int) -> str:
        k = int(fco[f])
        local = f - int(instance.ptr[k])
        return (
            f"flow {f} (flow {local} of coflow '{ids[k]}', "
            f"{int(instance.flow_src[f])}->{int(instance.flow_dst[f])})"
        )

    flow, start, end, rate = schedule.flow, schedule.start, schedule.end, schedule.rate

    # ---- structure
    bad = np.flatnonzero((flow < 0) | (flow >= F))
    report(
        "unknown-flow",
        [
            (
                0.0,
                Violation(
                    "unknown-flow",
                    f"piece {i} names flow {flow[i]}, but the instance has {plural(F, 'flow')}",
                    flow=int(flow[i]),
                ),
            )
            for i in bad[:max_reports]
        ],
        bad.size,
    )
    known = np.ones(flow.size, bool)
    known[bad] = False
    finite = np.isfinite(start) & np.isfinite(end) & np.isfinite(rate)
    bad = np.flatnonzero(known & ~finite)
    report(
        "not-finite",
        [
            (
                0.0,
                Violation(
                    "not-finite",
                    f"piece {i} of {describe(int(flow[i]))} has start "
                    f"{start[i]!r}, end {end[i]!r}, rate {rate[i]!r}",
                    coflow=ids[fco[flow[i]]],
                    flow=int(flow[i]),
                ),
            )
            for i in bad[:max_reports]
        ],
        bad.size,
    )
    ok = known & finite
    bad = np.flatnonzero(ok & (end < start))
    report(
        "bad-interval",
        [
            (
                float(start[i] - end[i]),
                Violation(
                    "bad-interval",
                    f"piece {i} of {describe(int(flow[i]))} ends at {end[i]:.9g} "
                    f"before it starts at {start[i]:.9g}",
                    coflow=ids[fco[flow[i]]],
                    flow=int(flow[i]),
                    interval=(float(start[i]), float(end[i])),
                    excess=float(start[i] - end[i]),
                ),
            )
            for i in bad
        ],
        bad.size,
    )
    ok &= end >= start
    neg = ok & (rate < 0)
    bad = np.flatnonzero(neg)
    report(
        "negative-rate",
        [
            (
                float(-rate[i]),
                Violation(
                    "negative-rate",
                    f"{describe(int(flow[i]))} has rate {rate[i]:.9g} on [{start[i]:.9g}, {end[i]:.9g})",
                    coflow=ids[fco[flow[i]]],
                    flow=int(flow[i]),
                    interval=(float(start[i]), float(end[i])),
                    excess=float(-rate[i]),
                ),
            )
            for i in bad
        ],
        bad.size,
    )
    # The remaining checks look at the pieces that really serve data.
    live = ok & (rate > 0) & (end > start)
    f, s, e, r = flow[live], start[live], end[live], rate[live]
    amt = r * (e - s)

    # ---- overlapping pieces of one flow
    if f.size > 1:
        order = np.lexsort((s, f))
        fs, ss, es = f[order], s[order], e[order]
        prev_end = _segmented_running_max(es, fs)
        same = fs[1:] == fs[:-1]
        gap = prev_end[:-1] - ss[1:]
        tol_t = tol * np.maximum(np.abs(ss[1:]), 1.0)
        bad = np.flatnonzero(same & (gap > tol_t))
        items = []
        for j in bad:
            ff = int(fs[j + 1])
            items.append(
                (
                    float(gap[j]),
                    Violation(
                        "overlap",
                        f"{describe(ff)} has overlapping pieces: one runs until "
                        f"{prev_end[j]:.9g}, the next starts at {ss[j + 1]:.9g}",
                        coflow=ids[fco[ff]],
                        flow=ff,
                        interval=(float(ss[j + 1]), float(prev_end[j])),
                        excess=float(gap[j]),
                    ),
                )
            )
        report("overlap", items, bad.size)

    # ---- release (and flow availability)
    avail = instance.flow_release[f] if F else np.zeros(0)
    early_piece = np.clip(np.minimum(e, avail) - s, 0.0, None) * r
    early = np.bincount(f, weights=early_piece, minlength=F)[:F] if F else np.zeros(0)
    bad = np.flatnonzero(early > tol * size)
    report(
        "before-release",
        [
            (
                float(early[i]),
                Violation(
                    "before-release",
                    f"{describe(int(i))} receives {early[i]:.9g} before it is "
                    f"available at {instance.flow_release[i]:.9g}",
                    coflow=ids[fco[i]],
                    flow=int(i),
                    excess=float(early[i]),
                ),
            )
            for i in bad
        ],
        bad.size,
    )

    # ---- link capacities
    peak = 0.0
    if f.size:
        peak, items, total = _capacity_violations(instance, f, s, e, r, tol, max_reports, describe)
        report("capacity", items, total)

    # ---- amounts
    served = np.bincount(f, weights=amt, minlength=F)[:F] if F else np.zeros(0)
    diff = served - size
    top = float(instance.fabric.capacity.max(initial=0.0))
    resolution = amount_resolution(f, s, e, r, F, top) if F else 0.0
    bad = np.flatnonzero(np.abs(diff) > tol * size + resolution)
    report(
        "amount",
        [
            (
                float(abs(diff[i])),
                Violation(
                    "amount",
                    f"{describe(int(i))} receives {served[i]:.12g} of its size "
                    f"{size[i]:.12g} ({'short' if diff[i] < 0 else 'over'} by {abs(diff[i]):.6g})",
                    coflow=ids[fco[i]],
                    flow=int(i),
                    excess=float(abs(diff[i])),
                ),
            )
            for i in bad
        ],
        bad.size,
    )

    # ---- dependencies and deadlines, measured in data
    if instance.has_dependencies or (deadlines and instance.has_deadlines):
        K = instance.num_coflows
        done = _completion_times(f, s, e, r, size, tol, top)
        ccomp = np.maximum.reduceat(done, instance.ptr[:-1]) if K else np.zeros(0)
        fk = fco[f]
        by_k = np.argsort(fk, kind="stable")
        bounds = np.searchsorted(fk[by_k], np.arange(K + 1))

        def measured(k: int, p: IntArray, amounts: FloatArray) -> tuple[float, bool]:
            """Coflow k's total of ``amounts`` (per piece ``p``), and whether one of its flows
            gets more than ``tol`` times its own size (a whole small flow is no rounding)."""
            lo = int(instance.ptr[k])
            per = np.bincount(f[p] - lo, weights=amounts, minlength=int(instance.ptr[k + 1]) - lo)
            return float(per.sum()), bool((per > tol * size[lo : lo + per.size]).any())

        def before(k: int, t: float) -> tuple[float, bool]:
            """Data of coflow k served before time t."""
            p = by_k[bounds[k] : bounds[k + 1]]
            return measured(k, p, np.clip(np.minimum(e[p], t) - s[p], 0.0, None) * r[p])

        def after(k: int, t: float) -> tuple[float, bool]:
            """Data of coflow k served after time t."""
            p = by_k[bounds[k] : bounds[k + 1]]
            return measured(k, p, np.clip(e[p] - np.maximum(s[p], t), 0.0, None) * r[p])

        for kind in ("starts-after", "finishes-before"):
            items = []
            preds = instance.starts_after if kind == "starts-after" else instance.finishes_before
            for k in range(K):
                for j in preds[k].tolist():
                    if kind == "starts-after":
                        amount, bad_flow = before(k, ccomp[j])
                        msg = (
                            f"coflow '{ids[k]}' receives {amount:.9g} before coflow "
                            f"'{ids[j]}' completes at {ccomp[j]:.9g}"
                        )
                    else:
                        amount, bad_flow = after(j, ccomp[k])
                        msg = (
                            f"coflow '{ids[k]}' completes at {ccomp[k]:.9g} but coflow "
                            f"'{ids[j]}' still receives {amount:.9g} after that"
                        )
                    if bad_flow:
                        items.append((amount, Violation(kind, msg, coflow=ids[k], excess=amount)))
            report(kind, items, len(items))
        if deadlines and instance.has_deadlines:
            dl = np.where(np.isfinite(instance.deadline), instance.deadline, np.inf)
            late_piece = np.clip(e - np.maximum(s, dl[fk]), 0.0, None) * r
            late = np.bincount(fk, weights=late_piece, minlength=K)[:K]
            late_flow = np.bincount(f, weights=late_piece, minlength=size.size)
            # per flow, as for the other checks: a whole small flow late is no rounding
            bad = np.unique(fco[np.flatnonzero(late_flow > tol * size)])
            report(
                "deadline",
                [
                    (
                        float(late[k]),
                        Violation(
                            "deadline",
                            f"coflow '{ids[k]}' receives {late[k]:.9g} after its deadline "
                            f"{dl[k]:.9g} (completes at {ccomp[k]:.9g})",
                            coflow=ids[k],
                            excess=float(late[k]),
                        ),
                    )
                    for k in bad
                ],
                bad.size,
            )

    violations: list[Violation] = []
    for kind in VIOLATION_KINDS:
        worst = sorted(found[kind], key=lambda x: -x[0])[:max_reports]
        violations.extend(v for _, v in worst)
    return FeasibilityReport(tuple(violations), counts, float(peak), tol)


TIME_ROUNDING = 1e-12
"""Relative length (of ``max(1, |t|)``) up to which a segment between two breakpoints of a
link counts as one instant in the capacity check: the simulator's own tolerance for
simultaneous events, and far above the rounding of times computed as ``t + amount / rate``."""


def _segmented_running_max(values: FloatArray, group: IntArray) -> FloatArray:
    """Running maximum within runs of equal ``group`` (sorted by group)."""
    out = values.astype(np.float64, copy=True)
    n = out.size
    d = 1
    while d < n:
        same = group[d:] == group[:-d]
        if not same.any():
            break
        out[d:] = np.where(same, np.maximum(out[d:], out[:-d]), out[d:])
        d *= 2
    return out


def _capacity_violations(
    instance: Instance,
    f: IntArray,
    s: FloatArray,
    e: FloatArray,
    r: FloatArray,
    tol: float,
    max_reports: int,
    describe: Any,
) -> tuple[float, list[tuple[float, Violation]], int]:
    """Sweep every link's rate over time; report segments above capacity."""
    fabric = instance.fabric
    cap = fabric.capacity
    inc = fabric.routes(instance.flow_src[f], instance.flow_dst[f]).tocoo()
    piece = np.asarray(inc.row, dtype=np.int64)
    link = np.asarray(inc.col, dtype=np.int64)
    mult = np.asarray(inc.data, dtype=np.float64)
    n = piece.size
    ev_link = np.concatenate([link, link])
    ev_time = np.concatenate([s[piece], e[piece]])
    ev_delta = np.concatenate([r[piece] * mult, -r[piece] * mult])
    order = np.lexsort((ev_time, ev_link))
    ev_link, ev_time, ev_delta = ev_link[order], ev_time[order], ev_delta[order]
    # one row per distinct (link, time): the rate right after that instant
    new = np.ones(2 * n, bool)
    new[1:] = (ev_link[1:] != ev_link[:-1]) | (ev_time[1:] != ev_time[:-1])
    heads = np.flatnonzero(new)
    delta = np.add.reduceat(ev_delta, heads)
    lk = ev_link[heads]
    tm = ev_time[heads]
    level = _segmented_cumsum(delta, lk)
    # a segment runs from this row's time to the next row's time on the same link
    nxt_same = np.zeros(heads.size, bool)
    nxt_same[:-1] = lk[1:] == lk[:-1]
    seg_end = np.empty(heads.size)
    seg_end[:-1] = tm[1:]
    seg_end[-1] = tm[-1]
    # a segment no longer than TIME_ROUNDING of its time is rounding of two breakpoints
    # that are one instant (a piece that ends an ulp after the next one starts)
    real = nxt_same & (seg_end - tm > TIME_ROUNDING * np.maximum(np.abs(seg_end), 1.0))
    ratio = np.where(real, level / cap[lk], 0.0)
    peak = float(ratio.max(initial=0.0))
    over = np.flatnonzero(real & (level > cap[lk] * (1.0 + tol)))
    items = []
    worst = over[np.argsort(-(level[over] - cap[lk[over]]))][:max_reports]
    for i in worst:
        t0, t1 = float(tm[i]), float(seg_end[i])
        L = int(lk[i])
        # flows on this link during the segment, for the message
        on = piece[(link == L) & (s[piece] < t1) & (e[piece] > t0)]
        flows = sorted({int(f[p]) for p in on})
        shown = ", ".join(describe(x) for x in flows[:3]) + (" ..." if len(flows) > 3 else "")
        excess = float(level[i] - cap[L])
        items.append(
            (
                excess,
                Violation(
                    "capacity",
                    f"{fabric.link_name(L)} carries {level[i]:.9g} > capacity {cap[L]:.9g} "
                    f"(by {excess:.6g}) during [{t0:.9g}, {t1:.9g}); {len(flows)} flows: {shown}",
                    link=L,
                    interval=(t0, t1),
                    excess=excess,
                ),
            )
        )
    return peak, items, int(over.size)
