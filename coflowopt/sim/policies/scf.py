"""``scf``: shortest coflow first (dissertation §5.5.3).

"Shortest" is the coflow's length: its largest flow. With the default
``order="remaining"`` that is the largest remaining flow (the online,
shortest-remaining-time reading); ``order="static"`` uses the original
length; ``order="coflowsim"`` the same length (coflowsim's SCF comparator: the
largest reducer's bytes over the mappers, the longest flow of a shuffle) in
coflowsim's list (:meth:`~.varys.OrderedMADD.coflowsim_order`). Rates,
backfilling and re-allocation events are Varys' (:mod:`.varys`).
"""

from __future__ import annotations

import numpy as np

from ..engine import SimView
from . import register
from .varys import OrderedMADD, _CoflowState


@register
class SCF(OrderedMADD):
    name = "scf"
    summary = "shortest (largest remaining flow) coflow first, MADD rates + backfilling"

    def key(self, view: SimView, st: _CoflowState, rem: np.ndarray, load: np.ndarray) -> float:
        return float(rem.max(initial=0.0))
