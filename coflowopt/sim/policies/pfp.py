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

On two-link fabrics with one capacity for every link (the big switch with
uniform ports) the allocation is a matching that the compiled kernel
:func:`coflowopt.sim.kernels.pfp.pfp_uniform_stretch` keeps up to date
across admissions and completions, with the same results;
``simulate(..., compiled=False)`` and every other fabric use the reference
computation below.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..engine import Allocation, SimView, Stretch
from ..kernels.pfp import pfp_state, pfp_uniform_stretch
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
    _state: tuple[Any, ...] | None = None
    """The compiled kernel's state (made by :meth:`start`, updated in place by every stretch)."""

    def start(self, view: SimView) -> None:
        self._state = None
        cap = view.capacity
        if view.compiled_two_link and view.num_flows and np.all(cap == cap[0]):
            self._state = pfp_state(view.link_a, view.link_b, view.num_links)

    def decide(self, view: SimView) -> Allocation:
        flows = view.active_flows()
        if flows.size == 0:
            return Allocation()
        if self._state is not None:
            return Allocation(stretch=Stretch(pfp_uniform_stretch, flows, self._state))
        rem = view.remaining(flows)
        order = flows[np.lexsort((flows, rem))]
        # the served flows are those with rates now: the engine's greedy gives the same
        # allocation for this order, so their crossing times follow from it
        rates = greedy_flows(view, order, view.capacity)
        return Allocation(order=order, wake=next_crossing(view.t, view.remaining(order), rates))
