"""``tcf``: smallest total coflow first (dissertation §5.5.3: "smallesT-Coflow-First").

The key is the coflow's total size: remaining bytes with the default
``order="remaining"``, the full size with ``order="static"``. coflowsim's LCF
(``order="coflowsim"``) does neither: it inserts a new coflow once, before the
first listed coflow with more bytes left at that moment than its full size,
and never re-sorts (:meth:`~.varys.OrderedMADD.coflowsim_order`; its byte count
is of the admitted flows, and coflowsim counts a reducer's bytes before
padding them to a multiple of its mappers, which ``format="coflowsim"`` does
not keep: ``models/simulator.md``). Rates, backfilling and re-allocation events
are Varys' (:mod:`.varys`).
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
    coflowsim_remaining = True

    def key(self, view: SimView, st: _CoflowState, rem: np.ndarray, load: np.ndarray) -> float:
        return float(rem.sum())
