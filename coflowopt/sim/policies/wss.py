"""``wss``: Orchestra's weighted shuffle scheduling.

Dissertation §5.3 (Fig. 5.1d) and Orchestra (Chowdhury et al., SIGCOMM
2011): each flow gets a share of its links proportional to the data it has
to send, so a shuffle's flows finish together when one port is the
bottleneck. Implemented as per-flow weighted max-min fairness with weight =
the flow's size, across all admitted flows (Fig. 5.1d applies it to two
coflows at once), recomputed at every flow arrival and completion. The
weights are the sizes from the start (Orchestra assigns them when the
transfer begins), not the remaining amounts.

On the big switch the compiled path runs the same rule in
:mod:`coflowopt.sim.kernels.pairs` (every link whose water level changes at
all re-rates its flows: ``change_tol = 0``); ``simulate(...,
compiled=False)`` recomputes every rate at every event in Python, the
reference.
"""

from __future__ import annotations

import numpy as np

from ..engine import Allocation, SimView
from . import register
from ._base import NoParams, Policy
from ._common import RouteClasses, max_min_flows
from .fair import pair_kernel_state, pair_kernel_stretch, split_links


@register
class WSS(Policy):
    name = "wss"
    summary = "Orchestra weighted shuffle scheduling: rates proportional to flow sizes"
    clairvoyant = True
    Params = NoParams

    def start(self, view: SimView) -> None:
        self.classes = RouteClasses.build(view)
        self.kernel: tuple[object, ...] | None = None
        split = split_links(view)
        if split is not None and view.compiled:
            self.kernel = pair_kernel_state(view, split, view.size(np.arange(view.num_flows)), 0.0)

    def decide(self, view: SimView) -> Allocation:
        if self.kernel is not None:
            return pair_kernel_stretch(view, self.kernel)
        flows = view.active_flows()
        if flows.size == 0:
            return Allocation()
        w = view.size(flows)
        return Allocation(flows, max_min_flows(view, self.classes, flows, view.capacity, w))
