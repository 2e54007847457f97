"""Large neighbourhood search over priority orders for ``sum w_k C_k``: windows re-optimized
exactly.

``solve(..., method="lns")``. Offline (it reads every coflow's flows and release time); no
coflow dependencies. The schedules are the permutation schedules of
:mod:`coflowopt.exact.local_search` (an order, served by the greedy order-preserving
allocation with release times), evaluated by the same evaluator (from checkpoints on the
uniform big switch, from scratch elsewhere).

The search starts from the best of the local search's starting orders (Sincronia's, the
online schedulers' completion orders, the pairwise LP's, ...; see
:data:`~coflowopt.exact.local_search.START_ORDERS`). A *window* is a set of at most
``window`` coflows: an *anchor* and the coflows nearest to it in the order among those
that share a port with it and whose spans ``[r, C]`` overlap its own (``neighbourhood=
"overlap"``), or simply the nearest in the order (``"all"``). Destroy: the window's
coflows leave their positions; repair: every assignment of them to those positions is
evaluated, every other coflow keeping its position, and the best is kept. Anchors are
taken by their weighted delay over isolation (``w_k (C_k - r_k - Gamma_k)``), largest
first; a pass over every anchor that improves nothing ends the search at a local optimum
of the window neighbourhood (``info["local_optimum"]``), otherwise it ends at the time
limit. A window whose coflows were searched since the last improvement is not searched
again. Nothing is drawn at random: same instance and options, same result (when the clock
does not stop the search).

Deviations from an exact window re-optimization over every schedule (an event-order LP or
MILP over the window's coflows with everything outside it fixed):

- the repair is exact within the class of permutation schedules (every order of the
  window's coflows, by enumeration: ``window!`` orders, each evaluated from the
  checkpoint before the window's first position and cut short as soon as it cannot win),
  not over every schedule of the window's coflows: the rates stay the greedy
  order-preserving allocation's, so the schedule is a permutation schedule and the
  evaluator's free lists serve it;
- the coflows after the window are not fixed in time but in the order: their schedules
  follow from the window's (the objective is the whole instance's ``sum w_k C_k``).

Bound and status as the local search's (:func:`~coflowopt.exact.local_search.finish`):
the largest of the cheap bounds and the pairwise LP's value when it was solved;
``OPTIMAL`` only when the bound closes the gap.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from .._budget import now
from ..errors import CoflowoptError
from ..instance import Instance
from ..result import Result, Status
from ..schedule import Schedule
from ._order_eval import Incumbent, OrderEvaluator, OutOfTime
from .local_search import (
    NEIGHBOURHOODS,
    START_ORDERS,
    _neighbours,
    check_start_options,
    finish,
    start_orders,
)

__all__ = ["MAX_WINDOW", "lns"]

IntArray = npt.NDArray[np.int64]

MAX_WINDOW = 7
"""The largest window: 7! = 5,040 orders per window (on the Facebook trace an order of a
window costs about 0.25 CPU s)."""


def window_members(order: IntArray, k: int, near: npt.NDArray[np.bool_] | None,
                   window: int) -> IntArray:
    """The window of anchor ``k``: ``k`` and the ``window - 1`` coflows nearest to it in
    ``order`` among ``near[k]`` (every coflow when ``near`` is ``None``), nearer first and,
    at equal distance, earlier first; by position."""
    K = order.size
    pos = np.empty(K, np.int64)
    pos[order] = np.arange(K)
    cand = np.arange(K) if near is None else np.flatnonzero(near[k])
    cand = cand[cand != k]
    dist = np.abs(pos[cand] - pos[k])
    chosen = cand[np.lexsort((pos[cand], dist))[: window - 1]]
    members = np.append(chosen, k).astype(np.int64)
    return members[np.argsort(pos[members], kind="stable")]


def lns(
    inst: Instance,
    *,
    time_limit: float = 60.0,
    window: int = 5,
    neighbourhood: str = "overlap",
    starts: Sequence[str] = START_ORDERS,
    initial_orders: Sequence[Sequence[int]] = (),
    lp_share: float = 0.25,
    stride: int = 8,
    rel_gap: float = 1e-9,
    progress: Callable[[float], None] | None = None,
) -> Result:
    """The best permutation schedule that window re-optimizations reach from the best start.

    Parameters
    ----------
    inst
        The instance (no coflow dependencies).
    time_limit
        Seconds; the best order found by then is returned (``TIME_LIMIT``).
    window
        Coflows per window, 2 to :data:`MAX_WINDOW` (``window!`` orders each).
    neighbourhood
        Which coflows join an anchor's window: ``overlap`` (ports shared and spans
        overlapping) or ``all``.
    starts, initial_orders, lp_share, stride
        As for :func:`~coflowopt.exact.local_search.local_search`.
    progress
        Called with the search's value (``sum w_k C_k`` as the evaluator computes it)
        each time it improves.
    """
    check_start_options(inst, "the large neighbourhood search", starts, stride, lp_share)
    if neighbourhood not in NEIGHBOURHOODS:
        raise CoflowoptError(
            f"neighbourhood must be one of {', '.join(NEIGHBOURHOODS)}, got {neighbourhood!r}")
    if isinstance(window, bool) or not isinstance(window, int) or not 2 <= window <= MAX_WINDOW:
        raise CoflowoptError(f"window must be an integer from 2 to {MAX_WINDOW}, got {window!r}")
    start = now()
    K = inst.num_coflows
    if K == 0:
        return Result(Status.OPTIMAL, 0.0, 0.0, 0.0, "lns", schedule=Schedule.empty(),
                      completion=np.zeros(0))
    ev = OrderEvaluator(inst, stride, start + time_limit)
    st = start_orders(inst, ev, starts, initial_orders, lp_share * time_limit)
    best, timed_out = st.best, st.timed_out

    passes = windows = improved = orders = 0
    local = False
    searched: set[frozenset[int]] = set()  # windows searched since the last improvement

    def repair(inc: Incumbent, members: IntArray) -> None:
        """Makes ``best`` the best assignment of ``members`` to their positions in
        ``inc.order`` (``inc`` is ``best``), as far as the clock lets it."""
        nonlocal orders, best, improved
        first = inc
        places = np.sort(np.flatnonzero(np.isin(inc.order, members)))
        p, end = int(places[0]), int(places[-1]) + 1
        for perm in itertools.permutations(inc.order[places].tolist()):
            cand_order = inc.order.copy()
            cand_order[places] = perm
            if np.array_equal(cand_order, inc.order):
                continue
            orders += 1
            cand = ev.move(inc, cand_order, p, end)
            if cand is not None:  # the other orders of the window are now tried against it
                if inc is first:
                    improved += 1  # (counted at once: the clock may stop the window)
                inc = best = cand
                if progress is not None:
                    progress(cand.value)

    try:
        while not timed_out:
            passes += 1
            any_better = False
            near = None if neighbourhood == "all" else _neighbours(inst, best.comp)
            delay = ev.w * (best.comp - inst.release - inst.gamma)
            for k in np.lexsort((np.arange(K), -delay)):
                members = window_members(best.order, int(k), near, window)
                key = frozenset(members.tolist())
                if members.size < 2 or key in searched:
                    continue
                searched.add(key)
                windows += 1
                before = best
                repair(best, members)
                if best is not before:
                    any_better = True
                    searched = {key}
                    if near is not None:  # spans changed: neighbours afresh
                        near = _neighbours(inst, best.comp)
            if not any_better:
                local = True
                break
    except OutOfTime:
        timed_out = True
    return finish(inst, ev, st, best.order, timed_out, rel_gap, "lns", start, {
        "window": window, "neighbourhood": neighbourhood, "passes": passes,
        "windows_searched": windows, "windows_improved": improved, "orders_tried": orders,
        "local_optimum": local, "search_value": best.value})
