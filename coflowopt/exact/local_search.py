"""Local search over priority orders for ``sum w_k C_k`` (permutation schedules).

Starts from the best of several orders and improves it by *insert* moves (take one
coflow out of the order and put it back at another position), each order evaluated
by the greedy order-preserving allocation with release times
(:mod:`coflowopt.exact.permutation`: the schedule ``method="sincronia"`` and
``method="permutation"`` give an order).

Starting orders (each evaluated; the best one is searched from):

- Sincronia's BSSI order (its release-aware variant when releases differ);
- the order in which the simulator's online schedulers (``sincronia``, which
  recomputes BSSI over the remaining work at every arrival, and ``varys``) complete
  the coflows, read as a fixed order;
- the pairwise LP's order (Shafiee and Ghaderi: coflows by their LP completion
  times), when the LP solves within a share of the time limit;
- smallest isolation time per weight first, and release order;
- each of these re-sorted by the completion times of its own schedule.

The search. Moves are tried coflow by coflow, the coflows with the largest
weighted delay over isolation (``w_k (C_k - r_k - Gamma_k)``) first; a coflow is
tried at the positions of its *neighbours*: the coflows that share a port with it
and whose time span ``[r, C]`` overlaps its own (moving ahead of a neighbour before it
in the order, or behind one after it). ``neighbourhood="all"`` tries every position
instead (small instances, and the tests). The first improving move is taken; the
search ends at a local optimum of the move set (a whole pass without an
improvement) or at the time limit. At a local optimum the best order is perturbed
(a few coflows moved a few positions, drawn from ``seed``) and searched again,
``perturbations`` times, keeping the best order found (iterated local search).

Cheap moves. Strict priority makes the schedule of an order's first ``p`` coflows
independent of the rest, so a move whose first changed position is ``p`` is
evaluated from the state after the first ``p`` coflows. On a uniform big switch
(every flow two links with coefficient 1, one capacity: the Facebook trace) the
state is the list of free intervals of every link (:mod:`._freelists`), kept for
the incumbent every ``stride`` positions; an evaluation starts from the checkpoint
before ``p``, stops as soon as its partial cost plus the coflows' isolation bounds
reaches the incumbent's value, and stops early with the incumbent's remaining cost
when, at a checkpoint after the move, its free lists are those of the incumbent
again from the earliest release of a flow still to come on (the rest of the schedule
is then the incumbent's: with release times a move's effect usually dies out at the
end of a busy period). Other instances are
evaluated from scratch by :func:`~coflowopt.exact.permutation.order_completion`.

Deviation from the usual permutation-schedule evaluation: on the uniform big
switch the schedule is built from the free lists, not by the simulator. It is the
same greedy schedule up to the time resolution (``2e-12`` of the time); where the
simulator's own rounding (about ``1e-11`` s on the trace) leaves a sliver of a gap
that the free lists do not count, a later flow can take a different gap, and on the
Facebook trace the two schedules of Sincronia's order differ by 1e-5 of their
value. The returned schedule is checked by :func:`~coflowopt.schedule.check_feasible`
(``solve`` does it), and its value is the one reported.

Bound: the largest of the cheap bounds (isolation, per-port, Sincronia's duals)
and the pairwise LP's value when it was solved. Status: ``OPTIMAL`` only when that
bound closes the gap within ``rel_gap``; else ``TIME_LIMIT`` when the clock stopped
the search, ``FEASIBLE`` when it ended by itself (``info["local_optimum"]``: no insert
move of the neighbourhood improves the returned order). The time kept for building
the returned schedule is one and a half evaluations of the first order.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from .._budget import now
from ..bounds.pairwise import pairwise_lp
from ..bounds.sincronia import sincronia_order
from ..errors import CoflowoptError
from ..instance import Instance
from ..result import Result, Status, proves_optimal
from ..schedule import Schedule
from . import _freelists as fls
from .certified import cheap_bounds
from .permutation import (
    PermutationTimeout,
    _check_order,
    _reject_dependencies,
    order_completion,
    permutation_schedule,
)

__all__ = ["NEIGHBOURHOODS", "START_ORDERS", "local_search"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

NEIGHBOURHOODS = ("overlap", "all")
"""Where a coflow is tried: ``overlap`` at the positions of the coflows that share a
port with it and overlap it in time; ``all`` at every position."""

START_ORDERS = ("sincronia", "online-sincronia", "online-varys", "pairwise", "smallest",
                "release")
"""The starting orders, by name (see the module docstring)."""

_IMPROVES = 1e-9  # a move must lower the value by this share: rounding is no improvement


class _OutOfTime(Exception):
    pass


@dataclass(slots=True)
class _Data:
    """The instance's arrays, as the free-list kernel reads them."""

    ptr: IntArray
    la: IntArray
    lb: IntArray
    frel: FloatArray
    dur: FloatArray
    w: FloatArray
    lbk: FloatArray
    cap: float
    L: int


@dataclass(slots=True)
class _Incumbent:
    order: IntArray
    comp: FloatArray  # by coflow
    value: float
    snaps: list  # free lists after the first c * stride coflows, c = 0, 1, ...


class _Evaluator:
    """Evaluates orders and moves; on the uniform big switch from checkpoints."""

    def __init__(self, inst: Instance, stride: int, deadline: float) -> None:
        self.inst = inst
        self.K = inst.num_coflows
        self.stride = stride
        self.deadline = deadline
        self.w = np.asarray(inst.weight, dtype=np.float64)
        self.evaluations = 0
        self.converged = 0
        self.first_flow = np.minimum.reduceat(inst.flow_release, inst.ptr[:-1]) if (
            inst.num_flows and np.all(np.diff(inst.ptr) > 0)) else np.asarray(inst.release)
        uni = fls.uniform_two_link(inst)
        self.data: _Data | None = None
        if uni is not None:
            la, lb, cap = uni
            self.data = _Data(
                np.ascontiguousarray(inst.ptr, dtype=np.int64), la, lb,
                np.ascontiguousarray(inst.flow_release, dtype=np.float64),
                np.ascontiguousarray(inst.flow_size, dtype=np.float64) / cap, self.w,
                np.asarray(inst.release + inst.gamma, dtype=np.float64), cap,
                int(inst.routes.shape[1]))

    def _empty(self) -> tuple[FloatArray, FloatArray, IntArray]:
        assert self.data is not None
        L = self.data.L
        return np.zeros((L, 8)), np.full((L, 8), np.inf), np.ones(L, np.int64)

    def _run(self, S, E, cnt, order, q0, q1, comp, limit, record=False, rec=None):
        d = self.data
        assert d is not None
        if rec is None:
            rec = (np.zeros(0, np.int64), np.zeros(0), np.zeros(0))
        return fls.run_order(S, E, cnt, order, q0, q1, d.ptr, d.la, d.lb, d.frel, d.dur, d.w,
                             d.lbk, comp, limit, record, *rec)

    def full(self, order: IntArray, *, timed: bool = True) -> _Incumbent:
        """An order's completion times and checkpoints (``timed``: raises
        :class:`_OutOfTime` past the deadline)."""
        self.evaluations += 1
        K = self.K
        comp = np.zeros(K)
        if self.data is None:
            left = self.deadline - now() if timed else None
            if left is not None and left <= 0:
                raise _OutOfTime
            try:
                comp = order_completion(self.inst, order, time_limit=left)
            except PermutationTimeout:
                raise _OutOfTime from None
            return _Incumbent(order, comp, float(np.dot(self.w, comp)), [])
        S, E, cnt = self._empty()
        snaps = [fls.pack(S, E, cnt)]
        for q in range(0, K, self.stride):
            if timed and now() > self.deadline:
                raise _OutOfTime
            q1 = min(q + self.stride, K)
            _, _, S, E, *_ = self._run(S, E, cnt, order, q, q1, comp, math.inf)
            if q1 < K:
                snaps.append(fls.pack(S, E, cnt))
        return _Incumbent(order, comp, float(np.dot(self.w, comp)), snaps)

    def move(self, inc: _Incumbent, order: IntArray, p: int, end: int) -> _Incumbent | None:
        """``order`` (equal to the incumbent's before position ``p`` and from ``end`` on,
        as a set of coflows) if it is better than the incumbent, else ``None``."""
        self.evaluations += 1
        K = self.K
        target = inc.value * (1 - _IMPROVES)
        if self.data is None:
            left = self.deadline - now()
            if left <= 0:
                raise _OutOfTime
            try:
                comp = order_completion(self.inst, order, time_limit=left)
            except PermutationTimeout:
                raise _OutOfTime from None
            value = float(np.dot(self.w, comp))
            return _Incumbent(order, comp, value, []) if value < target else None
        st = self.stride
        c0 = p // st
        S, E, cnt = fls.unpack(*inc.snaps[c0])
        comp = inc.comp.copy()
        wl = self.w[order] * self.data.lbk[order]
        lb_after = np.concatenate([np.cumsum(wl[::-1])[::-1], [0.0]])  # by position
        wc = self.w[inc.order] * inc.comp[inc.order]
        cost_after = np.concatenate([np.cumsum(wc[::-1])[::-1], [0.0]])
        total = float(inc.value - cost_after[c0 * st])  # the unchanged prefix
        # the earliest release of a flow of order[q:]: the lists before it no longer matter
        tmin = np.minimum.accumulate(self.first_flow[inc.order][::-1])[::-1]
        snaps = list(inc.snaps[: c0 + 1])
        q = c0 * st
        while q < K:
            if now() > self.deadline:
                raise _OutOfTime
            q1 = min(q + st, K)
            done, part, S, E, *_ = self._run(S, E, cnt, order, q, q1, comp,
                                              target - total - lb_after[q1])
            total += part
            if not done:
                return None
            q = q1
            if q < K:
                fs, fe, c2 = inc.snaps[q // st]
                if q >= end and fls.same(S, E, cnt, fs, fe, c2, float(tmin[q])):
                    # the incumbent's state again: the rest of its schedule follows
                    self.converged += 1
                    rest = inc.order[q:]
                    comp[rest] = inc.comp[rest]
                    total += float(cost_after[q])
                    snaps.extend(inc.snaps[q // st:])
                    break
                snaps.append(fls.pack(S, E, cnt))
        value = float(np.dot(self.w, comp))
        return _Incumbent(order, comp, value, snaps) if value < target else None

    def schedule(self, order: IntArray) -> tuple[Schedule, FloatArray]:
        """The schedule of ``order`` (no time limit: every run returns one)."""
        if self.data is None:
            return permutation_schedule(self.inst, order)
        S, E, cnt = self._empty()
        comp = np.zeros(self.K)
        rec = (np.zeros(self.inst.num_flows, np.int64), np.zeros(self.inst.num_flows),
               np.zeros(self.inst.num_flows))
        _, _, S, E, rf, rs, re, n = self._run(S, E, cnt, order, 0, self.K, comp, math.inf,
                                              True, rec)
        sched = Schedule._adopt(rf[:n].copy(), rs[:n].copy(), re[:n].copy(),
                                np.full(n, self.data.cap))
        return sched, comp


def _by_completion(comp: FloatArray) -> IntArray:
    return np.lexsort((np.arange(comp.size), comp)).astype(np.int64)


def _online_order(inst: Instance, policy: str, deadline: float) -> IntArray | None:
    """The order in which the simulator's ``policy`` completes the coflows, or ``None``
    when the simulation does not finish by ``deadline``."""
    from ..sim import simulate

    def progress(delivered: float) -> None:
        if delivered < 1.0 and now() > deadline:
            raise _OutOfTime

    try:
        res = simulate(inst, policy, progress=progress, record=False)
    except _OutOfTime:
        return None
    return _by_completion(np.asarray(res.completion, dtype=np.float64))


def _neighbours(inst: Instance, comp: FloatArray) -> npt.NDArray[np.bool_]:
    """``[k, j]``: coflows ``k`` and ``j`` share a port and their spans ``[r, C]`` overlap."""
    K = inst.num_coflows
    routes = inst.routes
    links = np.zeros((K, routes.shape[1]), np.float32)
    rows = np.asarray(inst.flow_coflow, dtype=np.int64)
    fl = np.repeat(rows, np.diff(routes.indptr))
    links[fl, routes.indices] = 1.0
    share = (links @ links.T) > 0
    r = np.asarray(inst.release, dtype=np.float64)
    overlap = (r[:, None] < comp[None, :]) & (r[None, :] < comp[:, None])
    out = share & overlap
    np.fill_diagonal(out, False)
    return out


def _moved(order: IntArray, i: int, j: int) -> IntArray:
    """``order`` with the coflow at position ``i`` put at position ``j``."""
    o = np.delete(order, i)
    return np.insert(o, j, order[i]).astype(np.int64)


def _targets(pos: IntArray, k: int, nb: npt.NDArray[np.bool_] | None, K: int) -> list[int]:
    """Positions to try coflow ``k`` at, nearest first."""
    i = int(pos[k])
    if nb is None:
        cand = [j for j in range(K) if j != i]
    else:
        js = pos[np.flatnonzero(nb[k])]
        # ahead of a neighbour before it; behind one after it (after k is taken out, the
        # neighbour at position j > i sits at j - 1, so k goes to j)
        cand = sorted({int(j) for j in js if j < i} | {int(j) for j in js if j > i})
    return sorted(cand, key=lambda j: (abs(j - i), j))


def local_search(
    inst: Instance,
    *,
    time_limit: float = 60.0,
    seed: int = 0,
    neighbourhood: str = "overlap",
    starts: Sequence[str] = START_ORDERS,
    initial_orders: Sequence[Sequence[int]] = (),
    lp_share: float = 0.25,
    perturbations: int = 10,
    stride: int = 8,
    rel_gap: float = 1e-9,
    progress: Callable[[float], None] | None = None,
) -> Result:
    """The best permutation schedule that insert moves reach from the best start order.

    Parameters
    ----------
    inst
        The instance (no coflow dependencies).
    time_limit
        Seconds; the best order found by then is returned (``TIME_LIMIT``).
    seed
        Seeds the perturbations between local optima (same seed, same result, when
        the time limit does not stop the search).
    neighbourhood
        ``overlap`` (ports shared and spans overlapping) or ``all`` positions.
    starts
        Names of starting orders (:data:`START_ORDERS`); ``initial_orders`` adds
        orders of coflow positions.
    lp_share
        Share of the time limit the pairwise LP may take for its order (and bound).
    perturbations
        How many times to perturb the best order and search again once a local
        optimum is reached (while time is left).
    stride
        Coflows between the incumbent's checkpoints.
    progress
        Called with the search's value (``sum w_k C_k`` of its current order, as the
        evaluator computes it) each time a move takes it below every value before.
    """
    _reject_dependencies(inst, "the local search")
    if neighbourhood not in NEIGHBOURHOODS:
        raise CoflowoptError(
            f"neighbourhood must be one of {', '.join(NEIGHBOURHOODS)}, got {neighbourhood!r}")
    unknown = [s for s in starts if s not in START_ORDERS]
    if unknown:
        raise CoflowoptError(
            f"unknown start order {unknown[0]!r}; choose from {', '.join(START_ORDERS)}")
    if isinstance(stride, bool) or not isinstance(stride, int) or stride < 1:
        raise CoflowoptError(f"stride must be an integer >= 1, got {stride!r}")
    if isinstance(perturbations, bool) or not isinstance(perturbations, int) or perturbations < 0:
        raise CoflowoptError(f"perturbations must be an integer >= 0, got {perturbations!r}")
    if not (isinstance(lp_share, (int, float)) and 0 <= lp_share < 1):
        raise CoflowoptError(f"lp_share must be a number in [0, 1), got {lp_share!r}")
    start = now()
    K = inst.num_coflows
    if K == 0:
        return Result(Status.OPTIMAL, 0.0, 0.0, 0.0, "local-search", schedule=Schedule.empty(),
                      completion=np.zeros(0))
    deadline = start + time_limit
    ev = _Evaluator(inst, stride, deadline)
    bounds = cheap_bounds(inst)
    rng = np.random.default_rng(seed)

    # --- starting orders, evaluated as they come (the first always: every run has one)
    orders: list[tuple[str, IntArray]] = [
        (f"initial {n}", _check_order(inst, o)) for n, o in enumerate(initial_orders)]
    ratio = inst.weight / np.maximum(inst.gamma, 1e-300)
    makers = {
        "sincronia": lambda: sincronia_order(inst),
        "smallest": lambda: np.argsort(-ratio, kind="stable"),
        "release": lambda: np.lexsort((-ratio, inst.release)),
    }
    values: dict[str, float] = {}
    best: _Incumbent | None = None
    best_name = ""
    timed_out = False
    lp_info: dict = {}

    def consider(name: str, order: IntArray) -> None:
        nonlocal best, best_name
        t0 = now()
        inc = ev.full(np.asarray(order, dtype=np.int64), timed=best is not None)
        if best is None:
            # time kept for the returned schedule: one more pass over the order, recorded
            ev.deadline = deadline - 1.5 * (now() - t0)
        values[name] = inc.value
        if best is None or inc.value < best.value * (1 - _IMPROVES):
            best, best_name = inc, name
        resorted = _by_completion(inc.comp)
        if not np.array_equal(resorted, inc.order):
            inc2 = ev.full(resorted)
            values[name + ", re-sorted"] = inc2.value
            if inc2.value < best.value * (1 - _IMPROVES):
                best, best_name = inc2, name + ", re-sorted"

    try:
        for name in starts:
            if name in makers:
                orders.append((name, np.asarray(makers[name](), dtype=np.int64)))
        first = orders.pop(0) if orders else ("sincronia", sincronia_order(inst))
        consider(*first)
        for name, o in orders:
            consider(name, o)
        for name in starts:
            if name.startswith("online-"):
                online = _online_order(inst, name.removeprefix("online-"), ev.deadline)
                if online is None:
                    raise _OutOfTime
                consider(name, online)
        if "pairwise" in starts and lp_share > 0:
            lp_bound, C, lp_info = pairwise_lp(
                inst, time_limit=max(min(lp_share * time_limit, ev.deadline - now()), 0.0))
            if C is not None:
                bounds["pairwise"] = lp_bound
                consider("pairwise", np.lexsort((np.arange(K), C)).astype(np.int64))
    except _OutOfTime:
        timed_out = True
    assert best is not None
    start_name, start_value = best_name, best.value

    # --- the search
    moves_tried = moves_taken = passes = kicks = 0
    best_is_local = False  # a whole pass around the best order found no better one
    incumbent = best
    lowest = best.value  # the lowest value reported (progress)
    try:
        while not timed_out:
            improved = False
            passes += 1
            nb = None if neighbourhood == "all" else _neighbours(inst, incumbent.comp)
            delay = ev.w * (incumbent.comp - inst.release - inst.gamma)
            for k in np.lexsort((np.arange(K), -delay)):
                pos = np.empty(K, np.int64)
                pos[incumbent.order] = np.arange(K)
                i = int(pos[k])
                for j in _targets(pos, int(k), nb, K):
                    moves_tried += 1
                    cand = ev.move(incumbent, _moved(incumbent.order, i, j), min(i, j),
                                   max(i, j) + 1)
                    if cand is not None:
                        incumbent = cand
                        moves_taken += 1
                        improved = True
                        if progress is not None and cand.value < lowest:
                            lowest = cand.value
                            progress(lowest)
                        if nb is not None:  # spans changed: neighbours afresh
                            nb = _neighbours(inst, incumbent.comp)
                        break
            if incumbent.value < best.value:
                best, best_is_local = incumbent, False
            if improved:
                continue
            if incumbent is best:
                best_is_local = True
            if kicks >= perturbations or K <= 2:
                break
            # perturb the best order (a few coflows moved a few positions), search again
            kicks += 1
            order = best.order.copy()
            for _ in range(max(2, K // 50)):
                i = int(rng.integers(K))
                j = int(np.clip(i + rng.integers(-8, 9), 0, K - 1))
                order = _moved(order, i, j)
            incumbent = ev.full(order)
    except _OutOfTime:
        timed_out = True
    if incumbent.value < best.value:
        best, best_is_local = incumbent, False

    sched, comp = ev.schedule(best.order)
    value = float(np.dot(ev.w, comp))
    name = max(bounds, key=lambda k: bounds[k] if math.isfinite(bounds[k]) else -math.inf)
    bound = min(bounds[name], value) if math.isfinite(bounds[name]) else math.nan
    if proves_optimal(value, bounds[name], rel_gap):
        status = Status.OPTIMAL
    elif timed_out:
        status = Status.TIME_LIMIT
    else:
        status = Status.FEASIBLE
    info = {
        "order": [inst.ids[k] for k in best.order], "start": start_name,
        "start_value": start_value, "starts": values, "passes": passes,
        "moves_tried": moves_tried, "moves_taken": moves_taken, "perturbations": kicks,
        "evaluations": ev.evaluations, "converged_early": ev.converged,
        "local_optimum": best_is_local,
        "search_value": best.value, "bound_method": name, "bounds": bounds,
        "certified_ratio": value / bound if bound > 0 else math.inf,
        "evaluator": "free lists" if ev.data is not None else "residual profiles",
        "class": "permutation schedules (bound is on every schedule)",
    }
    if lp_info:
        info["lp"] = lp_info
    return Result(status, value, bound, now() - start, "local-search", schedule=sched,
                  completion=comp, info=info)
