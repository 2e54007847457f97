"""``static-order``: a fixed coflow priority order with greedy order-preserving rates.

For evaluating permutation schedules (e.g. an exact solver's order): the
parameter ``order`` lists every coflow (ids, or indices into the
instance) from highest to lowest priority. At every instant the admitted
flows are taken coflow by coflow in that order, within a coflow by flow
index, and each gets all the capacity its links still have
(:func:`coflowopt.alloc.greedy`); the allocation is recomputed at every
arrival and completion, so it is work-conserving and a coflow is never
slowed by one after it in the order. Release times, multi-wave flows and
dependencies are honoured by the engine. An empty ``order`` means the
instance's own coflow order.

    simulate(instance, "static-order", order=["c3", "c1", "c2"]).schedule
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..engine import Allocation, SimulationError, SimView
from . import register
from ._base import Params, Policy


@dataclass(frozen=True, slots=True)
class StaticOrderParams(Params):
    order: tuple[str | int, ...] = ()
    """Every coflow once, highest priority first: ids (str) or indices (int). A string is
    the coflow with that id if there is one, else (digits, as the command line passes
    them) an index: with numeric ids that are not positions, ``order=0,1,2`` names ids."""

    def __post_init__(self) -> None:
        order = self.order
        if isinstance(order, (str, int, np.integer)):
            order = (order,)  # one coflow ("c2" was split into "c" and "2")
        try:
            vals = tuple(order)
        except TypeError:
            raise SimulationError(
                f"parameter order must list coflow ids or indices, got {self.order!r}") from None
        for v in vals:
            if isinstance(v, bool) or not isinstance(v, (str, int, np.integer)):
                raise SimulationError(f"parameter order holds coflow ids or indices, got {v!r}")
        object.__setattr__(self, "order", vals)


@register
class StaticOrder(Policy):
    name = "static-order"
    summary = "a given coflow priority order + greedy order-preserving per-flow rates"
    clairvoyant = False
    priority = True
    Params = StaticOrderParams

    def start(self, view: SimView) -> None:
        self.on_flow_completion = False  # the engine re-runs the greedy allocation itself
        order = self.params.order
        K = view.num_coflows
        if not order:
            self.rank = np.arange(K)
            return
        ids = view.coflow_ids
        index = {c: i for i, c in enumerate(ids)}
        pos = []
        for v in order:
            if isinstance(v, str) and v in index:
                pos.append(index[v])
            elif isinstance(v, (int, np.integer)) and 0 <= int(v) < K:
                pos.append(int(v))
            elif isinstance(v, str) and v.lstrip("-").isdigit() and 0 <= int(v) < K:
                pos.append(int(v))  # indices typed on the command line
            else:
                raise SimulationError(f"order names an unknown coflow {v!r}")
        if len(set(pos)) != len(pos):
            raise SimulationError("order lists a coflow twice")
        if len(pos) != K:
            missing = sorted(set(range(K)) - set(pos))
            raise SimulationError(
                f"order must list every coflow; missing {len(missing)}, e.g. '{ids[missing[0]]}'"
            )
        self.rank = np.empty(K, np.int64)
        self.rank[np.array(pos)] = np.arange(K)

    def decide(self, view: SimView) -> Allocation:
        ks = sorted(view.active_coflows, key=lambda k: self.rank[k])
        if not ks:
            return Allocation()
        return Allocation(order=np.concatenate([view.flows_of(k) for k in ks]))
