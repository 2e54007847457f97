"""``pfp``: per-flow prioritization, shortest remaining first (pFabric, PDQ).

Dissertation §3.2.2 and §5.7.2: flows are served in increasing order of
their remaining size regardless of coflows. At every instant the flows are
taken in that order and each gets the largest rate its links still allow
(:func:`coflowopt.alloc.greedy`), so a port serves one flow at a time at
full rate on the big switch. Recomputed at every flow arrival and
completion, and when two served flows' remaining sizes cross (computed in
closed form from their rates); a served flow overtaking a waiting one does
not change the greedy allocation and is no event. Clairvoyant,
work-conserving.

Ties. Remaining sizes are compared at 30 significant bits
(:func:`coflowopt.kernels.ties.tie_key`): exact ties, and a crossing
reached at its wake time, where rounding leaves the two sizes a few ulps
apart either way, are ties.
Within a tie the flow with the larger greedy rate goes first, then the lower
flow index: an instant later the faster flow has less left, so this is the
order the fluid schedule settles into (ordering a slower flow first would be
contradicted at once). Computed as a fixed point from the (remaining, index)
order: re-sort each tie by (rate under the current order, index) until the
order stops changing (at most :data:`TIE_ROUNDS` times; a review saw at
most 5 re-sorts and no cycle on 60,000 tie-heavy random instances). With
one capacity for every link, served flows all run at that capacity and the
rule reduces to flow index. The seeds do not fix a tie rule (Fig. 5.1's
pfp value 3.5 needs ties broken the other way, see
``tests/sim/test_examples.py``).

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

from ...kernels.ties import tie_keys
from ..engine import Allocation, SimView, Stretch
from ..kernels.pfp import pfp_state, pfp_uniform_stretch
from . import register
from ._base import NoParams, Policy
from ._common import greedy_flows

TIE_ROUNDS = 50
"""At most this many re-sorts of the ties by rate (see the module docstring)."""


def tie_groups(rem: np.ndarray) -> np.ndarray:
    """Group number of each entry, increasing with ``rem``: equal :func:`tie_key` values are one group."""
    return np.unique(tie_keys(rem), return_inverse=True)[1].reshape(-1)


def next_crossing(t: float, rem: np.ndarray, rate: np.ndarray) -> float:
    """First time two served flows' remaining sizes cross (``inf`` if never).

    Tied flows (:func:`tie_groups`) are taken faster first, so they part and
    never cross; otherwise the first crossing is between neighbours in the
    order of remaining size.
    """
    pos = rate > 0
    if np.count_nonzero(pos) < 2:
        return math.inf
    r, x = rem[pos], rate[pos]
    g = tie_groups(r)
    o = np.lexsort((-x, g))
    r, x, g = r[o], x[o], g[o]
    closing = x[1:] - x[:-1]
    ok = (closing > 0) & (g[1:] != g[:-1])
    if not ok.any():
        return math.inf
    return t + float((np.maximum(r[1:] - r[:-1], 0.0)[ok] / closing[ok]).min())


def pfp_order(view: SimView, flows: np.ndarray, rem: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Flows by remaining size, ties faster first then by index; with their greedy rates."""
    group = tie_groups(rem)
    idx = np.argsort(flows, kind="stable")
    flows, group = flows[idx], group[idx]
    order = np.lexsort((flows, group))
    rates = greedy_flows(view, flows[order], view.capacity)
    for _ in range(TIE_ROUNDS):
        rate = np.empty(flows.size)
        rate[order] = rates
        new = np.lexsort((flows, -rate, group))
        if np.array_equal(new, order):
            break
        order = new
        rates = greedy_flows(view, flows[order], view.capacity)
    return flows[order], rates


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
        # the served flows are those with rates now: the engine's greedy gives the same
        # allocation for this order, so their crossing times follow from it
        order, rates = pfp_order(view, flows, view.remaining(flows))
        return Allocation(order=order, wake=next_crossing(view.t, view.remaining(order), rates))
