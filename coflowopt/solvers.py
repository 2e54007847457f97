"""Optimal schedules and proven lower bounds: the entry points ``solve`` and ``bound``.

Solvers are looked up by objective and method in :data:`SOLVERS`, bounds by
name in :data:`coflowopt.bounds.BOUNDS`. Every call returns a
:class:`~coflowopt.result.Result`; options are keyword-only and unknown ones
raise :class:`~coflowopt.errors.CoflowoptError`.

====================  ==============================================================
objective / method    what it computes
====================  ==============================================================
wcct / exact          the optimum of sum w_k C_k (branch and bound over event orders)
wcct / exact-milp     the same optimum from the event-position MILP (Pyomo + HiGHS)
wcct / time-indexed   best schedule on a time grid, and a valid lower bound
wcct / permutation    best permutation schedule (one order, greedy rates)
wcct / sincronia      Sincronia's order, greedy rates, certified ratio
wcct / pairwise-order pairwise-LP order, greedy rates, certified ratio
wcct / local-search   best start order improved by insert moves, greedy rates, certified
wcct / lns            best start order, windows of coflows re-ordered exactly, certified
wcct / best           portfolio: bounds, heuristic orders, exact (small) or local search
makespan / exact      minimum makespan (closed form or LP), Maluca utilization
deadlines / exact     most coflows (or weight) meeting deadlines (MILP), LP bound
====================  ==============================================================
"""

from __future__ import annotations

import dataclasses
import inspect
import math
from collections.abc import Callable
from typing import Any

from ._budget import check_time_limit, now
from ._jit import for_instance
from .bounds import check_options, compute_bound
from .bounds.simple import makespan_bound
from .errors import CoflowoptError
from .exact.certified import cheap_bounds, pairwise_order, sincronia_greedy
from .exact.deadlines import check_admitted, max_deadlines
from .exact.lns import lns
from .exact.local_search import local_search
from .exact.makespan import min_makespan
from .exact.milp import solve_event_milp
from .exact.permutation import best_permutation
from .exact.portfolio import portfolio
from .exact.time_indexed import time_indexed
from .exact.wcct import solve_exact
from .instance import Instance
from .result import Result, Status, proves_optimal
from .schedule import check_feasible

__all__ = ["OBJECTIVES", "SOLVERS", "bound", "solve"]

SolverFn = Callable[..., Result]

SOLVERS: dict[str, dict[str, SolverFn]] = {
    "wcct": {
        "exact": solve_exact,
        "exact-milp": solve_event_milp,
        "time-indexed": time_indexed,
        "permutation": best_permutation,
        "sincronia": sincronia_greedy,
        "pairwise-order": pairwise_order,
        "local-search": local_search,
        "lns": lns,
        "best": portfolio,
    },
    "makespan": {"exact": min_makespan},
    "deadlines": {"exact": max_deadlines},
}
"""Solvers by objective, then by method."""

OBJECTIVES = tuple(SOLVERS)


def solve(
    instance: Instance, *, method: str = "exact", objective: str = "wcct", time_limit: float = 60.0,
    **options: Any,
) -> Result:
    """Solve ``instance`` for ``objective`` with ``method`` (see :data:`SOLVERS`).

    The defaults are ``coflowopt solve``'s: the exact optimum of ``sum w_k C_k``
    within 60 s (every objective has an ``exact`` method).

    Solvers stop at ``time_limit`` seconds and then return their best
    schedule and bound with status ``TIME_LIMIT``. For ``wcct`` the search
    methods (exact, exact-milp, time-indexed, permutation) then report at least
    :func:`cheap_wcct_bound` (``info["bound_from"]`` names it when it is
    the better one). ``rel_gap`` options must be below 1.
    """
    if not isinstance(instance, Instance):
        raise CoflowoptError(f"expected an Instance, got {type(instance).__name__}")
    tl = check_time_limit(time_limit)
    try:
        methods = SOLVERS[objective]
    except (KeyError, TypeError):
        raise CoflowoptError(
            f"unknown objective '{objective}'; choose one of {', '.join(OBJECTIVES)}") from None
    try:
        fn = methods[method]
    except (KeyError, TypeError):
        if method == "best":  # the portfolio's phases (orders, local search) are wcct's
            raise CoflowoptError(
                f"method 'best' (the portfolio) supports only objective 'wcct', not "
                f"'{objective}'; choose one of {', '.join(methods)}") from None
        raise CoflowoptError(
            f"method '{method}' is not available for objective '{objective}'; "
            f"choose one of {', '.join(methods)}") from None
    check_options(fn, options, f"method '{method}'")
    with for_instance(instance.num_flows):  # kernels interpreted where compiling costs more
        res = fn(instance, time_limit=tl, **options)
    checked = now()
    if (objective, method) in _GUARDED:
        res = _guard(instance, objective, res)
    if (objective == "wcct" and method in _CHEAP_BOUNDED and res.status is not Status.OPTIMAL
            and options.get("lower") != "none"):  # time-indexed's lower="none": no bound asked
        rel = options.get("rel_gap", inspect.signature(fn).parameters["rel_gap"].default)
        res = _with_cheap_bound(instance, res, float(rel))
    # the check of the schedule counts in the runtime (2.8 s for a permutation schedule of
    # the Facebook trace, 706,397 flows; milliseconds for instances exact methods solve)
    return dataclasses.replace(res, runtime=res.runtime + now() - checked)


_CHEAP_BOUNDED = {"exact", "exact-milp", "time-indexed", "permutation"}
"""Search methods whose bound at a time limit can be below the cheap bounds (for example the
isolation bound, 673, where Sincronia's bound gives 2,737 in 0.15 s; the permutation
search's 7.4 against an isolation bound of 357). A bound on every schedule also bounds the
best permutation schedule."""


def cheap_wcct_bound(inst: Instance) -> tuple[float, str]:
    """The largest finite one of :func:`~coflowopt.exact.certified.cheap_bounds`, and its
    name (``nan`` if none is finite: one that overflowed bounds nothing)."""
    found = {k: v for k, v in cheap_bounds(inst).items() if math.isfinite(v)}
    if not found:
        return math.nan, ""
    name = max(found, key=lambda k: found[k])
    return found[name], name


def _with_cheap_bound(inst: Instance, res: Result, rel_gap: float) -> Result:
    """``res`` with its bound raised to :func:`cheap_wcct_bound` where that is higher.

    When that bound closes the gap to the schedule's value within ``rel_gap``, the
    schedule is proven optimal and the status says so (not ``time_limit`` after
    0.2 s of an 8 s limit, nor ``feasible``, each with a gap of 0). Not when the bound lies
    above the checked schedule's value: the bound is then wrong and is left out (see
    :func:`~coflowopt.result.proves_optimal`).
    """
    value, name = cheap_wcct_bound(inst)
    if not math.isfinite(value) or (math.isfinite(res.bound) and res.bound >= value):
        return res
    status = res.status
    if math.isfinite(res.objective):
        proved = proves_optimal(res.objective, value, rel_gap)
        if not proved and value > res.objective:  # a wrong bound: not used at all
            return dataclasses.replace(res, info={**res.info, "bound_above_value": name})
        if res.schedule is not None and proved:
            status = Status.OPTIMAL
        value = min(value, res.objective)
    return dataclasses.replace(res, status=status, bound=value,
                               info={**res.info, "bound_from": name})


_GUARDED = {("wcct", "exact"), ("wcct", "exact-milp"), ("wcct", "time-indexed"),
            ("wcct", "permutation"), ("wcct", "local-search"), ("wcct", "lns"), ("wcct", "best"),
            ("makespan", "exact"), ("deadlines", "exact")}
"""The methods whose schedules come from LPs or MILPs solved in floating point, or (the
local search's and the portfolio's) from a schedule builder other than the simulator."""


def _guard(inst: Instance, objective: str, res: Result) -> Result:
    """No schedule that :func:`~coflowopt.schedule.check_feasible` rejects is returned.

    An LP solved in floating point can drop a flow whose size lies below the solver's
    tolerances after scaling (as with sizes 1e4 and 1e-4 in one instance). Then the
    schedule and the bound that came with it are not trusted: the result has no solution
    and, for ``wcct``, :func:`cheap_wcct_bound` (computed without a time limit).
    """
    if res.schedule is None:
        return res
    if objective == "deadlines":  # admitted coflows by their deadlines, the others served
        report = check_admitted(inst, res)
    else:
        report = check_feasible(inst, res.schedule)
    if report and math.isfinite(res.objective):
        return res
    if objective == "wcct":
        bound = cheap_wcct_bound(inst)[0]
    elif objective == "makespan":
        bound = makespan_bound(inst)
    else:  # the LP relaxation's (an admission the MILP's tolerance let in is not counted)
        bound = res.info.get("lp_relaxation", math.nan) + 0.0  # (no negative zero)
    return Result(Status.NO_SOLUTION, math.nan, bound, res.runtime, res.method,
                  info={**res.info, "claimed": res.status.value,
                        "note": "numerical trouble: the schedule failed the feasibility check",
                        "feasibility": str(report)})


def bound(instance: Instance, *, method: str = "best", time_limit: float = 60.0,
          progress: Callable[[str, float], None] | None = None, **options: Any) -> Result:
    """A proven lower bound on the optimal ``sum w_k C_k`` (see :data:`coflowopt.bounds.BOUNDS`).

    ``progress(name, fraction)`` is called as ``best`` starts each bound.
    """
    if not isinstance(instance, Instance):
        raise CoflowoptError(f"expected an Instance, got {type(instance).__name__}")
    with for_instance(instance.num_flows):  # kernels interpreted where compiling costs more
        return compute_bound(instance, method, time_limit=check_time_limit(time_limit),
                             progress=progress, **options)
