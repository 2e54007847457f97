"""Flow groups and scaling shared by the formulations in ``exact/``.

Flows of one coflow that cross the same links and become available at the
same time are interchangeable in every LP here: only their total matters,
and the total is split back in proportion to size when a schedule is built
(so the flows of a group finish together). Grouping keeps the LPs at most
``K * P^2`` groups wide on the big switch, whatever the number of flows.

All LPs work in scaled units: time in ``time_unit`` (the mean isolation
time), data in ``amount_unit = cap_ref * time_unit`` (``cap_ref`` the largest
link capacity), so that the numbers HiGHS sees are of order one even for
traces in bytes and seconds.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from ..bounds.simple import earliest_completion
from ..instance import Instance, _readonly
from ..result import Result
from ..schedule import Schedule, _ranges

__all__ = [
    "MAX_COLUMNS",
    "MAX_NONZEROS",
    "MAX_SPAN",
    "Groups",
    "back_from_origin",
    "build_groups",
    "check_size",
    "check_span",
    "from_origin",
    "link_rows",
    "spread",
]

MAX_COLUMNS = 3_000_000
"""Largest LP (amount columns) the exact formulations accept; beyond it they refuse
with a message instead of exhausting memory."""

MAX_NONZEROS = 20_000_000
"""Largest number of constraint entries a formulation may build (about 1 GB in the model
builder and HiGHS together); the time-indexed model's cumulative rows grow with the square
of its slots (a one-flow instance with 10,000 slots: 5e7 entries, 5.2 GB peak,
and building the model ignores the time limit)."""


MAX_SPAN = 1e14
"""The longest horizon, in units of the mean isolated transfer time, that the exact methods
take (float64 resolves 1/64 of a unit at 1e14). Measured on one coflow of one unit released
at 10^k: exact, exact-milp right to 1e14; exact-milp crashed in Pyomo at 1e15 and exact
found no schedule at 1e16 (it crashed at 1e20)."""


def check_span(g: Groups) -> None:
    """Raise when the schedule's time scale or the weighted objective leaves float64's reach
    (the ``sum w_k C_k`` methods: exact, exact-milp, time-indexed)."""
    from ..bounds.simple import check_objective_range
    from ..errors import CoflowoptError

    inst, time_unit = g.instance, g.time_unit
    horizon = float(np.max(g.earliest, initial=0.0)) + float(g.v.sum(axis=0).max(initial=0.0))
    if not horizon <= MAX_SPAN:
        raise CoflowoptError(
            f"the exact formulations cannot resolve this instance: its horizon is {horizon:.3g} "
            f"times its mean transfer time ({time_unit:.3g}; limit {MAX_SPAN:g}), e.g. releases "
            f"up to {float(inst.release.max(initial=0.0)):.3g} (flows available from "
            f"{float(inst.flow_release.max(initial=0.0)):.3g}) beside transfers that short; "
            "shift or rescale the times, or use a lower bound (coflowopt bound)")
    check_objective_range(inst, "the exact formulations")


def from_origin(inst: Instance) -> tuple[Instance, float]:
    """``inst`` with every time moved so that the first release is 0, and the move.

    The interval formulations (makespan, deadlines) work with differences of breakpoints;
    computed from absolute times near ``1e16`` those lose all precision (two
    coflows of 1 and 1,024 units, deadline 1,024 after a release of 1e16, were both
    admitted, "optimal"). Moved to 0 the breakpoints keep the precision of the input's own
    differences; the results are moved back (their times then round at the input's scale).
    """
    o = float(inst.release.min()) if inst.num_coflows else 0.0
    if o == 0.0:
        return inst, 0.0
    moved = []
    for c in inst.coflows:
        r = c.release - o
        # each flow there when it was, moved: (release + delay) - o, not the rounding of
        # (release - o) + delay (a flow 1e-5 after a release near 5.6e5 came 4e-11 later
        # moved, and a coflow due exactly then was ruled out)
        delay = None if c.delay is None else np.maximum((c.release + c.delay - o) - r, 0.0)
        moved.append(replace(c, release=r, delay=delay,
                             deadline=None if c.deadline is None else c.deadline - o))
    return inst.replace(coflows=tuple(moved)), o


def back_from_origin(res: Result, o: float) -> Result:
    """A result found on :func:`from_origin`'s instance, its completion times and schedule
    moved back by ``o`` (its objective and bound are not times: the deadline counts)."""
    if o == 0.0:
        return res
    return dataclasses.replace(
        res,
        schedule=None if res.schedule is None else res.schedule.shifted(o),
        completion=None if res.completion is None else res.completion + o,
    )


def count_text(n: int) -> str:
    """A count for a message: with thousands separators, or ``4e+18`` when it is huge."""
    return f"{n:,}" if n < 10**15 else f"{float(n):.3g}"


def check_size(columns: int, what: str, nonzeros: int = 0) -> None:
    """Raise when a formulation would need more than :data:`MAX_COLUMNS` columns or
    :data:`MAX_NONZEROS` constraint entries (an :class:`InstanceError`: the command line
    names the instance's file)."""
    from ..errors import InstanceError

    for n, limit, unit in ((columns, MAX_COLUMNS, "columns"),
                           (nonzeros, MAX_NONZEROS, "constraint entries")):
        if n > limit:
            raise InstanceError(
                f"{what} would need {count_text(n)} {unit} (limit {limit:,}); the instance is "
                "too large for this exact formulation: use a lower bound (coflowopt bound) or "
                "a smaller instance (Instance.subset)"
            )

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


def spread(first: IntArray, count: IntArray) -> tuple[IntArray, IntArray]:
    """Columns ``(owner, index)`` for ``index = first[o] .. first[o] + count[o] - 1`` per owner."""
    n = np.maximum(np.asarray(count, dtype=np.int64), 0)
    owner = np.repeat(np.arange(n.size, dtype=np.int64), n)
    return owner, np.repeat(np.asarray(first, dtype=np.int64), n) + _ranges(n)


def link_rows(
    g: Groups, x_group: IntArray, x_interval: IntArray
) -> tuple[IntArray, IntArray, FloatArray, IntArray, IntArray]:
    """Entries of the rows ``sum_g use_gl x_gi`` for every (interval, link) some ``x`` uses.

    ``x_group[j]``, ``x_interval[j]`` describe column ``j`` of a block of
    amount variables. Returns ``(row, column, value, row_interval,
    row_link)``: one entry per (column, link of its route), rows numbered
    from 0 in order of (interval, link).
    """
    ptr = g.usage.indptr.astype(np.int64)
    cnt = ptr[x_group + 1] - ptr[x_group]
    col = np.repeat(np.arange(x_group.size, dtype=np.int64), cnt)
    pos = np.repeat(ptr[x_group], cnt) + _ranges(cnt)
    links = g.usage.indices[pos].astype(np.int64)
    L = int(g.cap.size)
    key, row = np.unique(x_interval[col] * L + links, return_inverse=True)
    return row.astype(np.int64), col, g.usage.data[pos].astype(np.float64), key // L, key % L


@dataclass(frozen=True, slots=True, eq=False)
class Groups:
    """Flows aggregated by (coflow, route, availability time), in scaled units."""

    instance: Instance
    coflow: IntArray
    """Coflow of each group; groups are sorted by coflow."""
    ptr: IntArray
    """Groups of coflow ``k`` are ``ptr[k]:ptr[k + 1]``."""
    size: FloatArray
    """Scaled total size of each group."""
    release: FloatArray
    """Scaled time at which the group's flows become available."""
    usage: sp.csr_array
    """Groups x links incidence (1 where the group crosses the link)."""
    cap: FloatArray
    """Scaled capacity of each link (``capacity / cap_ref``)."""
    flow_group: IntArray
    """Group of each flow of the instance."""
    flow_share: FloatArray
    """Fraction of its group's size that each flow carries."""
    time_unit: float
    amount_unit: float
    v: FloatArray
    """``(K, L)`` scaled time each coflow needs on each link alone (load / capacity)."""
    earliest: FloatArray
    """Scaled lower bound on each coflow's completion time alone (release plus
    isolation time; with per-flow delays, the largest over links and release
    thresholds of threshold + later load / capacity)."""

    @property
    def num_groups(self) -> int:
        return int(self.size.size)

    @property
    def num_coflows(self) -> int:
        return int(self.ptr.size - 1)

    def to_time(self, t: npt.ArrayLike) -> FloatArray:
        return np.asarray(t, dtype=np.float64) * self.time_unit

    def amounts(
        self, n: int, interval: IntArray, group: IntArray, values: FloatArray,
        keep: npt.NDArray[np.bool_] | None = None,
    ) -> FloatArray:
        """``(n, G)`` matrix of LP amounts, each group with entries scaled to exactly its size.

        An LP meets ``sum = size`` rows only up to its tolerance; rescaling
        makes every flow receive exactly its size (``keep`` selects entries). A group far
        smaller than the rest can get nothing at all (3.7e-6 bytes beside 1e4 in the
        makespan LP); it is served in the last interval it has an entry in, which
        :meth:`schedule` stretches where the extra data need it.
        """
        out = np.zeros((n, self.num_groups))
        sel = np.ones(group.size, bool) if keep is None else np.asarray(keep, bool)
        np.add.at(out, (interval[sel], group[sel]), np.maximum(values[sel], 0.0))
        tot = out.sum(axis=0)
        listed = np.zeros(self.num_groups, bool)
        listed[group[sel]] = True
        lost = np.flatnonzero(listed & ~(tot > 0))
        if lost.size:
            last = np.full(self.num_groups, -1, np.int64)
            np.maximum.at(last, group[sel], interval[sel])
            out[last[lost], lost] = self.size[lost]
            tot[lost] = self.size[lost]
        ok = tot > 0
        out[:, ok] *= self.size[ok] / tot[ok]
        return out

    def schedule(self, times: npt.ArrayLike, amounts: npt.ArrayLike) -> Schedule:
        """Schedule serving ``amounts[i, g]`` (scaled) uniformly over ``[times[i], times[i+1])``.

        ``times`` are scaled breakpoints. An interval too short for its data
        (by LP tolerance) is stretched, moving later breakpoints later. Each
        group's amount is split over its flows in proportion to size.
        """
        t = np.asarray(times, dtype=np.float64)
        a = np.asarray(amounts, dtype=np.float64)
        dt = np.diff(t)
        # An LP meets capacity rows only up to its tolerance, which in a very
        # short interval is a large excess of *rate*. Stretch such intervals
        # to the length their data need (shifting later breakpoints later:
        # flows then start no earlier than before, so releases still hold).
        need = np.asarray(a @ self.usage, dtype=np.float64) / self.cap
        need = need.max(axis=1) if need.size else np.zeros(dt.size)
        if np.any(need > dt):
            dt = np.maximum(dt, need)
            t = t[0] + np.concatenate([[0.0], np.cumsum(dt)])
        T = _room_for(t * self.time_unit, need * self.time_unit)
        keep = dt > 0
        seg, g = np.nonzero((a > 0) & keep[:, None])
        rate_g = a[seg, g] / dt[seg]  # scaled amount per scaled time
        # expand groups to their flows
        order = np.argsort(self.flow_group, kind="stable")
        starts = np.searchsorted(self.flow_group[order], np.arange(self.num_groups + 1))
        counts = np.diff(starts)[g]
        rep = np.repeat(np.arange(g.size), counts)
        offs = np.arange(rep.size) - np.repeat(np.cumsum(counts) - counts, counts)
        flows = order[starts[g][rep] + offs]
        scale = self.amount_unit / self.time_unit
        t0 = T[seg][rep]
        t1 = T[seg + 1][rep]
        # the rate from the pieces' own times, so that rate * (t1 - t0) is the amount: an
        # interval short against its time (1e-8 of it) loses that much of its length's
        # digits when scaled back, and a flow would then never quite complete
        amount = a[seg, g][rep] * self.flow_share[flows] * self.amount_unit
        span = t1 - t0
        rate = np.where(span > 0, amount / np.where(span > 0, span, 1.0),
                        rate_g[rep] * self.flow_share[flows] * scale)
        return Schedule(flows, t0, t1, rate)


FEASIBILITY_TOL = 1e-9
"""HiGHS's primal (and MIP) feasibility tolerance for the LPs and MILPs whose solutions become
schedules (its default, 1e-6 for MIPs and 1e-7 for LPs, is absolute in the scaled units): an
interval far shorter than the mean transfer time has a capacity near the default, and a
solution that overfills it by that much becomes a stretched interval and a later completion
(hypothesis: a second wave 1e-5 after the first against 26 time units made the makespan LP
"optimal" at 26.00001 against a schedule of 26). The deadlines MILP has its own settings
(``deadlines.DEADLINE_OPTIONS``): with presolve, 1e-9 made HiGHS drop coflows that fit."""


SHORT = 1e-9
"""An interval shorter than its data's time by more than this share is lengthened (below it
the rates exceed capacity by less than the feasibility check's tolerance, 1e-6, and moving
breakpoints an ulp would move completion times past deadlines for nothing)."""


def _room_for(T: FloatArray, need: FloatArray) -> FloatArray:
    """Breakpoints ``T`` moved later where an interval, as floats hold it, is shorter than
    the time ``need`` its data take at full capacity.

    An interval 1e-10 long at time 3 keeps its length only to 4e-6 of it (the spacing
    of floats near 3): its rates came out 3e-6 above capacity and the schedule failed
    the feasibility check (hypothesis). Later breakpoints move by the same amount.
    """
    short = np.diff(T) < need * (1 - SHORT)
    if not short.any():
        return T
    T = T.copy()
    for i in range(int(np.argmax(short)), need.size):  # a move rounds the later lengths too
        if T[i + 1] - T[i] >= need[i] * (1 - SHORT):
            continue
        end = T[i] + need[i]
        while end - T[i] < need[i]:
            end = np.nextafter(end, np.inf)
        if T[i + 1] < end:
            T[i + 1:] += end - T[i + 1]
            T[i + 1] = end
    return T


def build_groups(instance: Instance) -> Groups:
    """Group the flows of ``instance`` and choose the scaling."""
    inst = instance
    K = inst.num_coflows
    cap = inst.fabric.capacity
    cap_ref = float(cap.max())
    gam = inst.gamma[inst.gamma > 0]
    time_unit = float(gam.mean()) if gam.size else 1.0
    amount_unit = cap_ref * time_unit
    F = inst.num_flows
    rel = inst.flow_release
    # key: coflow, route, release (releases ranked to integers first)
    rel_vals, rel_rank = np.unique(rel, return_inverse=True)
    # flows of one coflow on the same route (ports on the big switch, links on a network)
    route = inst.route_keys()
    R = int(route.max()) + 1 if F else 1
    key = (inst.flow_coflow * R + route) * rel_vals.size + rel_rank
    uniq, fg = np.unique(key, return_inverse=True)
    G = uniq.size
    fg = fg.astype(np.int64)
    g_size = np.bincount(fg, weights=inst.flow_size, minlength=G)
    first = np.full(G, F, dtype=np.int64)
    np.minimum.at(first, fg, np.arange(F))
    g_coflow = inst.flow_coflow[first]
    g_release = rel[first] / time_unit
    usage = inst.routes[first]
    share = inst.flow_size / g_size[fg]
    ptr = np.searchsorted(g_coflow, np.arange(K + 1)).astype(np.int64)
    v = inst.load / cap / time_unit
    scap = cap / cap_ref
    sizes = g_size / amount_unit
    # the bounds' earliest completions, in time units (one computation, the loads by A_fl)
    earliest = earliest_completion(inst) / time_unit
    return Groups(
        instance=inst,
        coflow=_readonly(g_coflow),
        ptr=_readonly(ptr),
        size=_readonly(sizes),
        release=_readonly(g_release),
        usage=usage,
        cap=_readonly(scap),
        flow_group=_readonly(fg),
        flow_share=_readonly(share),
        time_unit=time_unit,
        amount_unit=amount_unit,
        v=_readonly(v),
        earliest=_readonly(np.asarray(earliest, dtype=np.float64)),
    )
