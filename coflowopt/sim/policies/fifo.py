"""``fifo``: coflows in arrival order (Orchestra's inter-coflow FIFO).

Dissertation §5.7.4 ("processing coflows in their arrival order (i.e.,
FIFO) avoids starvation [Orchestra]") evaluates FIFO inside the Varys
simulator: the coflow order is arrival order and everything else is Varys'
(MADD rates in that order, backfilling, re-allocation on coflow arrivals and
departures; see :mod:`.varys` for the options). Ties (same admission
time) go to the lower coflow index.
"""

from __future__ import annotations

import numpy as np

from ..engine import SimView
from . import register
from .varys import OrderedMADD, _CoflowState


@register
class FIFO(OrderedMADD):
    name = "fifo"
    summary = "coflows in arrival order, MADD rates + backfilling (Orchestra FIFO)"

    def key(self, view: SimView, st: _CoflowState, rem: np.ndarray, load: np.ndarray) -> float:
        return float(view.coflow_admitted[st.k])
