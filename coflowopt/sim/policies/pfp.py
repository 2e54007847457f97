"""``pfp``: per-flow prioritization, shortest remaining first (pFabric, PDQ).

Dissertation §3.2.2 and §5.7.2: flows are served in increasing order of
their remaining size regardless of coflows. At every instant the flows are
taken in that order (ties: lower flow index first) and each gets the
largest rate its links still allow (:func:`coflowopt.alloc.greedy`), so a
port serves one flow at a time at full rate on the big switch. Recomputed
at every flow arrival and completion, and when two served flows' remaining
sizes cross (computed in closed form from their rates); a served flow
overtaking a waiting one does not change the greedy allocation and is no
event. Clairvoyant, work-conserving.
"""

from __future__ import annotations

import math

import numpy as np

from ..engine import Allocation, SimView
from . import register
from ._base import NoParams, Policy
from ._common import greedy_flows


def next_crossing(t: float, rem: np.ndarray, rate: np.ndarray) -> float:
    """First time two served flows' remaining sizes cross (``inf`` if never)."""
    pos = rate > 0
    if np.count_nonzero(pos) < 2:
        return math.inf
    r, x = rem[pos], rate[pos]
    o = np.lexsort((-x, r))
    r, x = r[o], x[o]
    gap = r[1:] - r[:-1]
    closing = x[1:] - x[:-1]
    ok = (closing > 0) & (gap > 1e-12 * np.maximum(r[1:], 1e-300))
    if not ok.any():
        return math.inf
    return t + float((gap[ok] / closing[ok]).min())


@register
class PFP(Policy):
    name = "pfp"
    summary = "per-flow prioritization: shortest remaining flow first (pFabric/PDQ)"
    clairvoyant = True
    priority = True
    Params = NoParams

    def decide(self, view: SimView) -> Allocation:
        flows = view.active_flows()
        if flows.size == 0:
            return Allocation()
        rem = view.remaining(flows)
        order = flows[np.lexsort((flows, rem))]
        # the served flows are those with rates now: the engine's greedy gives the same
        # allocation for this order, so their crossing times follow from it
        rates = greedy_flows(view, order, view.capacity)
        return Allocation(order=order, wake=next_crossing(view.t, view.remaining(order), rates))
