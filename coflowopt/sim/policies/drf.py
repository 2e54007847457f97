"""``drf``: Dominant Resource Fairness among coflows over time (dissertation §7.7.4).

At every decision the active coflows get DRF's allocation (Eq. 7.2) for the
correlation vectors of what they still have to send: every coflow
progresses at the optimal isolation guarantee ``P*`` (weighted by its
weight), i.e. MADD's rates scaled by ``P*``, and spare capacity stays idle.
See :mod:`coflowopt.sim.policies._fairness` for the common parameters.
"""

from __future__ import annotations

from . import register
from ._fairness import CoflowFairness


@register
class Drf(CoflowFairness):
    name = "drf"
    summary = "DRF: equal progress at the optimal isolation guarantee, not work-conserving"
    mechanism = "drf"
