"""``psp``: PS-P (FairCloud) among coflows over time (dissertation §7.4.1, §7.7.4).

At every decision each link is divided among the active coflows that use it
by per-link fair queueing at the coflow level (weights = coflow weights),
work-conserving: with elastic coflows (the default) every coflow gets an
equal share of each link it uses, whatever its demands elsewhere
(:func:`coflowopt.fairness.psp`). See :mod:`coflowopt.sim.policies._fairness`
for how shares become flow rates and for the common parameters.
"""

from __future__ import annotations

from . import register
from ._fairness import CoflowFairness


@register
class Psp(CoflowFairness):
    name = "psp"
    summary = "PS-P: per-link equal shares among coflows (FairCloud)"
    mechanism = "psp"
