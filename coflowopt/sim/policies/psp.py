"""``psp``: PS-P (FairCloud) among coflows over time (dissertation §7.4.1, §7.7.4).

At every decision each link is divided among the active coflows that use it
by per-link fair queueing at the coflow level (weights = coflow weights),
work-conserving in link shares: with elastic coflows (the default) every
coflow gets an equal share of each link it uses, whatever its demands
elsewhere (:func:`coflowopt.fairness.psp`). Not at the level of flows: a flow
runs at the smaller of its two links' offers, and what a coflow's share of a
link offers beyond what its flows there can take stays idle until the next
decision (a coflow held at 1/2 of a link while 1/6 of it idled;
such intervals in 328 of 400 random runs). See :mod:`coflowopt.sim.policies._fairness`
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
