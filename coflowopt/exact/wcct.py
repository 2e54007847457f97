"""Exact minimum of ``sum w_k C_k`` in continuous time: branch and bound over event orders.

See ``models/exact-wcct.md``. A node is a prefix of the event order
(releases and completions); its LP (:mod:`coflowopt.exact._events`) models
the prefix exactly and bounds the rest; a complete order's LP is exact, so
the best leaf is the optimum. Children are "the next release comes next"
and "coflow k completes next" for each coflow that may complete.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from .._budget import TimeBudget, now
from ..bounds.subsets import subset_table
from ..instance import Instance
from ..result import Result, Status
from ..schedule import Schedule, check_feasible
from ._events import FB_SHARE, EventLP, NodeLP
from ._groups import Groups, build_groups, check_size, check_span

__all__ = ["FIRST_SECONDS", "IPM_COLUMNS", "POLISH_SHARE", "event_sequence",
           "solve_event_sequence", "solve_exact", "starting_orders", "starting_schedule"]

FIRST_SECONDS = 1.0
"""The first starting order's event LP gets at least this many seconds, however short the
time limit (its permutation schedule is always computed: every run has an incumbent)."""

POLISH_SHARE = 0.25
"""The polish (moving single completions of the incumbent's event order) stops after this
share of the time limit: each move is an event LP, and on 16 coflows over 10 ports the
polish alone used a 120 s limit (1,025 LPs) and left the search no node.
"""

IPM_COLUMNS = 4096
"""Event LPs solved cold with at least this many columns use HiGHS's interior point."""

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


def event_sequence(elp: EventLP, completion: npt.ArrayLike) -> list[int]:
    """The event order of a schedule with these (scaled) completion times.

    Ties put completions before releases and follow the dependency order;
    the result always satisfies :meth:`EventLP.ready`.
    """
    C = np.asarray(completion, dtype=np.float64)
    topo = np.empty(elp.K, dtype=np.int64)
    topo[elp.g.instance.topological_order] = np.arange(elp.K)
    items = [(float(C[k]), 0, int(topo[k]), k) for k in range(elp.K)]
    items += [(float(r), 1, j, -(j + 1)) for j, r in enumerate(elp.rho)]
    items.sort()
    seq = [e for *_, e in items]
    return _repair(elp, seq)


def _repair(elp: EventLP, seq: Sequence[int]) -> list[int]:
    """Move each completion after what it needs (releases, predecessors)."""
    out: list[int] = []
    pending = list(seq)
    while pending:
        ready, nxt = elp.ready(out)
        for i, e in enumerate(pending):
            if (e >= 0 and e in ready) or (e < 0 and nxt is not None and -e - 1 == nxt):
                out.append(e)
                pending.pop(i)
                break
        else:  # nothing in order is possible: take the next release
            j = nxt if nxt is not None else None
            if j is None:
                raise AssertionError("no event can come next")  # pragma: no cover
            pending.remove(-(j + 1))
            out.append(-(j + 1))
    return out


def _greedy_completion(elp: EventLP, prefix: Sequence[int], C: FloatArray) -> list[int]:
    """Complete a prefix: remaining coflows by their LP completion times."""
    rest = [k for k in range(elp.K) if k not in set(prefix)]
    items = [(float(C[k]), 0, k) for k in rest]
    nrel = sum(1 for e in prefix if e < 0)
    items += [(float(elp.rho[j]), 1, -(j + 1)) for j in range(nrel, elp.R)]
    items.sort()
    return _repair(elp, [*prefix, *(e for *_, e in items)])


def solve_event_sequence(
    elp: EventLP, events: Sequence[int], *, time_limit: float | None = None
) -> NodeLP | None:
    """Solve the exact LP of a complete event order (None if infeasible).

    Without the search's horizon (:func:`_update_horizon`): a schedule's LP needs no
    finite column bounds, and the horizon, taken from the incumbent, may cut off the
    incumbent's own order by rounding (in one instance its optimal order became
    "infeasible" and the search returned no schedule).
    """
    node = elp.build(events, horizon=math.inf)
    if node is None:
        return None
    # a cold solve: on large LPs HiGHS's interior point (with crossover to a vertex) is
    # far faster than its dual simplex (40 coflows, 27,720 columns: 2.4 s against 29 s)
    big = node.lp.num_cols >= IPM_COLUMNS
    sol = node.lp.solve(time_limit=time_limit, options={"solver": "ipm"} if big else None)
    node.solution = sol
    return node if sol.ok else None


def _node_schedule(elp: EventLP, node: NodeLP) -> Schedule:
    g = elp.g
    sol = node.solution
    assert sol is not None and sol.x is not None
    m = len(node.events)
    times = np.maximum.accumulate(np.concatenate([[0.0], sol.x[node.t_cols]]))
    x = np.maximum(sol.x[node.x_cols], 0.0)
    # HiGHS meets "sum x = size" and the finishes-before tails only within its tolerance
    # (1e-7, scaled): a group far smaller than the rest can get no data at all (its flows
    # would be dropped), and a small successor no data in its last interval (it would
    # complete before its predecessors). Such a group is served in its last interval (its
    # coflow's completion), which keeps releases and dependencies; g.schedule stretches
    # the interval where the extra data need it, and the value is read from the schedule.
    # (g.amounts serves a group left at 0 so too; it is set here first because the
    # finishes-before tails below count it.)
    order = np.lexsort((node.x_interval, node.x_group))  # by group, then interval
    grp = node.x_group[order]
    ends = order[np.r_[grp[1:] != grp[:-1], True]]  # each group's entry in its last interval
    ge = node.x_group[ends]
    lost = np.bincount(node.x_group, weights=x, minlength=g.num_groups)[ge] <= 0
    x[ends[lost]] = g.size[ge[lost]]
    fb = np.array([len(b) > 0 for b in elp.finishes_before], dtype=bool)[g.coflow[ge]]
    if fb.any():
        tail = np.bincount(g.coflow[ge], weights=x[ends], minlength=elp.K)
        share = np.bincount(g.coflow, weights=FB_SHARE * g.size, minlength=elp.K)
        short = fb & (tail < 0.5 * share)[g.coflow[ge]]
        x[ends[short]] = np.maximum(x[ends[short]], FB_SHARE * g.size[ge[short]])
    return g.schedule(times, g.amounts(m, node.x_interval - 1, node.x_group, x))


def starting_schedule(
    inst: Instance, elp: EventLP, node: NodeLP | None, greedy: tuple[float, Any] | None,
    *, verify: bool,
) -> tuple[Schedule, FloatArray, float, IntArray | None]:
    """The schedule of an event LP (``node``), or the greedy permutation schedule of the best
    starting order (``greedy``: its value and the order) where that is better.

    The LP schedule's value is read from the schedule, which ``g.schedule`` may have
    stretched where the LP met a tiny capacity only within its tolerance: the greedy
    schedule (exact rates) can then be better. It also stands in for no LP schedule (the
    LPs ran out of time) and, with ``verify``, for one that fails ``check_feasible``.
    Returns the schedule, the completion times, the value and, for the greedy schedule,
    its order.
    """
    if node is not None:
        sched = _node_schedule(elp, node)
        comp = sched.coflow_completion(inst)
        value = float(np.dot(inst.weight, comp))
        if greedy is None or not (greedy[0] < value
                                  or (verify and not check_feasible(inst, sched))):
            return sched, comp, value, None
    if greedy is None:
        raise ValueError("no schedule to start from")  # pragma: no cover - callers check
    from .permutation import permutation_schedule

    order = np.asarray(greedy[1], np.int64)
    sched, comp = permutation_schedule(inst, order)
    return sched, comp, float(np.dot(inst.weight, comp)), order


def _heuristic_orders(inst: Instance) -> list[IntArray]:
    from ..bounds.sincronia import sincronia_order

    ratio = inst.weight / np.maximum(inst.gamma, 1e-300)
    orders = [np.argsort(-ratio, kind="stable"), np.lexsort((-ratio, inst.release)),
              sincronia_order(inst)]
    return orders


def starting_orders(
    inst: Instance, orders: Sequence[npt.ArrayLike], left: Callable[[], float]
) -> Iterator[tuple[IntArray, FloatArray, bool]]:
    """``(order, completions, first)`` for each of ``orders`` whose permutation schedule is
    computed while ``left()`` seconds remain. The first order's is always computed, however
    short the limit (one greedy pass over the instance: every run has an incumbent, and a
    time limit can be overrun by that pass). Stops at the first order that runs out of
    time."""
    from .permutation import PermutationTimeout, order_completion

    for i, order in enumerate(orders):
        first = i == 0
        if not first and left() <= 0:
            return
        try:
            comp = order_completion(inst, order, time_limit=None if first else max(left(), 0.0))
        except PermutationTimeout:
            return
        yield np.asarray(order, np.int64), comp, first


def solve_exact(
    inst: Instance,
    *,
    time_limit: float = 60.0,
    rel_gap: float = 1e-6,
    cut_rounds: int = 1,
    root_cut_rounds: int = 30,
    global_cut_depth: int = 0,
    polish: bool = True,
    initial_orders: Sequence[Sequence[int]] = (),
    progress: Callable[[float, float, float], None] | None = None,
) -> Result:
    """Minimum ``sum w_k C_k`` over all fluid schedules (releases, weights, dependencies).

    Parameters
    ----------
    time_limit
        Seconds; at the limit the incumbent and the smallest open bound are
        returned with status ``TIME_LIMIT``.
    rel_gap
        Nodes whose bound is within ``rel_gap`` (relative) of the incumbent
        are pruned; ``OPTIMAL`` means the gap is at most this.
    cut_rounds, root_cut_rounds
        Rounds of cut separation per node and at the root.
    global_cut_depth
        Separate new parallel inequalities (shared by all nodes) down to this
        depth; deeper nodes use the pool and their own tangent cuts.
    polish
        Improve the starting incumbent by moving single completions in its
        event order (for at most :data:`POLISH_SHARE` of the time limit).
    initial_orders
        Extra coflow orders whose permutation schedules seed the incumbent.
    progress
        Optional callable ``progress(fraction_of_time_used, incumbent, bound)``.
    """
    start = now()
    K = inst.num_coflows
    if K == 0:
        return Result(Status.OPTIMAL, 0.0, 0.0, 0.0, "exact", schedule=Schedule.empty(),
                      completion=np.zeros(0))

    def left() -> float:
        return time_limit - (now() - start)

    g = build_groups(inst)
    check_span(g)
    elp = EventLP(g)
    check_size((K + elp.R) * g.num_groups, "method='exact' (the LP of one event order)")
    w = inst.weight
    tu = g.time_unit

    # ---------------------------------------------------------------- incumbent
    best_val = math.inf
    best_events: list[int] | None = None
    best_node: NodeLP | None = None  # the incumbent's solved LP (its schedule)
    # the best greedy permutation schedule among the starting orders: exact rates, kept in
    # case the LP schedule of the best event order fails check_feasible (an LP solved in
    # floating point can drop a flow far smaller than the rest)
    greedy: tuple[float, npt.NDArray[np.int64]] | None = None

    def offer(events: Sequence[int], *, first: bool = False) -> float:
        """Solve the LP of an event order; keep it if it beats the incumbent.

        ``first``: the first starting order, which gets at least :data:`FIRST_SECONDS`.
        """
        nonlocal best_val, best_events, best_node
        node = solve_event_sequence(
            elp, events, time_limit=max(left(), FIRST_SECONDS if first else 0.01))
        if node is None or node.solution is None:
            return math.inf
        val = node.solution.objective
        if val < best_val:
            best_val, best_events, best_node = val, list(events), node
            _update_horizon(elp, g, best_val)
        return val

    # the bound over completion orders (a table over every set of coflows, when there are
    # few): the root's bound, each node's (the orders that start with its completions),
    # and an order that attains it to start from
    table = subset_table(inst, tu, budget=TimeBudget(max(left(), 0.0)))
    if table is not None:
        elp.floor = table.floor  # each completion event no earlier than f of its set
    if inst.has_dependencies:
        # always feasible: every release first, then completions in dependency order
        offer([-(j + 1) for j in range(elp.R)] + [int(k) for k in inst.topological_order],
              first=True)
    else:
        orders = [*_heuristic_orders(inst), *(np.asarray(o) for o in initial_orders),
                  *([] if table is None else [np.asarray(table.order(), np.int64)])]
        for order, comp, first in starting_orders(inst, orders, left):
            gval = float(np.dot(w, comp))
            if greedy is None or gval < greedy[0]:
                greedy = (gval, order)
            offer(event_sequence(elp, comp / tu), first=first)
        if greedy is None:  # no order evaluated in time: releases first, then by e_k
            offer([-(j + 1) for j in range(elp.R)]
                  + [int(k) for k in np.argsort(g.earliest, kind="stable")], first=True)
        elif best_events is None:
            # the starting orders' LPs ran out of time: the best greedy permutation schedule
            # (a feasible schedule) is the incumbent the search has to beat
            best_val = greedy[0] / tu
            _update_horizon(elp, g, best_val)
    # the root LP: isolation plus the parallel inequalities (the ordering LP)
    from ..bounds.simple import isolation_bound

    root_bound = isolation_bound(inst).bound / tu
    if table is not None:
        root_bound = max(root_bound, table.bound)
    root = elp.build([])
    # rounding can make even the empty prefix's LP infeasible (extreme numeric ranges): then
    # nothing is proved beyond the isolation bound, and the incumbent stands as found
    unproven = root is None
    if root is not None and left() > 0:
        root_sol = elp.solve(root, rounds=root_cut_rounds, time_limit=max(left(), 0.01))
        if root_sol.ok and root_sol.x is not None:
            root_bound = max(root_bound, root_sol.bound)
            if left() > 0:
                offer(_greedy_completion(elp, [], root_sol.x[root.c_col]))
    if polish and best_events is not None:
        polish_end = start + POLISH_SHARE * time_limit
        _polish(elp, offer, lambda: (best_events, best_val),
                lambda: min(left(), polish_end - now()))

    nodes = 0
    pruned = math.inf  # smallest bound of a node discarded because of the incumbent
    # a node: its bound, its events, and (for the table) the set of coflows its events
    # complete and the table's cost of their order
    stack: list[tuple[float, tuple[int, ...], int, float]] = (
        [] if unproven else [(root_bound, (), 0, 0.0)])
    timed_out = False
    while stack:
        if left() <= 0:
            timed_out = True
            break
        bound, events, mask, cost = stack.pop()
        if bound >= best_val - rel_gap * abs(best_val):
            pruned = min(pruned, bound)
            continue
        nodes += 1
        if progress is not None:
            open_b = min([b for b, *_ in stack] + [bound, pruned])
            progress(1 - left() / time_limit, best_val * tu, open_b * tu)
        ready, nxt = elp.ready(events)
        kids: list[int] = ([-(nxt + 1)] if nxt is not None else []) + list(ready)
        if not kids:
            # a complete order whose LP did not solve ("error", or a limit with time left):
            # it has no children to carry its bound, which must not be lost
            pruned = min(pruned, bound)
            continue
        children = []
        released = elp.R if nxt is None else nxt  # releases in the prefix
        after = float(elp.rho[released - 1]) if released > 0 else 0.0
        for e in kids:
            child = (*events, e)
            cmask, ccost = mask, cost
            if e >= 0 and table is not None:
                # a completion after a release in the event order is no earlier than it
                cmask, ccost = mask | 1 << e, cost + table.step(mask, e, after)
            tb = bound if table is None else max(bound, table.rest(cmask, ccost))
            if tb >= best_val - rel_gap * abs(best_val):
                pruned = min(pruned, tb)  # no order that starts so can beat the incumbent
                continue
            if left() <= 0:
                timed_out = True
                children.append((tb, child, cmask, ccost))  # unexplored: keeps its bound
                continue
            node = elp.build(child)
            if node is None:
                continue
            sol = elp.solve(node, rounds=0 if node.is_leaf else cut_rounds,
                            time_limit=max(left(), 0.01),
                            global_cuts=len(child) <= global_cut_depth)
            if not sol.ok:
                if sol.proven_infeasible:
                    continue  # no schedule (better than the incumbent) in this subtree
                if sol.status == "infeasible":
                    # HiGHS says infeasible, its dual ray does not prove it: the subtree is
                    # not searched, but it keeps its parent's bound (else a numerically
                    # lost order could carry the optimum away with the bound)
                    pruned = min(pruned, bound)
                    continue
                timed_out = timed_out or sol.status == "time_limit"
                children.append((tb, child, cmask, ccost))
                continue
            if node.is_leaf:
                if sol.objective < best_val:
                    # its LP (horizon and cuts included) is the order's exact LP plus
                    # constraints its optimum meets: its solution is the schedule
                    best_val, best_events, best_node = sol.objective, list(child), node
                    _update_horizon(elp, g, best_val)
                pruned = min(pruned, sol.bound)
                continue
            cb = max(sol.bound, tb)
            if cb < best_val - rel_gap * abs(best_val):
                children.append((cb, child, cmask, ccost))
            else:
                pruned = min(pruned, cb)
        children.sort(key=lambda c: -c[0])
        stack.extend(children)

    runtime = now() - start
    # the root LP and every node LP bound only schedules better than the incumbent (their
    # columns end at its horizon), so the incumbent's value caps what they prove
    lower = root_bound if unproven else min([best_val, pruned, *(b for b, *_ in stack)])
    proven = max(min(max(lower, root_bound), best_val), 0.0) * tu
    if best_node is None and greedy is None:
        # no schedule: out of time (honest status) or none found with time left
        status = Status.TIME_LIMIT if timed_out or left() <= 0 else Status.NO_SOLUTION
        return Result(status, math.nan, proven, runtime, "exact", info={"nodes": nodes})
    sched, comp, value, taken = starting_schedule(inst, elp, best_node, greedy, verify=True)
    from_order = None if taken is None else [inst.ids[k] for k in taken]
    bound = min(proven, value)
    gap = (value - bound) / value if value > 0 else 0.0
    stopped = timed_out or left() <= 0
    if gap > rel_gap and not stopped and not inst.has_dependencies:
        # the search ended, but the schedule of its best order is worse than the value it
        # scored (an LP solved in floating point, stretched where it met a tiny capacity
        # only within its tolerance, or a greedy schedule): insert moves over the orders
        # near this schedule's completion order, with exact rates, close in on that value
        from .local_search import local_search

        near = local_search(inst, time_limit=left(), starts=(), lp_share=0.0,
                            initial_orders=[np.argsort(comp, kind="stable").tolist()])
        stopped = near.status is Status.TIME_LIMIT  # the clock stopped the local search
        if near.schedule is not None and near.completion is not None and near.objective < value:
            sched, comp, value = near.schedule, near.completion, near.objective
            from_order = list(near.info["order"])
            bound = min(proven, value)
            gap = (value - bound) / value if value > 0 else 0.0
    # optimal only when the bound says so (a search that ran to its end can still leave a
    # gap when the final schedule's LP differs from the one the search scored)
    if gap <= rel_gap:
        status = Status.OPTIMAL
    else:
        status = Status.TIME_LIMIT if stopped else Status.FEASIBLE
    info: dict = {"nodes": nodes, "root_bound": min(root_bound, best_val) * tu,
                  "events": None if best_events is None else _describe(elp, best_events),
                  "cuts": len(elp.pool)}
    if from_order is not None:
        # "events" is the best order the search proved; the schedule is another one's
        info["schedule"] = f"greedy permutation schedule of the order {from_order}"
    if any(b.size for b in inst.finishes_before):
        info["note"] = (f"with finishes-before the optimum is an infimum: the schedule keeps "
                        f"{FB_SHARE:g} of each successor's data for its last interval, the "
                        f"bound does not exceed the infimum")
    return Result(status, value, float(bound), now() - start, "exact",
                  schedule=sched, completion=comp, info=info)


def _describe(elp: EventLP, events: Sequence[int]) -> list[str]:
    ids = elp.g.instance.ids
    tu = elp.g.time_unit
    return [f"complete {ids[e]}" if e >= 0 else f"release at {elp.rho[-e - 1] * tu:g}"
            for e in events]


HORIZON_SLACK = 1e-6
"""Relative (and, in the time unit, absolute) room above the horizon: far above HiGHS's
feasibility tolerance (1e-7), so that an order as good as the incumbent stays feasible
in its LP. Any horizon at or above the exact one is valid; a tight one (1e-9, as it once
was) made the incumbent's own order infeasible when it equalled the isolation bound."""


def _update_horizon(elp: EventLP, g: Groups, best: float) -> None:
    """Only schedules better than ``best`` matter: no completion after this."""
    w = elp.weight
    base = float(np.dot(w, g.earliest))
    h = (best - base + w * g.earliest) / w
    elp.horizon = float(h.max()) * (1 + HORIZON_SLACK) + HORIZON_SLACK


def _polish(elp: EventLP, offer, current, left) -> None:
    """First-improvement local search: move one completion event elsewhere.

    ``current()`` gives the incumbent's events and value; a move improves when its LP
    beats that value (not the incumbent's LP solved again, which rounding may fail,
    and every move would then look like an improvement until the time limit).
    """
    improved = True
    while improved:
        improved = False
        seq, base = current()
        seq = list(seq)
        for i, j in itertools.product(range(len(seq)), repeat=2):
            if seq[i] < 0 or j == i:
                continue
            if left() <= 0:
                return
            cand = seq[:i] + seq[i + 1 :]
            cand.insert(j, seq[i])
            if _valid(elp, cand) and offer(cand) < base * (1 - 1e-9):
                improved = True
                break


def _valid(elp: EventLP, seq: Sequence[int]) -> bool:
    pref: list[int] = []
    for e in seq:
        ready, nxt = elp.ready(pref)
        if e >= 0 and e not in ready:
            return False
        if e < 0 and (nxt is None or -e - 1 != nxt):
            return False
        pref.append(e)
    return True
