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
makespan / exact      minimum makespan (closed form or LP), Maluca utilization
deadlines / exact     most coflows (or weight) meeting deadlines (MILP), LP bound
====================  ==============================================================
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from .bounds import check_options, compute_bound
from .errors import CoflowoptError
from .exact.certified import pairwise_order, sincronia_greedy
from .exact.deadlines import max_deadlines
from .exact.makespan import min_makespan
from .exact.milp import solve_event_milp
from .exact.permutation import best_permutation
from .exact.time_indexed import time_indexed
from .exact.wcct import solve_exact
from .instance import Instance
from .result import Result

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
    },
    "makespan": {"exact": min_makespan},
    "deadlines": {"exact": max_deadlines},
}
"""Solvers by objective, then by method."""

OBJECTIVES = tuple(SOLVERS)


def _check_time_limit(time_limit: Any) -> float:
    if isinstance(time_limit, bool) or not isinstance(time_limit, (int, float)) or not (
        math.isfinite(time_limit) and time_limit > 0
    ):
        raise CoflowoptError(f"time_limit must be a finite number > 0, got {time_limit!r}")
    return float(time_limit)


def solve(
    instance: Instance, *, method: str, objective: str = "wcct", time_limit: float = 60.0,
    **options: Any,
) -> Result:
    """Solve ``instance`` for ``objective`` with ``method`` (see :data:`SOLVERS`).

    Solvers stop at ``time_limit`` seconds and then return their best
    schedule and bound with status ``TIME_LIMIT``.
    """
    if not isinstance(instance, Instance):
        raise CoflowoptError(f"expected an Instance, got {type(instance).__name__}")
    tl = _check_time_limit(time_limit)
    try:
        methods = SOLVERS[objective]
    except (KeyError, TypeError):
        raise CoflowoptError(
            f"unknown objective '{objective}'; choose one of {', '.join(OBJECTIVES)}") from None
    try:
        fn = methods[method]
    except (KeyError, TypeError):
        raise CoflowoptError(
            f"method '{method}' is not available for objective '{objective}'; "
            f"choose one of {', '.join(methods)}") from None
    check_options(fn, options, f"method '{method}'")
    return fn(instance, time_limit=tl, **options)


def bound(instance: Instance, *, method: str = "best", time_limit: float = 60.0,
          progress: Callable[[str, float], None] | None = None, **options: Any) -> Result:
    """A proven lower bound on the optimal ``sum w_k C_k`` (see :data:`coflowopt.bounds.BOUNDS`).

    ``progress(name, fraction)`` is called as ``best`` starts each bound.
    """
    if not isinstance(instance, Instance):
        raise CoflowoptError(f"expected an Instance, got {type(instance).__name__}")
    return compute_bound(instance, method, time_limit=_check_time_limit(time_limit),
                         progress=progress, **options)
