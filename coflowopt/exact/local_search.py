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

Cheap moves: an order is evaluated from checkpoints of the incumbent, and stops early
when it can no longer win (:mod:`._order_eval`).

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
from ._order_eval import IMPROVES, Incumbent, OrderEvaluator, OutOfTime, by_completion, online_order
from .certified import cheap_bounds
from .permutation import check_order, reject_dependencies

__all__ = ["NEIGHBOURHOODS", "START_ORDERS", "Start", "check_start_options", "finish", "local_search",
           "start_orders"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

NEIGHBOURHOODS = ("overlap", "all")
"""Where a coflow is tried: ``overlap`` at the positions of the coflows that share a
port with it and overlap it in time; ``all`` at every position."""

START_ORDERS = ("sincronia", "online-sincronia", "online-varys", "pairwise", "smallest",
                "release")
"""The starting orders, by name (see the module docstring)."""

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
    check_start_options(inst, "the local search", starts, stride, lp_share)
    if neighbourhood not in NEIGHBOURHOODS:
        raise CoflowoptError(
            f"neighbourhood must be one of {', '.join(NEIGHBOURHOODS)}, got {neighbourhood!r}")
    if isinstance(perturbations, bool) or not isinstance(perturbations, int) or perturbations < 0:
        raise CoflowoptError(f"perturbations must be an integer >= 0, got {perturbations!r}")
    start = now()
    K = inst.num_coflows
    if K == 0:
        return Result(Status.OPTIMAL, 0.0, 0.0, 0.0, "local-search", schedule=Schedule.empty(),
                      completion=np.zeros(0))
    ev = OrderEvaluator(inst, stride, start + time_limit)
    rng = np.random.default_rng(seed)
    st = start_orders(inst, ev, starts, initial_orders, lp_share * time_limit)
    best, timed_out = st.best, st.timed_out

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
    except OutOfTime:
        timed_out = True
    if incumbent.value < best.value:
        best, best_is_local = incumbent, False

    return finish(inst, ev, st, best.order, timed_out, rel_gap, "local-search", start, {
        "passes": passes, "moves_tried": moves_tried, "moves_taken": moves_taken,
        "perturbations": kicks, "local_optimum": best_is_local, "search_value": best.value})


def check_start_options(inst: Instance, what: str, starts: Sequence[str], stride: int,
                        lp_share: float) -> None:
    """The options of :func:`start_orders` and :class:`OrderEvaluator` (``what``: the
    search, for the error on coflow dependencies)."""
    reject_dependencies(inst, what)
    unknown = [s for s in starts if s not in START_ORDERS]
    if unknown:
        raise CoflowoptError(
            f"unknown start order {unknown[0]!r}; choose from {', '.join(START_ORDERS)}")
    if isinstance(stride, bool) or not isinstance(stride, int) or stride < 1:
        raise CoflowoptError(f"stride must be an integer >= 1, got {stride!r}")
    if not (isinstance(lp_share, (int, float)) and 0 <= lp_share < 1):
        raise CoflowoptError(f"lp_share must be a number in [0, 1), got {lp_share!r}")


@dataclass(slots=True)
class Start:
    """The evaluated starting orders of a search over orders."""

    best: Incumbent
    name: str  # the best one's
    values: dict[str, float]  # every one's value, by name
    bounds: dict[str, float]  # the cheap bounds, and the pairwise LP's when it was solved
    lp_info: dict
    timed_out: bool  # the clock stopped the evaluation of the starting orders


def start_orders(inst: Instance, ev: OrderEvaluator, starts: Sequence[str],
                 initial_orders: Sequence[Sequence[int]], lp_limit: float) -> Start:
    """Evaluates ``initial_orders`` and the named ``starts`` (:data:`START_ORDERS`), each
    also re-sorted by its own completion times, until ``ev``'s deadline; the first is
    evaluated regardless, and its evaluation time sets aside one and a half more for the
    returned schedule (``ev.deadline`` moves earlier). The pairwise LP gets ``lp_limit``
    seconds at most."""
    K = inst.num_coflows
    deadline = ev.deadline
    bounds = cheap_bounds(inst)
    orders: list[tuple[str, IntArray]] = [
        (f"initial {n}", check_order(inst, o)) for n, o in enumerate(initial_orders)]
    ratio = inst.weight / np.maximum(inst.gamma, 1e-300)
    makers = {
        "sincronia": lambda: sincronia_order(inst),
        "smallest": lambda: np.argsort(-ratio, kind="stable"),
        "release": lambda: np.lexsort((-ratio, inst.release)),
    }
    values: dict[str, float] = {}
    best: Incumbent | None = None
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
        if best is None or inc.value < best.value * (1 - IMPROVES):
            best, best_name = inc, name
        resorted = by_completion(inc.comp)
        if not np.array_equal(resorted, inc.order):
            inc2 = ev.full(resorted)
            values[name + ", re-sorted"] = inc2.value
            if inc2.value < best.value * (1 - IMPROVES):
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
                online = online_order(inst, name.removeprefix("online-"), ev.deadline)
                if online is None:
                    raise OutOfTime
                consider(name, online)
        if "pairwise" in starts and lp_limit > 0:
            lp_bound, C, lp_info = pairwise_lp(
                inst, time_limit=max(min(lp_limit, ev.deadline - now()), 0.0))
            if C is not None:
                bounds["pairwise"] = lp_bound
                consider("pairwise", np.lexsort((np.arange(K), C)).astype(np.int64))
    except OutOfTime:
        timed_out = True
    assert best is not None
    return Start(best, best_name, values, bounds, lp_info, timed_out)


def finish(inst: Instance, ev: OrderEvaluator, st: Start, order: IntArray, timed_out: bool,
           rel_gap: float, method: str, start: float, search_info: dict) -> Result:
    """The result of a search over orders that ends with ``order``: its schedule (built
    again, recorded), the best of ``st``'s bounds, the status and the info."""
    sched, comp = ev.schedule(order)
    value = float(np.dot(ev.w, comp))
    bounds = st.bounds
    name = max(bounds, key=lambda k: bounds[k] if math.isfinite(bounds[k]) else -math.inf)
    bound = min(bounds[name], value) if math.isfinite(bounds[name]) else math.nan
    if proves_optimal(value, bounds[name], rel_gap):
        status = Status.OPTIMAL
    elif timed_out:
        status = Status.TIME_LIMIT
    else:
        status = Status.FEASIBLE
    info = {
        "order": [inst.ids[k] for k in order], "start": st.name,
        "start_value": st.values[st.name], "starts": st.values, **search_info,
        "evaluations": ev.evaluations, "converged_early": ev.converged,
        "bound_method": name, "bounds": bounds,
        "certified_ratio": value / bound if bound > 0 else math.inf,
        "evaluator": "free lists" if ev.data is not None else "residual profiles",
        "class": "permutation schedules (bound is on every schedule)",
    }
    if st.lp_info:
        info["lp"] = st.lp_info
    return Result(status, value, bound, now() - start, method, schedule=sched,
                  completion=comp, info=info)
