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

import itertools
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from . import _tied
from ._files import finite_number
from ._frozen import Frozen
from ._frozen import readonly as _readonly
from ._text import plural
from .errors import InputError, ScheduleError
from .instance import Instance

__all__ = [
    "MAX_TOL",
    "VIOLATION_KINDS",
    "FeasibilityReport",
    "LinkLoad",
    "Schedule",
    "ScheduleBuilder",
    "TiedPieces",
    "Violation",
    "check_feasible",
    "time_resolution",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]



# --------------------------------------------------------------------------- background load


@dataclass(frozen=True, slots=True, eq=False)
class LinkLoad(Frozen):
    """A load on links over time, besides the schedule's flows (background traffic).

    Row ``i``: link ``link[i]`` carries ``load[i]`` during ``[t0[i], t1[i])``; rows of one
    link may follow each other or overlap (they add up). :func:`check_feasible` adds it to
    the schedule's rates on every link (``background=``). Simulations under background
    traffic return the load they applied (:attr:`coflowopt.sim.SimulationResult.background`).
    """

    link: IntArray
    t0: FloatArray
    t1: FloatArray
    load: FloatArray

    def __post_init__(self) -> None:
        link = _indices(self.link, "link")
        t0, t1, load = (_floats(getattr(self, n), n) for n in ("t0", "t1", "load"))
        if not (link.size == t0.size == t1.size == load.size):
            raise ScheduleError("a link load needs one link, t0, t1 and load per row")
        if not (np.all(np.isfinite(t0)) and np.all(np.isfinite(t1)) and np.all(t1 >= t0)
                and np.all(np.isfinite(load)) and np.all(load >= 0) and np.all(link >= 0)):
            raise ScheduleError("a link load needs links >= 0, finite times with t1 >= t0 and "
                                "finite loads >= 0")
        for name, arr in (("link", link), ("t0", t0), ("t1", t1), ("load", load)):
            object.__setattr__(self, name, _readonly(arr))

    def changes(self, num_links: int) -> tuple[IntArray, FloatArray, FloatArray]:
        """Per row a start and an end: (link, time, change of load), sorted by link then time."""
        if self.link.size and int(self.link.max()) >= num_links:
            raise ScheduleError(f"the background load names link {int(self.link.max())}; the fabric "
                                f"has {num_links} links")
        link = np.concatenate([self.link, self.link])
        tm = np.concatenate([self.t0, self.t1])
        d = np.concatenate([self.load, -self.load])
        order = np.lexsort((tm, link))
        return link[order], tm[order], d[order]


# --------------------------------------------------------------------------- Schedule


def _indices(values: Any, what: str) -> IntArray:
    """Integer indices as ``int64`` (not truncated: an index 1.99 is a mistake, not 1)."""
    raw = np.asarray(values).reshape(-1)
    if raw.dtype.kind in "iu":
        return np.array(raw, dtype=np.int64, copy=True)
    try:
        as_float = np.asarray(raw, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ScheduleError(f"{what} must be numeric: {exc}") from None
    bad = np.flatnonzero(~np.isfinite(as_float) | (as_float != np.round(as_float)))
    if bad.size:
        raise ScheduleError(f"{what} must be integers, got {float(as_float[bad[0]])!r} "
                            f"(entry {int(bad[0])})")
    return as_float.astype(np.int64)


def _floats(values: Any, what: str) -> FloatArray:
    try:
        return np.array(values, dtype=np.float64, copy=True).reshape(-1)
    except (TypeError, ValueError) as exc:
        raise ScheduleError(f"{what} must be numeric: {exc}") from None


@dataclass(frozen=True, slots=True, eq=False)
class TiedPieces(Frozen):
    """Pieces whose rates follow level series, stored compactly.

    Tied piece ``i`` serves flow ``flow[i]`` from ``start[i]`` to ``end[i]`` at
    ``weight[i]`` times the smaller of the levels of series ``series_a[i]`` and
    ``series_b[i]`` (``-1``: no second series). It stands for the constant-rate pieces
    between the times that minimum changes (pieces at rate 0 left out): per-flow fair
    sharing on a big switch gives every flow the smaller level of its two ports, so the
    levels' changes and one tied piece per flow state the whole schedule.

    Series ``g`` has level ``level[j]`` from ``level_time[j]`` on (for each ``j`` with
    ``level_series[j] == g``) until its next change, and no limit (``inf``) before its
    first. The changes are kept sorted by series and time; of two at the same time the
    one given last counts. Construction checks shapes, types, indices and that times are
    finite with ``end >= start`` (the pieces are defined by them); weights and levels
    may be anything, :func:`check_feasible` reports pieces whose rate is not finite or
    is negative.
    """

    flow: IntArray
    start: FloatArray
    end: FloatArray
    weight: FloatArray
    series_a: IntArray
    series_b: IntArray
    level_series: IntArray
    level_time: FloatArray
    level: FloatArray
    level_ptr: IntArray = field(init=False, repr=False)
    """Series ``g``'s changes are ``level_ptr[g] .. level_ptr[g + 1] - 1``."""
    _sums: dict[float, FloatArray] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        cols = {
            "flow": _indices(self.flow, "tied piece flow indices"),
            "start": _floats(self.start, "tied piece starts"),
            "end": _floats(self.end, "tied piece ends"),
            "weight": _floats(self.weight, "tied piece weights"),
            "series_a": _indices(self.series_a, "tied piece series"),
            "series_b": _indices(self.series_b, "tied piece series"),
            "level_series": _indices(self.level_series, "level series"),
            "level_time": _floats(self.level_time, "level times"),
            "level": _floats(self.level, "levels"),
        }
        n = {k: v.size for k, v in cols.items()}
        if len({n[k] for k in ("flow", "start", "end", "weight", "series_a", "series_b")}) > 1:
            raise ScheduleError(f"tied piece arrays differ in length: {n}")
        if len({n[k] for k in ("level_series", "level_time", "level")}) > 1:
            raise ScheduleError(f"level arrays differ in length: {n}")
        for name, lowest in (("series_a", 0), ("series_b", -1), ("level_series", 0)):
            bad = np.flatnonzero(cols[name] < lowest)
            if bad.size:
                raise ScheduleError(f"{name}[{int(bad[0])}] is {int(cols[name][bad[0]])}; series "
                                    f"are numbered from 0{' (-1: none)' if lowest < 0 else ''}")
        s, e = cols["start"], cols["end"]
        bad = np.flatnonzero(~(np.isfinite(s) & np.isfinite(e) & (e >= s)))
        if bad.size:
            i = int(bad[0])
            raise ScheduleError(f"tied piece {i} must have finite times with end >= start, got "
                                f"[{s[i]!r}, {e[i]!r})")
        bad = np.flatnonzero(~np.isfinite(cols["level_time"]))
        if bad.size:
            raise ScheduleError(f"level change {int(bad[0])} has time "
                                f"{cols['level_time'][bad[0]]!r}")
        order = np.lexsort((cols["level_time"], cols["level_series"]))
        last = np.ones(order.size, bool)  # of changes at one time, the last given
        last[:-1] = False
        for name in ("level_series", "level_time"):
            # (one sorted column at a time: a log can hold tens of millions of changes)
            sc = cols[name][order]
            last[:-1] |= sc[1:] != sc[:-1]
            del sc
        keep = order[last]
        del order, last
        for name in ("level_series", "level_time", "level"):
            cols[name] = cols[name][keep]
        top = max(int(cols["series_a"].max(initial=-1)), int(cols["series_b"].max(initial=-1)),
                  int(cols["level_series"].max(initial=-1)))
        ptr = np.searchsorted(cols["level_series"], np.arange(top + 2))
        for name, arr in (*cols.items(), ("level_ptr", ptr.astype(np.int64))):
            object.__setattr__(self, name, _readonly(arr))
        object.__setattr__(self, "_sums", {})

    @property
    def num_tied(self) -> int:
        return int(self.flow.size)

    @property
    def num_levels(self) -> int:
        return int(self.level.size)

    @property
    def num_series(self) -> int:
        return int(self.level_ptr.size - 1)

    def sums(self, top: float | None = None, cut_lo: FloatArray | None = None,
             cut_hi: FloatArray | None = None, members: IntArray | None = None) -> FloatArray:
        """Per tied piece (``members``: those), the sums of :func:`coflowopt._tied.walk`
        over its pieces: resolutions with rates up to ``top`` (``None``: any, when only
        the other columns are wanted), amounts before ``cut_lo`` and after ``cut_hi`` (per
        tied piece; none by default)."""
        cache = cut_lo is None and cut_hi is None and members is None
        if cache and self._sums and (top is None or top in self._sums):
            return next(iter(self._sums.values())) if top is None else self._sums[top]
        top = np.inf if top is None else top
        idx = np.arange(self.num_tied) if members is None else members
        lo = np.full(idx.size, -np.inf) if cut_lo is None else np.asarray(cut_lo, np.float64)
        hi = np.full(idx.size, np.inf) if cut_hi is None else np.asarray(cut_hi, np.float64)
        out = np.zeros((idx.size, _tied.COLUMNS))
        self._walk(idx, float(top), lo, hi, out, None)
        if cache:
            self._sums.clear()  # one set at a time: 80 bytes per tied piece
            self._sums[top] = _readonly(out)
        return out

    def expand(self, members: IntArray | None = None) -> tuple[IntArray, FloatArray, FloatArray,
                                                               FloatArray]:
        """The pieces (of ``members``, default all): flow, start, end, rate arrays, tied
        piece by tied piece, each in time order."""
        idx = np.arange(self.num_tied) if members is None else members
        count = self.sums()[idx, _tied.COUNT].astype(np.int64)
        off = np.zeros(idx.size, np.int64)
        np.cumsum(count[:-1], out=off[1:])
        n = int(count.sum())
        out = (np.empty(n, np.int64), np.empty(n), np.empty(n), np.empty(n))
        scratch = np.zeros((idx.size, _tied.COLUMNS))
        self._walk(idx, np.inf, np.full(idx.size, -np.inf), np.full(idx.size, np.inf), scratch,
                   (off, *out))
        return out

    def _walk(self, idx: IntArray, top: float, lo: FloatArray, hi: FloatArray, sums: FloatArray,
              emit: tuple[IntArray, IntArray, FloatArray, FloatArray, FloatArray] | None) -> None:
        whole = idx.size == self.num_tied
        pick = (lambda a: a) if whole else (lambda a: np.ascontiguousarray(a[idx]))
        off, of, ot0, ot1, orate = emit if emit is not None else (
            np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0), np.zeros(0), np.zeros(0))
        _tied.walk(pick(self.flow), pick(self.start), pick(self.end), pick(self.weight),
                   pick(self.series_a), pick(self.series_b), self.level_ptr, self.level_time,
                   self.level, np.spacing(np.abs(self.level_time)), top, lo, hi, sums, off, of,
                   ot0, ot1, orate, emit is not None)

    def per_flow(self, column: int, num_flows: int, top: float | None = None) -> FloatArray:
        """A column of :meth:`sums` added up per flow (tied pieces of unknown flows left out)."""
        f = self.flow
        ok = (f >= 0) & (f < num_flows)
        return np.bincount(f[ok], weights=self.sums(top)[ok, column],
                           minlength=num_flows).astype(np.float64)

    def shifted(self, offset: float) -> TiedPieces:
        return TiedPieces(self.flow, self.start + offset, self.end + offset, self.weight,
                          self.series_a, self.series_b, self.level_series,
                          self.level_time + offset, self.level)

    def renumbered(self, mapping: IntArray) -> TiedPieces:
        return TiedPieces(mapping[self.flow], self.start, self.end, self.weight, self.series_a,
                          self.series_b, self.level_series, self.level_time, self.level)

    def _select(self, idx: IntArray) -> TiedPieces:
        """These tied pieces only, on the same levels (shared, not checked again)."""
        if idx.size == self.num_tied:
            return self
        out = object.__new__(TiedPieces)
        for name in ("flow", "start", "end", "weight", "series_a", "series_b"):
            object.__setattr__(out, name, _readonly(getattr(self, name)[idx]))
        for name in ("level_series", "level_time", "level", "level_ptr"):
            object.__setattr__(out, name, getattr(self, name))
        object.__setattr__(out, "_sums", {})
        return out

    @classmethod
    def concatenate(cls, parts: Sequence[TiedPieces]) -> TiedPieces:
        """One set of tied pieces; each part's series are numbered after the previous
        parts' (their levels are their own)."""
        shift = np.cumsum([0] + [p.num_series for p in parts[:-1]])

        def cat(name: str, series: bool = False) -> np.ndarray:
            arrays = [getattr(p, name) for p in parts]
            if series:
                arrays = [np.where(a >= 0, a + d, a) for a, d in zip(arrays, shift, strict=True)]
            return np.concatenate(arrays)

        return cls(cat("flow"), cat("start"), cat("end"), cat("weight"), cat("series_a", True),
                   cat("series_b", True), cat("level_series", True), cat("level_time"),
                   cat("level"))


class Schedule:
    """Piecewise-constant rates per flow.

    Piece ``i`` serves flow ``flow[i]`` at ``rate[i]`` over ``[start[i], end[i])``.
    Pieces of one flow should not overlap (the verifier reports it if they
    do). Construction checks only shapes and types; :func:`check_feasible`
    checks everything else.

    Some pieces may be held compactly as :class:`TiedPieces` (``tied``; the simulator's
    per-flow fair sharing records them: 232 million pieces on the Facebook trace in 706,397
    tied pieces and 1.5 million level changes). ``flow``, ``start``, ``end`` and ``rate``
    are then every piece, the tied ones expanded on first use (at 32 bytes a piece); the
    verifier, the schedule files and the per-flow queries (:meth:`served`,
    :meth:`flow_span`, :meth:`coflow_start`, ...) work on the compact form (those queries
    leave out tied pieces' pieces at a rate that is not finite or is negative:
    :func:`check_feasible` reports them).

    Immutable (not a data class: its arrays are computed on first use).
    """

    __slots__ = ("_count", "_direct", "_full", "_tied")
    _direct: tuple[IntArray, FloatArray, FloatArray, FloatArray]
    _tied: TiedPieces | None
    _full: tuple[IntArray, FloatArray, FloatArray, FloatArray] | None
    _count: int | None

    def __init__(self, flow: npt.ArrayLike, start: npt.ArrayLike, end: npt.ArrayLike,
                 rate: npt.ArrayLike, *, tied: TiedPieces | None = None) -> None:
        f = _indices(flow, "flow indices")
        start_, end_, rate_ = (_floats(x, "schedule arrays") for x in (start, end, rate))
        if not (f.size == start_.size == end_.size == rate_.size):
            raise ScheduleError(
                f"schedule arrays differ in length: flow {f.size}, start {start_.size}, "
                f"end {end_.size}, rate {rate_.size}"
            )
        if tied is not None and not isinstance(tied, TiedPieces):
            raise ScheduleError(f"tied must be TiedPieces, got {type(tied).__name__}")
        self._set((f, start_, end_, rate_), tied)

    def _set(self, direct: tuple[IntArray, FloatArray, FloatArray, FloatArray],
             tied: TiedPieces | None) -> None:
        for a in direct:
            _readonly(a)
        object.__setattr__(self, "_direct", direct)
        object.__setattr__(self, "_tied", tied if tied is not None and tied.num_tied else None)
        object.__setattr__(self, "_full", None if self._tied is not None else direct)
        object.__setattr__(self, "_count", None)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"Schedule is immutable (cannot set {name})")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"Schedule is immutable (cannot delete {name})")

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # the direct pieces and the tied ones, not the expansion
        return (_rebuild_schedule, (*self._direct, self._tied))

    # -------------------------------------------------------------- construction

    @classmethod
    def _adopt(cls, flow: IntArray, start: FloatArray, end: FloatArray, rate: FloatArray,
               tied: TiedPieces | None = None) -> Schedule:
        """A schedule that takes over arrays nobody else holds, without copying them.

        For the simulator's recorded pieces (hundreds of millions on a large trace,
        where the constructor's copies doubled the peak memory). The arrays must be
        1-D, of one length, ``int64`` flows and ``float64`` times and rates.
        """
        arrays = (flow, start, end, rate)
        assert flow.dtype == np.int64 and all(a.dtype == np.float64 for a in arrays[1:])
        assert all(a.ndim == 1 and a.size == flow.size for a in arrays)
        out = object.__new__(cls)
        out._set(arrays, tied)
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
        """All pieces of ``schedules`` (the tied pieces stay tied, each to its own levels)."""
        parts = list(schedules)
        if not parts:
            return cls.empty()
        direct = [np.concatenate([s._direct[i] for s in parts]) for i in range(4)]
        tied = [s._tied for s in parts if s._tied is not None]
        return cls(*direct, tied=TiedPieces.concatenate(tied) if tied else None)

    # -------------------------------------------------------------- the pieces

    @property
    def flow(self) -> IntArray:
        return self._pieces()[0]

    @property
    def start(self) -> FloatArray:
        return self._pieces()[1]

    @property
    def end(self) -> FloatArray:
        return self._pieces()[2]

    @property
    def rate(self) -> FloatArray:
        return self._pieces()[3]

    def _pieces(self) -> tuple[IntArray, FloatArray, FloatArray, FloatArray]:
        full = self._full
        if full is None:
            assert self._tied is not None
            full = tuple(_readonly(np.concatenate([d, t]))  # type: ignore[assignment]
                         for d, t in zip(self._direct, self._tied.expand(), strict=True))
            object.__setattr__(self, "_full", full)
        return full  # type: ignore[return-value]

    @property
    def tied(self) -> TiedPieces | None:
        """The pieces held compactly (``None``: none)."""
        return self._tied

    @property
    def direct(self) -> Schedule:
        """The schedule without its tied pieces."""
        return self if self._tied is None else Schedule._adopt(*self._direct)

    def expanded(self) -> Schedule:
        """The same pieces, none of them tied."""
        return self if self._tied is None else Schedule._adopt(*self._pieces())

    # -------------------------------------------------------------- queries

    @property
    def num_pieces(self) -> int:
        if self._count is None:
            n = self._direct[0].size
            if self._tied is not None:
                n += int(self._tied.sums()[:, _tied.COUNT].sum())
            object.__setattr__(self, "_count", n)
        assert self._count is not None
        return self._count

    def amounts(self) -> FloatArray:
        """Data served by each piece."""
        return self.rate * (self.end - self.start)

    def served(self, num_flows: int) -> FloatArray:
        """Total data served per flow."""
        f, s, e, r = self._direct
        out = _per_flow_sums(f, num_flows, lambda sl: r[sl] * (e[sl] - s[sl]))
        if self._tied is not None:
            out += self._tied.per_flow(_tied.AMOUNT, num_flows)
        return out

    def resolution(self, num_flows: int, top: float) -> FloatArray:
        """:func:`amount_resolution` of every piece (rates up to ``top``), per flow
        (``0 .. num_flows - 1``)."""
        f, s, e, r = self._direct
        t = self._tied
        if t is not None and not ((t.flow >= 0) & (t.flow < num_flows)).all():
            t = t._select(np.flatnonzero((t.flow >= 0) & (t.flow < num_flows)))
        return amount_resolution(f, s, e, r, num_flows, top,
                                 tied=None if t is None else (t, t.sums(top)))

    def flow_span(self, num_flows: int) -> tuple[FloatArray, FloatArray]:
        """Per flow, the first time it is served at a positive rate and the end of its last
        such piece (``inf`` and ``-inf`` if never)."""
        f, s, e, r = self._direct
        first = np.full(num_flows, np.inf)
        last = np.full(num_flows, -np.inf)
        pos = (r > 0) & (e > s) & (f >= 0) & (f < num_flows)
        np.minimum.at(first, f[pos], s[pos])
        np.maximum.at(last, f[pos], e[pos])
        if self._tied is not None:
            t = self._tied
            ok = (t.flow >= 0) & (t.flow < num_flows)
            sums = t.sums()
            np.minimum.at(first, t.flow[ok], sums[ok, _tied.FIRST])
            np.maximum.at(last, t.flow[ok], sums[ok, _tied.LAST])
        return first, last

    def flow_completion(self, instance: Instance, *, rtol: float = 1e-9) -> FloatArray:
        """Time each flow has received its size (``inf`` if it never does).

        That is the end of the piece with which the flow's cumulative service
        reaches ``size * (1 - rtol)``; later pieces that carry only rounding
        noise do not delay it.
        """
        top = float(instance.fabric.capacity.max(initial=0.0))
        out = np.full(instance.num_flows, np.inf)
        for f, s, e, r in self.pieces_by_flow(instance.num_flows):
            np.minimum(out, _completion_times(f, s, e, r, instance.flow_size, rtol, top), out=out)
        return out

    def pieces_by_flow(self, num_flows: int) -> Iterator[tuple[IntArray, FloatArray, FloatArray,
                                                             FloatArray]]:
        """The pieces of flows ``0 .. num_flows - 1``, in parts of about :data:`SLICE` pieces
        that each hold all pieces of their flows (the tied ones expanded a part at a time;
        without tied pieces, every piece at once)."""
        if self._tied is None or self._full is not None:
            yield self._pieces()
            return
        t = self._tied
        df = self._direct[0]
        per_flow = t.per_flow(_tied.COUNT, num_flows)
        known = (df >= 0) & (df < num_flows)
        per_flow += np.bincount(df[known], minlength=num_flows)
        part = np.cumsum(per_flow) // SLICE  # the flows of one part share this number
        edges = np.searchsorted(part, np.arange(int(part[-1]) + 2 if num_flows else 1))
        for lo, hi in itertools.pairwise(edges):
            if lo == hi:
                continue
            sel = (df >= lo) & (df < hi)
            pieces = t.expand(np.flatnonzero((t.flow >= lo) & (t.flow < hi)))
            yield tuple(np.concatenate([d[sel], x])  # type: ignore[misc]
                        for d, x in zip(self._direct, pieces, strict=True))

    def coflow_completion(self, instance: Instance, *, rtol: float = 1e-9) -> FloatArray:
        """Completion time ``C_k`` of each coflow (its last flow's completion)."""
        fc = self.flow_completion(instance, rtol=rtol)
        if instance.num_flows == 0:
            return np.zeros(0)
        return np.maximum.reduceat(fc, instance.ptr[:-1])

    def coflow_start(self, instance: Instance) -> FloatArray:
        """First time each coflow is served at a positive rate (``inf`` if never)."""
        if instance.num_flows == 0:
            return np.zeros(0)
        first, _ = self.flow_span(instance.num_flows)
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
        reader taking a flow's last piece as its end would see a later time. (Tied pieces
        come out expanded.)
        """
        fc = self.flow_completion(instance, rtol=rtol)
        done = fc[self.flow]
        keep = self.start < done
        if keep.all():
            return self
        return Schedule(self.flow[keep], self.start[keep], self.end[keep], self.rate[keep])

    def shifted(self, offset: float) -> Schedule:
        """The same schedule ``offset`` time units later."""
        if not finite_number(offset):
            raise ScheduleError(f"offset must be a finite number, got {offset!r}")
        f, s, e, r = self._direct
        return Schedule(f, s + offset, e + offset, r,
                        tied=None if self._tied is None else self._tied.shifted(offset))

    def renumbered(self, mapping: npt.ArrayLike) -> Schedule:
        """The same pieces, flow ``i`` called ``mapping[i]``."""
        m = _indices(mapping, "the mapping")
        f, s, e, r = self._direct
        used = [f] if self._tied is None else [f, self._tied.flow]
        top = max((int(x.max()) for x in used if x.size), default=-1)
        if np.ndim(mapping) != 1 or m.size <= top:
            raise ScheduleError(f"the mapping must be a list of {top + 1} or more flow indices "
                                f"(the schedule serves flow {top}), got shape {np.shape(mapping)}")
        return Schedule(m[f], s, e, r,
                        tied=None if self._tied is None else self._tied.renumbered(m))

    def __repr__(self) -> str:
        if self.num_pieces == 0:
            return "Schedule(pieces=0)"
        f, s, e, _ = self._direct
        t = self._tied
        parts = [f] if t is None else [f, t.flow]
        flows = np.unique(np.concatenate(parts)).size
        lo = min(float(s.min(initial=np.inf)), np.inf if t is None else float(t.start.min()))
        hi = max(float(e.max(initial=-np.inf)), -np.inf if t is None else float(t.end.max()))
        tied = "" if t is None else f", tied={t.num_tied}, levels={t.num_levels}"
        return f"Schedule(pieces={self.num_pieces}, flows={flows}, span=[{lo:g}, {hi:g}]{tied})"


def _rebuild_schedule(flow: IntArray, start: FloatArray, end: FloatArray, rate: FloatArray,
                      tied: TiedPieces | None) -> Schedule:
    return Schedule(flow, start, end, rate, tied=tied)


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
        f = _indices(flows, "flow indices")
        cols = []
        for name, x in (("start", start), ("end", end), ("rates", rates)):
            v = _floats(x, "schedule arrays")
            if v.size not in (1, f.size):
                raise ScheduleError(f"{name} has {v.size} entries for {f.size} flows "
                                    "(give one per flow, or one for all)")
            cols.append(np.broadcast_to(v, f.shape))
        s, e, r = cols
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
                      num_flows: int, top: float, *,
                      tied: tuple[TiedPieces | None, FloatArray] | None = None) -> FloatArray:
    """How precisely float64 times can state each flow's total amount: the
    :func:`time_resolution` of its pieces, plus one instant at its last time too short to
    state (a flow that finishes with less than ``top * spacing(t)`` left gets it in no
    time: a 1e-6 B flow at t = 1.2e8 finished its last 1.1e-10 B at rate 0.1
    that way). ``flow`` indexes ``0 .. num_flows - 1``; ``tied``: also tied pieces (of
    those flows) with their :meth:`TiedPieces.sums` for rates up to ``top``."""
    out = _per_flow_sums(flow, num_flows,
                         lambda sl: time_resolution(start[sl], end[sl], rate[sl], top))
    last = _last_abs_end(flow, end, num_flows)
    t, sums = tied if tied is not None else (None, None)
    if t is not None and sums is not None:
        out += np.bincount(t.flow, weights=sums[:, _tied.RESOLUTION], minlength=num_flows)
        np.maximum.at(last, t.flow, sums[:, _tied.MAXEND])
    return out + top * np.spacing(last)


def _sum_by(index: IntArray, weights: FloatArray, n: int) -> FloatArray:
    """``weights`` added up per ``index`` in ``0 .. n - 1`` (floats even when empty)."""
    return np.bincount(index, weights=weights, minlength=n)[:n].astype(np.float64, copy=False)


def _last_abs_end(flow: IntArray, end: FloatArray, num_flows: int) -> FloatArray:
    """Per flow, the largest ``|end|`` of its pieces (0 if none; unknown flows left out)."""
    last = np.zeros(num_flows)
    known = (flow >= 0) & (flow < num_flows)
    f, e = flow[known], end[known]
    for lo in range(0, f.size, SLICE):
        np.maximum.at(last, f[lo : lo + SLICE], np.abs(e[lo : lo + SLICE]))
    return last


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


MAX_TOL = 0.01
"""The loosest tolerance :func:`check_feasible` takes: at 1 an empty schedule passed
(nothing delivered is within 100% of every amount)."""


def check_feasible(
    instance: Instance,
    schedule: Schedule,
    tol: float = 1e-6,
    *,
    deadlines: bool = False,
    max_reports: int = 5,
    background: LinkLoad | None = None,
) -> FeasibilityReport:
    """Verify a schedule against an instance.

    Checks, each with a relative tolerance ``tol`` (at most :data:`MAX_TOL`):

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
      deadline <= ``tol * size`` of that flow;
    - with ``background`` (a :class:`LinkLoad`, e.g. what a simulation under background
      traffic applied): the capacity check counts it on every link beside the flows.

    A flow or coflow *completes* when it has received ``size * (1 - tol)``
    (less its pieces' time resolution).

    Tied pieces (:attr:`Schedule.tied`) are checked in their compact form, by the same
    rules, with this module's own loops (:mod:`coflowopt._tied`): their pieces' sums per
    flow, and every link's rate over time from bundles of tied pieces on the same series
    and route; a tied piece takes part in the overlap check with its span, from its first
    to its last instant served. Their reports name the tied piece.

    Returns
    -------
    FeasibilityReport
        True when feasible; otherwise its violations name the flow, coflow,
        link and segment and say by how much.
    """
    if not isinstance(instance, Instance):
        raise ScheduleError(f"expected an Instance, got {type(instance).__name__}")
    if not isinstance(schedule, Schedule):
        raise ScheduleError(f"expected a Schedule, got {type(schedule).__name__}")
    if not (finite_number(tol) and 0 <= tol <= MAX_TOL):
        raise ScheduleError(f"tolerance must be from 0 to {MAX_TOL:g}, got {tol!r}")
    if background is not None and not isinstance(background, LinkLoad):
        raise ScheduleError(f"background must be a LinkLoad (a simulation's result.background), "
                            f"got {type(background).__name__}")
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

    top = float(instance.fabric.capacity.max(initial=0.0))
    # the plain pieces (the tied ones are checked in their compact form below)
    flow, start, end, rate = schedule._direct

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
    if live.all():
        f, s, e, r = flow, start, end, rate
    else:
        f, s, e, r = flow[live], start[live], end[live], rate[live]
    served = _sum_by(f, r * (e - s), F)  # data per flow (the tied pieces' added below)
    tied = schedule.tied
    ts = np.zeros((0, _tied.COLUMNS))
    if tied is not None:
        tied, ts = _check_tied(instance, tied, top, deadlines, max_reports, report, describe)

    # ---- overlapping pieces of one flow (a tied piece occupies its flow from its first
    # piece's start to its last piece's end)
    if tied is not None:
        has = ts[:, _tied.FIRST] < np.inf
        _check_overlap(np.concatenate([f, tied.flow[has]]), np.concatenate([s, ts[has, _tied.FIRST]]),
                       np.concatenate([e, ts[has, _tied.LAST]]), tol, ids, fco, describe, report)
    else:
        _check_overlap(f, s, e, tol, ids, fco, describe, report)

    # ---- release (and flow availability)
    avail = instance.flow_release[f] if F else np.zeros(0)
    early_piece = np.clip(np.minimum(e, avail) - s, 0.0, None) * r
    early = _sum_by(f, early_piece, F)
    if tied is not None:
        early += np.bincount(tied.flow, weights=ts[:, _tied.EARLY], minlength=F)
    del avail, early_piece
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
    if tied is not None:
        if background is not None and background.link.size:
            raise ScheduleError("a schedule with tied pieces is checked without a background load "
                                "(simulations under background traffic record plain pieces)")
        peak, items, total = _tied_capacity(instance, f, s, e, r, tied, tol, max_reports, describe)
        report("capacity", items, total)
    elif f.size:
        peak, items, total = _capacity_violations(instance, f, s, e, r, tol, max_reports, describe,
                                                  background)
        report("capacity", items, total)

    # ---- amounts
    if tied is not None:
        served += np.bincount(tied.flow, weights=ts[:, _tied.AMOUNT], minlength=F)
    diff = served - size
    resolution = amount_resolution(f, s, e, r, F, top, tied=(tied, ts)) if F else 0.0
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
        done = np.full(F, np.inf)
        for pf, ps, pe, pr in Schedule._adopt(f, s, e, r, tied).pieces_by_flow(F):
            ok = np.isfinite(pr)  # (pieces at a rate that is not finite are reported above)
            np.minimum(done, _completion_times(pf[ok], ps[ok], pe[ok], pr[ok], size, tol, top),
                       out=done)
        ccomp = np.maximum.reduceat(done, instance.ptr[:-1]) if K else np.zeros(0)
        fk = fco[f]
        by_k = np.argsort(fk, kind="stable")
        bounds = np.searchsorted(fk[by_k], np.arange(K + 1))
        tk = fco[tied.flow] if tied is not None else np.zeros(0, np.int64)
        tied_by_k = np.argsort(tk, kind="stable")
        tied_bounds = np.searchsorted(tk[tied_by_k], np.arange(K + 1))

        def measured(k: int, p: IntArray, amounts: FloatArray, t: float,
                     late: bool) -> tuple[float, bool]:
            """Coflow k's total of ``amounts`` (per piece ``p``) and of its tied pieces' amounts
            before (``late``: after) ``t``, and whether one of its flows gets more than
            ``tol`` times its own size (a whole small flow is no rounding)."""
            lo = int(instance.ptr[k])
            width = int(instance.ptr[k + 1]) - lo
            per = _sum_by(f[p] - lo, amounts, width)
            mine = tied_by_k[tied_bounds[k] : tied_bounds[k + 1]]
            if mine.size:
                assert tied is not None
                cut = np.full(mine.size, t)
                sums = (tied.sums(top, cut_hi=cut, members=mine) if late
                        else tied.sums(top, cut_lo=cut, members=mine))
                per += np.bincount(tied.flow[mine] - lo, weights=sums[:, _tied.LATE if late
                                                                     else _tied.EARLY],
                                   minlength=width)
            return float(per.sum()), bool((per > tol * size[lo : lo + per.size]).any())

        def before(k: int, t: float) -> tuple[float, bool]:
            """Data of coflow k served before time t."""
            p = by_k[bounds[k] : bounds[k + 1]]
            return measured(k, p, np.clip(np.minimum(e[p], t) - s[p], 0.0, None) * r[p], t, False)

        def after(k: int, t: float) -> tuple[float, bool]:
            """Data of coflow k served after time t."""
            p = by_k[bounds[k] : bounds[k + 1]]
            return measured(k, p, np.clip(e[p] - np.maximum(s[p], t), 0.0, None) * r[p], t, True)

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
            late = _sum_by(fk, late_piece, K)
            late_flow = _sum_by(f, late_piece, F)
            if tied is not None:  # their sums were taken after each coflow's deadline
                late += np.bincount(tk, weights=ts[:, _tied.LATE], minlength=K)
                late_flow += np.bincount(tied.flow, weights=ts[:, _tied.LATE], minlength=F)
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


def _check_tied(instance: Instance, tied: TiedPieces, top: float, deadlines: bool,
                max_reports: int, report: Any, describe: Any) -> tuple[TiedPieces | None, FloatArray]:
    """Report tied pieces of unknown flows and pieces whose rate is not finite or is
    negative; return the tied pieces of known flows with their sums (amounts before each
    flow is available and, with ``deadlines``, after its coflow's deadline)."""
    F = instance.num_flows
    fl = tied.flow
    bad = np.flatnonzero((fl < 0) | (fl >= F))
    report("unknown-flow", [
        (0.0, Violation("unknown-flow", f"tied piece {i} names flow {fl[i]}, but the instance "
                        f"has {F} flows", flow=int(fl[i])))
        for i in bad[:max_reports]], bad.size)
    known = np.flatnonzero((fl >= 0) & (fl < F))
    if known.size == 0:
        return None, np.zeros((0, _tied.COLUMNS))
    tied = tied._select(known)
    f = tied.flow
    hi = None
    if deadlines and instance.has_deadlines:
        dl = instance.deadline[instance.flow_coflow[f]]
        hi = np.where(np.isfinite(dl), dl, np.inf)
    sums = tied.sums(top, cut_lo=instance.flow_release[f], cut_hi=hi)
    for kind, col, what in (("not-finite", _tied.NONFINITE, "is not finite"),
                            ("negative-rate", _tied.NEGATIVE, "is negative")):
        bad = np.flatnonzero(sums[:, col])
        fco = instance.flow_coflow
        report(kind, [
            (0.0, Violation(
                kind, f"tied piece {known[i]} of {describe(int(f[i]))} serves it at a rate that "
                f"{what} on {int(sums[i, col])} of its pieces (weight {tied.weight[i]!r} times "
                f"series {tied.series_a[i]} and {tied.series_b[i]})",
                coflow=instance.ids[fco[f[i]]], flow=int(f[i])))
            for i in bad[:max_reports]], int(sums[bad, col].sum()))
    return tied, sums


def _check_overlap(f: IntArray, s: FloatArray, e: FloatArray, tol: float,
                   ids: tuple[str, ...], fco: IntArray, describe: Any, report: Any) -> None:
    """Report pieces of one flow that overlap (by more than ``tol`` of their time)."""
    if f.size < 2:
        return
    order = np.lexsort((s, f))
    fs, ss, es = f[order], s[order], e[order]
    del order
    same = fs[1:] == fs[:-1]
    # when no piece starts before the previous one of its flow ends, each ends no earlier
    # than the one before, and the running maximum of the ends is the previous end
    prev_end = es[:-1]
    if (same & (prev_end > ss[1:])).any():
        prev_end = _segmented_running_max(es, fs)[:-1]
    gap = prev_end - ss[1:]
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


ROWS = 1 << 21
"""About how many (link, piece start or end) entries the capacity check sorts at once: it
takes the links a batch at a time, so its temporaries stay near a few hundred MiB
however many pieces there are (a varys schedule of the Facebook trace has 10 million)."""


def _link_rows(instance: Instance, f: IntArray, s: FloatArray, e: FloatArray,
               r: FloatArray, background: LinkLoad | None = None,
               ) -> Iterator[tuple[IntArray, FloatArray, FloatArray]]:
    """Every link's rate changes, a batch of links at a time: per distinct (link, time) at
    which a piece crossing the link starts or ends (or ``background``'s load on it
    changes), the link, the time and the change of the link's rate, sorted by link and
    time within the batch. Links that no piece crosses are left out."""
    n = f.size
    if n == 0:
        return
    fabric = instance.fabric
    L = fabric.num_links
    F = instance.num_flows
    extra = background.changes(L) if background is not None and background.link.size else None
    inc = instance.routes.tocsc()  # flows x links
    # entries per link: two (a start and an end) per piece of each flow crossing it
    per_link = 2 * (inc.T @ np.bincount(f, minlength=F).astype(np.float64))
    # the pieces' starts and ends in time order, once (then grouped by link per batch):
    # their times, flows and changes of rate (indices as int32 where they fit: these
    # arrays hold two entries per piece)
    small = np.int32 if 2 * n < 2**31 and F < 2**31 else np.int64
    t_sorted = np.concatenate([s, e])
    order: IntArray = np.argsort(t_sorted, kind="stable").astype(small)
    t_sorted = t_sorted[order]
    ending = order >= n
    np.subtract(order, n, out=order, where=ending)
    ev_flow = f.astype(small)[order]
    ev_rate = r[order]
    del order
    np.negative(ev_rate, out=ev_rate, where=ending)
    del ending
    edges = [0]
    total = 0.0
    for u in range(L):  # batches of whole links, at most ROWS entries (or one link)
        total += float(per_link[u])
        if total > ROWS or u - edges[-1] >= 1 << 15:
            if u > edges[-1]:
                edges.append(u)
            total = float(per_link[u])
    edges.append(L)
    for lo, hi in itertools.pairwise(edges):
        sub = inc[:, lo:hi].tocsr()
        count = np.diff(sub.indptr)  # links of the batch each flow crosses
        sel = np.flatnonzero((count > 0)[ev_flow])  # the starts and ends on them, in order
        if sel.size == 0:
            continue
        tm, d = t_sorted[sel], ev_rate[sel]
        sel_flow = ev_flow[sel]
        del sel
        pos = sub.indptr.astype(small)[sel_flow]
        if count.max() > 1:  # some flow crosses several links of the batch
            rep = count[sel_flow]
            tm, d = np.repeat(tm, rep), np.repeat(d, rep)
            pos = np.repeat(pos, rep) + _ranges(rep)
            del rep
        del sel_flow
        link = sub.indices[pos].astype(np.int16)  # at most 2**15 links per batch
        d *= sub.data[pos]
        del pos
        by_link = np.argsort(link, kind="stable")  # keeps the time order (a radix sort)
        tm = tm[by_link]
        d = d[by_link]
        del by_link
        link = np.repeat(np.arange(lo, hi, dtype=np.int32), np.bincount(link, minlength=hi - lo))
        if extra is not None:  # the background's changes on the batch's links, merged in
            a, b = np.searchsorted(extra[0], [lo, hi])
            link = np.concatenate([link, extra[0][a:b].astype(np.int32)])
            tm = np.concatenate([tm, extra[1][a:b]])
            d = np.concatenate([d, extra[2][a:b]])
            merged = np.lexsort((tm, link))
            link, tm, d = link[merged], tm[merged], d[merged]
        new = np.ones(tm.size, bool)
        new[1:] = (link[1:] != link[:-1]) | (tm[1:] != tm[:-1])
        heads = np.flatnonzero(new)
        del new
        rows = link[heads], tm[heads], np.add.reduceat(d, heads)
        del link, tm, d, heads
        yield rows
        del rows  # the caller's copy is the only one while the next batch is made


def _per_link_cumsum(link: IntArray, delta: FloatArray) -> FloatArray:
    """Each link's rate after each of its rows (rows sorted by link), summed link by link."""
    out = np.empty(delta.size)
    cut = np.flatnonzero(link[1:] != link[:-1]) + 1
    for a, b in itertools.pairwise([0, *cut.tolist(), delta.size]):
        np.cumsum(delta[a:b], out=out[a:b])
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
    background: LinkLoad | None = None,
) -> tuple[float, list[tuple[float, Violation]], int]:
    """Sweep every link's rate over time (with ``background``'s load); report segments
    above capacity."""
    cap = instance.fabric.capacity
    peak = 0.0
    over = 0
    worst: list[tuple[float, int, float, float, float]] = []
    for lk, tm, delta in _link_rows(instance, f, s, e, r, background):
        level = _per_link_cumsum(lk, delta)
        # a segment runs from this row's time to the next row's time on the same link
        nxt_same = np.zeros(lk.size, bool)
        nxt_same[:-1] = lk[1:] == lk[:-1]
        seg_end = np.empty(lk.size)
        seg_end[:-1] = tm[1:]
        seg_end[-1] = tm[-1]
        # a segment no longer than TIME_ROUNDING of its time is rounding of two breakpoints
        # that are one instant (a piece that ends an ulp after the next one starts)
        real = nxt_same & (seg_end - tm > TIME_ROUNDING * np.maximum(np.abs(seg_end), 1.0))
        peak = max(peak, float(np.where(real, level / cap[lk], 0.0).max(initial=0.0)))
        bad = np.flatnonzero(real & (level > cap[lk] * (1.0 + tol)))
        over += bad.size
        top = bad[np.argsort(-(level[bad] - cap[lk[bad]]))][:max_reports]
        worst.extend((float(level[i] - cap[lk[i]]), int(lk[i]), float(tm[i]), float(seg_end[i]),
                      float(level[i])) for i in top)
        del lk, tm, delta, level, nxt_same, seg_end, real  # before the next batch
    worst.sort(key=lambda w: -w[0])
    items = [_capacity_item(instance, link, t0, t1, x, describe, [(f, s, e)])
             for _, link, t0, t1, x in worst[:max_reports]]
    return peak, items, over


def _capacity_item(instance: Instance, link: int, t0: float, t1: float, level: float,
                   describe: Any, parts: list[tuple[IntArray, FloatArray, FloatArray]],
                   ) -> tuple[float, Violation]:
    """The violation of a segment over capacity; ``parts``: flows with their times (pieces,
    tied pieces), to name the flows on the link during the segment."""
    fabric = instance.fabric
    cap = fabric.capacity
    crosses = instance.routes.tocsc()[:, [link]].toarray()
    on: set[int] = set()
    for f, s, e in parts:
        hit = crosses[f, 0] != 0
        on.update(np.unique(f[hit & (s < t1) & (e > t0)]).tolist())
    flows = sorted(on)
    shown = ", ".join(describe(x) for x in flows[:3]) + (" ..." if len(flows) > 3 else "")
    excess = level - float(cap[link])
    return (
        excess,
        Violation(
            "capacity",
            f"{fabric.link_name(link)} carries {level:.9g} > capacity {cap[link]:.9g} "
            f"(by {excess:.6g}) during [{t0:.9g}, {t1:.9g}); {len(flows)} flows: {shown}",
            link=link,
            interval=(t0, t1),
            excess=excess,
        ),
    )


def _tied_capacity(
    instance: Instance,
    f: IntArray,
    s: FloatArray,
    e: FloatArray,
    r: FloatArray,
    tied: TiedPieces,
    tol: float,
    max_reports: int,
    describe: Any,
) -> tuple[float, list[tuple[float, Violation]], int]:
    """:func:`_capacity_violations` for a schedule with tied pieces: the plain pieces' rows
    and the tied pieces, grouped into bundles (same series, same route), swept together in
    time order (:func:`coflowopt._tied.sweep`)."""
    fabric = instance.fabric
    rows = list(_link_rows(instance, f, s, e, r))
    pr_l, pr_t, pr_d = (np.concatenate([x[i] for x in rows]) if rows
                        else np.zeros(0, np.int64 if i == 0 else np.float64) for i in range(3))
    o = np.argsort(pr_t, kind="stable")
    pr_l, pr_t, pr_d = pr_l[o].astype(np.int64), pr_t[o], pr_d[o]  # (sparse indices: int32)
    # tied pieces that carry data (others serve nothing, or are violations of their own)
    m = np.flatnonzero(np.isfinite(tied.weight) & (tied.weight > 0) & (tied.end > tied.start))
    tf = tied.flow[m]
    # one key per (series, series, route): pairs of ports and of series as numbers
    keys = instance.route_keys()
    R = int(keys.max(initial=0)) + 1
    S = tied.num_series + 1
    ports = keys[tf]
    series = tied.series_a[m] * S + tied.series_b[m] + 1
    if S * S < 2**62 // max(R, 1):
        uniq, first, bundle = np.unique(series * R + ports, return_index=True, return_inverse=True)
        u_series = uniq // R
    else:
        both, first, bundle = np.unique(np.stack([series, ports], axis=1), axis=0,
                                        return_index=True, return_inverse=True)
        u_series = both[:, 0]
    bundle = bundle.reshape(-1).astype(np.int64)
    nb = u_series.size
    inc = instance.routes[tf[first]]
    ba = np.ascontiguousarray(u_series // S)
    bb = np.ascontiguousarray(u_series % S - 1)
    second = (bb >= 0) & (bb != ba)
    g = np.concatenate([ba, bb[second]])
    users = np.concatenate([np.arange(nb), np.flatnonzero(second)])
    o = np.argsort(g, kind="stable")
    sptr = np.searchsorted(g[o], np.arange(tied.num_series + 1)).astype(np.int64)
    lv = np.argsort(tied.level_time, kind="stable")
    on = np.argsort(tied.start[m], kind="stable")
    off = np.argsort(tied.end[m], kind="stable")
    w = tied.weight[m]
    keep = max(max_reports, 1)
    peak, over, w_link, w_t = _tied.sweep(
        fabric.capacity, float(tol), TIME_ROUNDING, inc.indptr.astype(np.int64),
        inc.indices.astype(np.int64), inc.data.astype(np.float64), ba, bb, sptr,
        users[o].astype(np.int64), tied.level_time[lv], tied.level_series[lv], tied.level[lv],
        tied.start[m][on], bundle[on], w[on], tied.end[m][off], bundle[off], w[off],
        pr_t, pr_l, pr_d, keep)
    parts = [(f, s, e), (tf, tied.start[m], tied.end[m])]
    items = [_capacity_item(instance, int(w_link[i]), float(w_t[i, 0]), float(w_t[i, 1]),
                            float(w_t[i, 2]), describe, parts)
             for i in range(min(max_reports, w_link.size))]
    return float(peak), items, int(over)


def schedule_of(value: Any, what: str = "schedule") -> Schedule:
    """A schedule, or the schedule a result carries (``simulate(..., record=True)``,
    ``solve``); a clear error for anything else (the figures and the fairness timeline
    take either)."""
    if isinstance(value, Schedule):
        return value
    inner = getattr(value, "schedule", False)
    if inner is None:
        raise InputError(f"the {what} given, a {type(value).__name__}, has no schedule "
                         "(simulate with record=True)")
    if isinstance(inner, Schedule):
        return inner
    raise InputError(f"the {what} must be a Schedule or a result with one, "
                     f"got {type(value).__name__}")


def subset_schedule(instance: Instance, schedule: Schedule,
                    keep: npt.ArrayLike) -> tuple[Instance, Schedule]:
    """``instance.subset(keep)`` (``keep``: coflow positions, increasing; dependencies
    dropped) and the pieces of ``schedule`` that serve its flows, renumbered for it (the
    others left out; tied pieces stay tied)."""
    keep = np.asarray(keep, np.int64)
    sub = instance.subset(keep, drop_dependencies=True)
    new_k = np.full(instance.num_coflows, -1, np.int64)
    new_k[keep] = np.arange(keep.size)
    k = instance.flow_coflow
    mine = new_k[k] >= 0
    mapping = sub.ptr[np.maximum(new_k[k], 0)] + np.arange(instance.num_flows) - instance.ptr[k]
    f, s, e, r = schedule._direct
    sel = mine[f]
    tied = schedule.tied
    if tied is not None:
        tied = tied._select(np.flatnonzero(mine[tied.flow])).renumbered(mapping)
    return sub, Schedule(mapping[f[sel]], s[sel], e[sel], r[sel], tied=tied)


def check_schedule_of(instance: Any, schedule: Schedule) -> None:
    """A clear error for an instance that is not one, or a schedule of another instance's
    flows: more flows than it has, or a flow served more than its size by over
    :data:`MAX_TOL` (:func:`check_feasible` tells the rest)."""
    if not isinstance(instance, Instance):
        raise InputError(f"the instance must be an Instance, got {type(instance).__name__}")
    n = instance.num_flows
    if len(schedule.flow) and int(schedule.flow.max()) >= n:
        raise InputError(f"the schedule has pieces of flow {int(schedule.flow.max())}, but "
                         f"the instance has {n} flows: it is another instance's")
    size = instance.flow_size
    served = schedule.served(n)
    # (a margin for the pieces' rounding: a millionth of the largest amount)
    over = np.flatnonzero(served > size * (1 + MAX_TOL) + 1e-6 * max(served.max(initial=0.0),
                                                                      size.max(initial=0.0)))
    if over.size:
        f = int(over[0])
        raise InputError(f"the schedule serves flow {f} {served[f]:.6g} bytes, but its size "
                         f"in the instance is {size[f]:.6g}: it is another instance's")

