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
order stops changing (at most :data:`TIE_ROUNDS` times; 60,000 tie-heavy
random instances took at most 5 re-sorts and none cycled). With
one capacity for every link, served flows all run at that capacity and the
rule reduces to flow index. The dissertation does not fix a tie rule (Fig. 5.1's
pfp value 3.5 needs ties broken the other way, see
``tests/sim/test_examples.py``).

On two-link fabrics with one capacity for every link (the big switch with
uniform ports) the allocation is a matching that the compiled kernel
:func:`coflowopt.sim.kernels.pfp.pfp_uniform_stretch` keeps up to date
across admissions and completions, with the same results;
``simulate(..., compiled=False)`` and every other fabric use the reference
computation below.

Option ``order="coflowsim"``: the per-flow prioritization of coflowsim, the Java
simulator behind the Varys and Aalo papers' numbers
(``FlowSimulator.proceedFlowsInAllRacksInSortedOrder``), which is not the rule
above: every egress port keeps a list of its flows (a new flow goes before the
first listed flow with more bytes left than its size, compared when it is
admitted, :class:`ReceiverLists`; it keeps its place until it completes), and
ports in index order each serve the first flow of their list whose sender no
earlier port serves, at full rate. That is the greedy allocation of a fixed
priority order (the lists of ports 0, 1, ... one after the other), recomputed
by the engine at every flow completion and compiled on uniform ports
(:func:`coflowopt.sim.kernels.greedy.greedy_uniform_stretch`); the order changes
only at admissions. On ports of unequal capacity the greedy allocation lets a
later flow use what the first leaves on a port, where coflowsim serves one flow
per port (it has one rack rate). A listed flow has "more bytes left" than a new
flow's size only by more than half of what the slowest port moves in one of
coflowsim's 8 ms steps (:data:`.varys.COFLOWSIM_STEP`) and :data:`LIST_TIE` of
the size (``step``: the step's length in the instance's time unit): coflowsim's sizes
are whole megabytes and its flows move a megabyte a step, so its remaining bytes are
whole megabytes and such ties are everywhere, while the fluid engine's event times,
in seconds, drift from the 8 ms grid (measured on the trace's first 300 coflows: 1e-4
of a step by 92 s, a step's 1% by 867 s) and its remaining bytes with them. A
relative margin alone (the previous rule) decided ties by that drift: coflow 153 of
the trace ended at 869 s instead of coflowsim's 1,049 s. The drift is rounding: 0.008
is not a binary fraction. coflowsim's own arithmetic here is exact (a MiB, 2^20 bytes,
per step; time in whole milliseconds), and so is the engine's in its units
(:func:`.varys.in_coflowsim_steps`, with ``step=1`` for the margin in steps; on the
trace the default margin, tiny there, gives the same since remaining bytes are then
whole MiB exactly): every size, release and completion is a whole number, and the
schedule is coflowsim's on every coflow of the trace (``models/simulator.md``). Small
coflows wait behind large flows of lower-numbered ports: its short-narrow coflows
average 21.8 s against 0.1 s with ``order="remaining"``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..._jit import njit
from ...kernels.ties import tie_keys
from ..engine import Allocation, SimView, Stretch
from ..kernels.pfp import pfp_state, pfp_uniform_stretch
from . import register
from ._base import Params, Policy, check_choice, check_positive
from ._common import greedy_flows
from .varys import COFLOWSIM_STEP

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


ORDERS = ("remaining", "coflowsim")
"""Values of ``pfp``'s ``order`` (see the module docstring)."""


@dataclass(frozen=True, slots=True)
class PFPParams(Params):
    order: str = "remaining"
    """``remaining`` (the dissertation's rule) or ``coflowsim`` (its PFP: receivers in port order,
    each serving the first flow of its list whose sender is free)."""

    step: float = COFLOWSIM_STEP
    """coflowsim's step in the instance's time unit (8 ms: 0.008 in seconds, 1 in steps); with
    ``order="coflowsim"`` a listed flow has more bytes left than a new flow's size only by more
    than half of what the slowest port moves in a step."""

    def __post_init__(self) -> None:
        check_choice(self.order, "order", ORDERS)
        check_positive(self.step, "step")


class ReceiverLists:
    """coflowsim's per-receiver flow lists (``FlowSimulator.addAscending``).

    Each egress port keeps its admitted flows in a list; a new flow goes before
    the first listed flow whose remaining bytes exceed the new flow's size (after
    the ones with as many or fewer), compared at its admission, and keeps its place
    until it completes. The priority order is the lists of ports ``0, 1, ...`` one
    after the other. "Exceed" means by more than ``half_step`` bytes (and
    :data:`LIST_TIE` of the size).
    """

    def __init__(self, num_ports: int, half_step: float = 0.0) -> None:
        self.lists: list[np.ndarray] = [_EMPTY] * num_ports
        self.half_step = half_step
        """Bytes by which a listed flow must exceed a new one's size (with :data:`LIST_TIE`)."""

    def admit(self, view: SimView, flows: np.ndarray) -> None:
        """Insert ``flows`` (in admission order) into their receivers' lists."""
        dst = view.flow_dst[flows]
        for j in np.unique(dst).tolist():
            cur = self.lists[j]
            cur = cur[view.is_active(cur)]
            new = flows[dst == j]
            size = view.size(new)
            margin = np.maximum(LIST_TIE * size, self.half_step)
            self.lists[j] = _add_ascending(cur, view.remaining(cur), new, size, margin)

    def order(self, view: SimView) -> np.ndarray:
        """The admitted, unfinished flows in priority order (completed ones leave the lists)."""
        parts = []
        for j, cur in enumerate(self.lists):
            if cur.size:
                cur = cur[view.is_active(cur)]
                self.lists[j] = cur
                parts.append(cur)
        return np.concatenate(parts) if parts else _EMPTY


_EMPTY = np.zeros(0, np.int64)


@njit
def _add_ascending(cur: np.ndarray, rem: np.ndarray, new: np.ndarray, size: np.ndarray,
                   margin: np.ndarray) -> np.ndarray:
    """``cur`` (with ``rem`` bytes left each) after inserting ``new`` one by one, each
    before the first flow with more than its ``size`` plus its ``margin`` left."""
    n = cur.size
    out = np.empty(n + new.size, np.int64)
    left = np.empty(n + new.size)
    out[:n] = cur
    left[:n] = rem
    for q in range(new.size):
        s = size[q]
        k = 0
        while k < n and not left[k] > s + margin[q]:
            k += 1
        for i in range(n, k, -1):
            out[i] = out[i - 1]
            left[i] = left[i - 1]
        out[k] = new[q]
        left[k] = s
        n += 1
    return out


LIST_TIE = 1e-6
"""Relative margin by which a listed flow's remaining bytes must exceed a new flow's size for
the new flow to go before it (coflowsim's sizes are whole megabytes, so a served flow's
remaining bytes often equal a new flow's size exactly, and the fluid model's carry
rounding)."""


@register
class PFP(Policy):
    name = "pfp"
    summary = "per-flow prioritization: shortest remaining flow first (pFabric/PDQ)"
    clairvoyant = True
    priority = True
    Params = PFPParams
    _state: tuple[Any, ...] | None = None
    """The compiled kernel's state (made by :meth:`start`, updated in place by every stretch)."""
    _lists: ReceiverLists | None = None
    """coflowsim's receiver lists (``order="coflowsim"``)."""

    def start(self, view: SimView) -> None:
        self._state = None
        self._lists = None
        if self.params.order == "coflowsim":
            # a fixed order between admissions: the engine keeps the greedy allocation
            # through flow completions itself (compiled on uniform ports)
            # coflowsim's remaining bytes are whole steps' worth of a port (1 MB at its rack
            # rate): "more" is at least a step more, so half a step tells it from rounding
            self._lists = ReceiverLists(
                view.num_ports, 0.5 * self.params.step * float(view.capacity.min(initial=np.inf)))
            self.on_flow_completion = False
            return
        cap = view.capacity
        if view.compiled_two_link and view.num_flows and np.all(cap == cap[0]):
            self._state = pfp_state(view.link_a, view.link_b, view.num_links)

    def decide(self, view: SimView) -> Allocation:
        if self._lists is not None:
            new = view.arrived_flows
            if new.size:
                self._lists.admit(view, new)
            return Allocation(order=self._lists.order(view))
        flows = view.active_flows()
        if flows.size == 0:
            return Allocation()
        if self._state is not None:
            return Allocation(stretch=Stretch(pfp_uniform_stretch, flows, self._state))
        # the served flows are those with rates now: the engine's greedy gives the same
        # allocation for this order, so their crossing times follow from it
        order, rates = pfp_order(view, flows, view.remaining(flows))
        return Allocation(order=order, wake=next_crossing(view.t, view.remaining(order), rates))
