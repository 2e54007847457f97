"""``ncf``: narrowest coflow first (dissertation §5.5.3).

Width is the number of flows (§5.5.3 and the MCS paper's definition). With
the default ``order="remaining"`` a coflow's width is its number of
unfinished flows; ``order="static"`` uses its full width. (coflowsim's NCF
comparator counts min(mappers, reducers) instead; for the Facebook trace's
full mapper x reducer shuffles both orders agree far more often than not,
but not always.) Rates, backfilling and re-allocation events are Varys'
(:mod:`.varys`).
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
