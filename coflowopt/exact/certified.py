"""Heuristic orders with a certificate: value / lower bound is a proven ratio.

``sincronia``: Sincronia's BSSI order (its release-aware variant when
releases differ) served by the order-preserving greedy allocation; the
certificate is the largest of the cheap bounds (isolation, per-port, BSSI
duals; on at most 16 coflows also the bound over completion orders).
``pairwise-order``: coflows ordered by their completion times in the
pairwise LP of Shafiee and Ghaderi, same allocation; the certificate adds
the LP's value. The ratio ``objective / bound`` is at least the true
approximation ratio of the schedule on this instance.

Time limit: the order's schedule is always computed (one greedy pass, as the
first order of ``method="exact"``), so every run has a schedule;
``pairwise-order``'s LP takes at most half of the limit, and an LP not solved
in time gives way to Sincronia's order (``info["fallback"]`` says so). An LP stopped by
the clock, solved or not, makes the status ``TIME_LIMIT``: the schedule and the bound
are what the time allowed.
"""

from __future__ import annotations

import math

import numpy as np

from .._budget import now
from ..bounds.pairwise import pairwise_lp
from ..bounds.simple import isolation_bound, port_bound
from ..bounds.sincronia import sincronia_bound, sincronia_order
from ..bounds.subsets import fits, subsets_bound, work
from ..instance import Instance
from ..result import Result, Status
from .permutation import permutation_schedule

__all__ = ["CHEAP_SUBSETS", "CHEAP_WORK", "cheap_bounds", "pairwise_order", "sincronia_greedy"]


def _certified(inst: Instance, order: np.ndarray, bounds: dict[str, float], method: str,
               start: float, extra: dict | None = None, *, cut: bool = False) -> Result:
    """The permutation schedule of ``order`` with the largest finite bound; ``cut``: a step
    was stopped by the clock (status ``TIME_LIMIT``, as for every solver)."""
    # a bound that overflowed (inf) or failed (nan) bounds nothing (an infinite
    # port bound made every order "certified" optimal)
    name = max(bounds, key=lambda k: bounds[k] if math.isfinite(bounds[k]) else -math.inf)
    sched, comp = permutation_schedule(inst, order)  # always: the heuristic's one schedule
    value = float(np.dot(inst.weight, comp))
    bound = bounds[name] if math.isfinite(bounds[name]) else math.nan  # (not clamped: proven)
    ratio = value / bound if bound > 0 else math.inf
    info = {"order": [inst.ids[k] for k in order], "certified_ratio": ratio,
            "bound_method": name, "bounds": bounds, **(extra or {})}
    return Result(Status.TIME_LIMIT if cut else Status.FEASIBLE, value, bound, now() - start,
                  method,
                  schedule=sched, completion=comp, info=info)


CHEAP_SUBSETS = 16
"""Instances of at most this many coflows also get the bound over completion orders among
the cheap bounds (0.12 s on 16 coflows over 20 links; it doubles with each coflow), when
its sums number at most :data:`CHEAP_WORK`."""
CHEAP_WORK = 1 << 25
"""The most (set, link, availability time) sums of the bound over completion orders among
the cheap bounds, which have no time limit (about a second; 16 coflows over 200 links with
640 distinct flow availability times took 10-20 s)."""


def cheap_bounds(inst: Instance) -> dict[str, float]:
    """The bounds computed without a time limit, by name: isolation, per-port, Sincronia's
    duals (0.15 s on 200 coflows), and on at most :data:`CHEAP_SUBSETS` coflows the bound
    over completion orders (``subsets``)."""
    out = {"isolation": isolation_bound(inst).bound, "port": port_bound(inst).bound,
           "sincronia": sincronia_bound(inst).bound}
    if fits(inst, CHEAP_SUBSETS) and work(inst) <= CHEAP_WORK:
        out["subsets"] = subsets_bound(inst).bound
    return out


def sincronia_greedy(
    inst: Instance, *, time_limit: float = 60.0, release_factor: float = 1.0
) -> Result:
    """Sincronia's order with greedy order-preserving rates, certified by the cheap bounds."""
    start = now()
    order = sincronia_order(inst, release_factor=release_factor)
    return _certified(inst, order, cheap_bounds(inst), "sincronia", start)


def pairwise_order(inst: Instance, *, time_limit: float = 60.0) -> Result:
    """Order by the pairwise LP's completion times, greedy rates, certified by the LP."""
    start = now()
    bounds = cheap_bounds(inst)
    if inst.num_coflows == 0:  # nothing to order (the LP has no rows)
        return _certified(inst, np.zeros(0, np.int64), bounds, "pairwise-order", start)
    # the LP with at most half of the time left: the order's schedule needs the rest (the
    # whole limit left a fallback order no time to be evaluated, and no schedule)
    left = time_limit - (now() - start)
    lp_bound, C, info = pairwise_lp(inst, time_limit=max(left / 2, 0.0))
    if C is None:
        order = sincronia_order(inst)
        extra = {"fallback": "pairwise LP not solved in time; Sincronia's order used", "lp": info}
    else:
        bounds["pairwise"] = lp_bound
        order = np.lexsort((np.arange(inst.num_coflows), C))
        extra = {"lp": info}
    return _certified(inst, order, bounds, "pairwise-order", start, extra,
                      cut=C is None or bool(info.get("timed_out")))
