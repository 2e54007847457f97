"""A portfolio for ``sum w_k C_k``: the best schedule and the best bound within a time limit.

``solve(..., method="best")``. Only the ``wcct`` objective (``sum w_k C_k``, absolute
completion times); instances without coflow dependencies (the heuristic orders and the
local search serve orders). It runs, in this order, each with what is left of its share
of the time limit ``T`` (the budget rule):

1. the cheap bounds (isolation, per-port, Sincronia's duals, and on at most 16 coflows the
   bound over completion orders: no limit, milliseconds);
2. the heuristic orders, each served by the greedy order-preserving allocation and kept
   when it is the best so far: Sincronia's order (always evaluated, however short the
   limit: every run has a schedule), the completion orders of the simulator's online
   ``sincronia`` and ``varys``, smallest isolation time per weight first, release order,
   and each of these re-sorted by the completion times of its own schedule; until
   ``HEURISTIC_SHARE * T`` from the start;
3. the LP bounds: the pairwise LP (whose completion times give one more order) and the
   interval-indexed LP, until a further ``BOUND_SHARE * T``;
4. on instances of at most :data:`EXACT_MAX_COFLOWS` coflows, the branch and bound of
   ``method="exact"`` (seeded with the best order), with ``EXACT_SHARE`` of the time left:
   it may prove its schedule optimal and close the gap;
5. the local search over orders (``method="local-search"``) from the best order, with
   the rest;
6. when the local search ends by itself (at a local optimum of its moves, after its
   perturbations) with time left: the large neighbourhood search (``method="lns"``,
   windows of coflows re-ordered exactly) from the local search's order, with the rest.
   (On the Facebook trace the local search uses the whole limit, so this phase does not
   run there; alone, from the same starting orders, it searched 19 windows of 5 in 600 s.)

Every phase ends by ``(1 - RESERVE_SHARE) * T``: the rest is kept for building the
returned schedule and for ``solve``'s feasibility check of it (2.8 s on the Facebook
trace). A phase whose share is used up before it starts is skipped, and the log says so
(a search phase also when less than :data:`SEARCH_MIN_EVALS` evaluations of an order are
left).

The result: the best schedule found and the best bound proven (``info["incumbent_from"]``
and ``info["bound_from"]`` name the methods), the gap between them, ``OPTIMAL`` when the
bound meets the schedule's value within ``rel_gap``, else ``TIME_LIMIT`` when the clock cut
a phase short and ``FEASIBLE`` when every phase ended by itself. ``info["log"]`` lists
every improvement of the incumbent or the bound (elapsed seconds, method, event,
incumbent, bound, gap; the event is ``incumbent``, ``bound``, ``bound withdrawn`` when
the branch and bound's schedule fails the feasibility check and its bounds are dropped
with it, or ``started, until S s`` when the branch and bound, the local search or the
large neighbourhood search starts, ``S`` seconds from the start being its end;
``improving`` for a search's better values on its way, which become the incumbent when it
returns),
and ``progress`` is called with each entry as it happens.

Determinism: same instance, options and seed, same result, as long as the time limit
does not decide where a phase stops (then, as for every search here, a faster or slower
machine finds more or less).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from .._budget import check_time_limit, now
from .._files import natural_number
from ..bounds import check_options
from ..bounds.interval import interval_bound
from ..bounds.pairwise import pairwise_lp
from ..bounds.sincronia import sincronia_order
from ..errors import CoflowoptError
from ..instance import Instance
from ..result import Result, Status, proves_optimal
from ..schedule import Schedule, check_feasible
from ._order_eval import Incumbent, OrderEvaluator, OutOfTime, by_completion, online_order
from .certified import cheap_bounds
from .lns import lns
from .local_search import local_search
from .permutation import reject_dependencies
from .wcct import solve_exact

__all__ = ["BOUND_SHARE", "EXACT_MAX_COFLOWS", "EXACT_SHARE", "HEURISTIC_SHARE",
           "RESERVE_SHARE", "SEARCH_LOG_STEP", "SEARCH_MIN_EVALS", "portfolio"]

HEURISTIC_SHARE = 0.25
"""Share of the time limit for the heuristic orders (the first is evaluated regardless). The
shares are caps: what a phase leaves unused goes to the next (on the Facebook trace the
heuristics take about 20 s)."""
BOUND_SHARE = 0.25
"""Share of the time limit for the LP bounds (the pairwise LP of the Facebook trace: about
11 CPU s with its releases and every release threshold, 40-80 s with all releases 0)."""
EXACT_SHARE = 0.75
"""Share of the time left after the bounds that the branch and bound gets on small
instances; the local search gets the rest."""
EXACT_MAX_COFLOWS = 16
"""Instances of at most this many coflows are given to the branch and bound (which proved
16 coflows over 10 ports in 10 s to 6 minutes: ``benchmarks/results/solvers.md``)."""
RESERVE_SHARE = 0.03
"""Share of the time limit kept for the returned schedule and its feasibility check."""
SEARCH_MIN_EVALS = 2.5
"""A search phase (the local search, the large neighbourhood search) starts only with time
left for this many evaluations of an order (the time of the first one): a search evaluates
its first order whatever the clock says and builds its returned schedule once more after
its deadline, so with less it would run past the phases' end into the reserve."""

IMPROVES = 1e-9  # a value must be lower by this share to count as a new incumbent

SEARCH_LOG_STEP = 1e-3
"""The local search's better values on its way are logged when they are this much (relative)
below the last one logged: it improves thousands of times on the Facebook trace."""

LogEntry = dict[str, Any]


class _State:
    """The incumbent, the bounds and the log, as the phases improve them."""

    def __init__(self, start: float, progress: Callable[[Mapping[str, Any]], None] | None):
        self.start = start
        self.progress = progress
        self.value = math.inf
        self.incumbent_from = ""
        self.bound = -math.inf
        self.bound_from = ""
        self.bounds: dict[str, float] = {}
        self.log: list[LogEntry] = []
        self.timed_out = False

    def emit(self, method: str, event: str, value: float | None = None) -> None:
        """Log an entry (and pass it to ``progress``); ``value``: the incumbent it shows, if
        not the current one."""
        value = self.value if value is None else value
        inc = value if math.isfinite(value) else math.nan
        low = self.bound if math.isfinite(self.bound) else math.nan
        gap = (inc - low) / abs(inc) if math.isfinite(inc) and math.isfinite(low) and inc else (
            0.0 if inc == low == 0 else math.nan)
        entry = {"time": now() - self.start, "method": method, "event": event,
                 "incumbent": inc, "bound": low, "gap": gap}
        self.log.append(entry)
        if self.progress is not None:
            self.progress(dict(entry))

    def searching(self, method: str) -> Callable[[float], None]:
        """A callback for a search's better values on its way: one is logged (event
        ``improving``) when it is below the last logged value by :data:`SEARCH_LOG_STEP`
        (relative), without becoming the incumbent, which is the schedule the search
        returns at its end. Deterministic: the log does not depend on the clock."""
        last = self.value

        def note(value: float) -> None:
            nonlocal last
            if value < last * (1 - SEARCH_LOG_STEP):
                self.emit(method, "improving", value)  # the search's value and its gap
                last = value
        return note

    def offer_value(self, method: str, value: float) -> bool:
        if not math.isfinite(value):
            return False
        if not math.isfinite(self.value) or value < self.value * (1 - IMPROVES):
            self.value, self.incumbent_from = value, method
            self.emit(method, "incumbent")
            return True
        return False

    def withdraw(self, method: str) -> None:
        """Forget ``method``'s bounds (and log the bound left)."""
        if self.bounds.pop(method, None) is None:
            return
        self.bound_from = max(self.bounds, key=lambda n: self.bounds[n], default="")
        self.bound = self.bounds.get(self.bound_from, -math.inf)
        self.emit(method, "bound withdrawn")

    def offer_bound(self, method: str, value: float) -> None:
        if not math.isfinite(value):
            return
        self.bounds[method] = max(value, self.bounds.get(method, -math.inf))
        if value > self.bound:
            self.bound, self.bound_from = value, method
            self.emit(method, "bound")


def portfolio(
    inst: Instance,
    *,
    time_limit: float = 60.0,
    seed: int = 0,
    rel_gap: float = 1e-6,
    progress: Callable[[Mapping[str, Any]], None] | None = None,
) -> Result:
    """The best schedule and the best lower bound that the methods find within ``time_limit``.

    Parameters
    ----------
    inst
        An instance without coflow dependencies.
    time_limit
        Seconds, shared among the phases by the module's budget rule.
    seed
        Seeds the local search's perturbations.
    rel_gap
        ``OPTIMAL`` when the bound is within this share of the schedule's value.
    progress
        Called with each log entry (a mapping: ``time``, ``method``, ``event``,
        ``incumbent``, ``bound``, ``gap``) as it is made.
    """
    reject_dependencies(inst, "the portfolio (method 'best')")
    check_time_limit(time_limit)  # (solve checks them too; this function is public)
    if not natural_number(seed):
        raise CoflowoptError(f"seed must be an integer >= 0, got {seed!r}")
    check_options(portfolio, {"rel_gap": rel_gap, "progress": progress},
                  "the portfolio (method 'best')")
    start = now()
    K = inst.num_coflows
    if K == 0:
        return Result(Status.OPTIMAL, 0.0, 0.0, 0.0, "best", schedule=Schedule.empty(),
                      completion=np.zeros(0), info={"incumbent_from": "", "bound_from": "",
                                                    "log": []})
    end = start + (1 - RESERVE_SHARE) * time_limit
    st = _State(start, progress)
    phases: dict[str, str] = {}

    # 1. cheap bounds
    for name, value in cheap_bounds(inst).items():
        st.offer_bound(f"{name} bound", value)

    # 2. heuristic orders
    ev = OrderEvaluator(inst, 8, min(start + HEURISTIC_SHARE * time_limit, end))
    values: dict[str, float] = {}  # each heuristic order's value
    best: Incumbent | None = None

    first_eval = 0.0  # how long the first evaluation of an order took

    def consider(name: str, order: np.ndarray, *, timed: bool = True) -> None:
        nonlocal best, first_eval
        t0 = now()
        inc = ev.full(np.asarray(order, dtype=np.int64), timed=timed)
        if best is None:
            first_eval = now() - t0
        for label, cand in ((name, inc), (name + ", re-sorted", None)):
            if cand is None:  # the order of the schedule just evaluated, by completion time
                resorted = by_completion(inc.comp)
                if np.array_equal(resorted, inc.order):
                    return
                cand = ev.full(resorted)
            values[label] = cand.value
            label = label.replace(name, name + " order", 1)
            if st.offer_value(label, cand.value):
                best = cand

    ratio = inst.weight / np.maximum(inst.gamma, 1e-300)
    makers: dict[str, Callable[[], np.ndarray | None]] = {
        "sincronia": lambda: sincronia_order(inst),
        "online-sincronia": lambda: online_order(inst, "sincronia", ev.deadline),
        "online-varys": lambda: online_order(inst, "varys", ev.deadline),
        "smallest": lambda: np.argsort(-ratio, kind="stable"),
        "release": lambda: np.lexsort((-ratio, inst.release)),
    }
    phases["heuristics"] = "done"
    for name, make in makers.items():
        try:  # one that does not finish in time gives way to the next, which may be quicker
            order = make()
            if order is None:
                raise OutOfTime
            consider(name, order, timed=best is not None)  # the first: always
        except OutOfTime:
            phases["heuristics"] = "time limit"
            st.timed_out = True
    assert best is not None

    # 3. LP bounds (and the pairwise LP's order)
    bound_end = min(now() + BOUND_SHARE * time_limit, end)
    lp_info: dict[str, Any] = {}
    bounds_cut = False  # a bound (or the LP's order) stopped by the clock
    if bound_end - now() > 0:
        try:
            lp_bound, C, lp_info = pairwise_lp(inst, time_limit=bound_end - now())
        except CoflowoptError as exc:  # too large an LP: the other bounds stand
            C, phases["pairwise LP"] = None, str(exc)
        if C is not None:
            st.offer_bound("pairwise LP", lp_bound)
            ev.deadline = bound_end
            try:
                consider("pairwise LP", np.lexsort((np.arange(K), C)).astype(np.int64))
            except OutOfTime:
                bounds_cut = True
        elif "pairwise LP" not in phases:  # not refused for its size: stopped by the clock
            bounds_cut = True
        left = bound_end - now()
        if left > 0:
            try:
                res = interval_bound(inst, time_limit=left)
            except CoflowoptError as exc:  # too large an LP: the other bounds stand
                phases["interval LP"] = str(exc)
            else:
                if res.status is Status.BOUND:
                    st.offer_bound("interval LP", res.bound)
                else:
                    bounds_cut = True
        else:
            bounds_cut = True
        st.timed_out |= bounds_cut
        phases["bounds"] = "time limit" if bounds_cut else "done"
    else:
        phases["bounds"] = "skipped: no time left"
        st.timed_out = True

    # 4. branch and bound on small instances
    final: Result | None = None  # a sub-method's result whose schedule is the incumbent's
    start_order = best.order  # the local search's
    if K <= EXACT_MAX_COFLOWS and not proves_optimal(st.value, st.bound, rel_gap):
        t = now()
        exact_end = t + EXACT_SHARE * (end - t)
        if exact_end > t:
            def on_exact(frac: float, inc_value: float, low: float) -> None:
                st.offer_bound("exact", low)

            st.emit("exact", f"started, until {exact_end - start:.4g} s")
            left = exact_end - now()  # the log's reading of the clock counts too
            try:
                res = solve_exact(inst, time_limit=left, rel_gap=rel_gap,
                                  initial_orders=[[int(k) for k in best.order]], progress=on_exact)
            except CoflowoptError as exc:  # too large for its formulation
                phases["exact"] = str(exc)
            else:
                phases["exact"] = res.status.value
                st.timed_out |= res.status is Status.TIME_LIMIT
                if res.schedule is not None and not check_feasible(inst, res.schedule):
                    # LPs in floating point that lost a flow: neither the schedule nor the
                    # bounds that came with them are trusted (as solve's guard does)
                    phases["exact"] += ", schedule failed the feasibility check: not used"
                    st.withdraw("exact")
                else:
                    if res.schedule is not None and st.offer_value("exact", res.objective):
                        final = res
                        assert res.completion is not None
                        start_order = by_completion(np.asarray(res.completion, dtype=np.float64))
                    st.offer_bound("exact", min(res.bound, res.objective) if math.isfinite(
                        res.objective) else res.bound)
        else:
            phases["exact"] = "skipped: no time left"

    def search(name: str, fn: Callable[..., Result], **options: Any) -> Result | None:
        """Phases 5 and 6: ``fn`` from ``start_order`` with the time left (``None``: too
        little left to start)."""
        nonlocal final
        if end - now() <= SEARCH_MIN_EVALS * first_eval:
            phases[name] = "skipped: no time left"
            st.timed_out = True
            return None
        start_name = st.incumbent_from
        st.emit(name, f"started, until {end - start:.4g} s")
        res = fn(inst, time_limit=end - now(), starts=(),
                 initial_orders=[[int(k) for k in start_order]], lp_share=0.0,
                 rel_gap=rel_gap, progress=st.searching(name), **options)
        phases[name] = res.status.value
        st.timed_out |= res.status is Status.TIME_LIMIT
        if st.offer_value(f"{name} from {start_name}", res.objective):
            final = res
        elif final is None and res.schedule is not None:
            final = res  # the same order's schedule, already built
        return res

    # 5. local search from the best order
    if not proves_optimal(st.value, st.bound, rel_gap):
        found = search("local-search", local_search, seed=seed)
        if found is not None and found.status is Status.FEASIBLE:  # its local optimum
            index = {c: k for k, c in enumerate(inst.ids)}
            start_order = np.asarray([index[c] for c in found.info["order"]], dtype=np.int64)

            # 6. windows re-ordered exactly, from there, with what the local search left
            if not proves_optimal(st.value, st.bound, rel_gap):
                search("lns", lns)

    if final is not None and final.schedule is not None and final.completion is not None:
        sched, comp = final.schedule, np.asarray(final.completion, dtype=np.float64)
    else:
        sched, comp = ev.schedule(best.order)
    value = float(np.dot(inst.weight, comp))
    # a bound above the returned schedule's value is wrong: it is left out (proves_optimal)
    above = {n: b for n, b in st.bounds.items() if b > value and not proves_optimal(value, b, 0.0)}
    usable = {n: b for n, b in st.bounds.items() if n not in above}
    bound_from = max(usable, key=lambda n: usable[n]) if usable else ""
    bound = min(usable[bound_from], value) if usable else math.nan
    if proves_optimal(value, bound, rel_gap):
        status = Status.OPTIMAL
    elif st.timed_out:
        status = Status.TIME_LIMIT
    else:
        status = Status.FEASIBLE
    info: dict[str, Any] = {
        "incumbent_from": st.incumbent_from, "bound_from": bound_from, "log": st.log,
        "bounds": st.bounds, "heuristics": values, "phases": phases,
    }
    if above:
        info["bound_above_value"] = above
    if lp_info:
        info["lp"] = lp_info
    if final is not None:
        info["search"] = {k: final.info[k] for k in ("passes", "moves_tried", "moves_taken",
                                                     "perturbations", "windows_searched",
                                                     "windows_improved", "local_optimum", "nodes")
                          if k in final.info}
    return Result(status, value, bound, now() - start, "best", schedule=sched, completion=comp,
                  info=info)
