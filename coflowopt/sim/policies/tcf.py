"""``tcf``: smallest total coflow first (dissertation §5.5.3: "smallesT-Coflow-First").

The key is the coflow's total size: remaining bytes with the default
``order="remaining"``, the full size with ``order="static"``. (coflowsim's
LCF does neither: it inserts a new coflow once, comparing its full size with
the others' remaining bytes at that moment, and never re-sorts.) Rates,
backfilling and re-allocation events are Varys' (:mod:`.varys`).
"""

from __future__ import annotations

import numpy as np

from ..engine import SimView
from . import register
from .varys import OrderedMADD, _CoflowState


@register
class TCF(OrderedMADD):
    name = "tcf"
    summary = "smallest total (remaining) size coflow first, MADD rates + backfilling"

    def key(self, view: SimView, st: _CoflowState, rem: np.ndarray, load: np.ndarray) -> float:
        return float(rem.sum())
