"""``ncf``: narrowest coflow first (dissertation §5.5.3).

Width is the number of flows (§5.5.3 and the MCS paper's definition). With
the default ``order="remaining"`` a coflow's width is its number of
unfinished flows; ``order="static"`` uses its full width. ``order="coflowsim"``
follows coflowsim's NCF (its ``NCFComparator``): the width is the smaller of
the coflow's numbers of senders and receivers (its mappers and reducers, one
per rack), fixed at admission, and coflowsim's list orders the coflows
(:meth:`~.varys.OrderedMADD.coflowsim_order`). Rates, backfilling and
re-allocation events are Varys' (:mod:`.varys`).
"""

from __future__ import annotations

import numpy as np

from ..engine import SimView
from . import register
from .varys import OrderedMADD, _CoflowState


@register
class NCF(OrderedMADD):
    name = "ncf"
    summary = "narrowest (fewest flows) coflow first, MADD rates + backfilling"

    def key(self, view: SimView, st: _CoflowState, rem: np.ndarray, load: np.ndarray) -> float:
        return float(np.count_nonzero(rem > 0))

    def coflowsim_key(self, view: SimView, st: _CoflowState) -> float:
        fa = view.all_flows_of(st.k)
        return float(min(np.unique(view.flow_src[fa]).size, np.unique(view.flow_dst[fa]).size))
