"""Shared machinery of the fairness policies ``hug``, ``drf`` and ``psp`` (dissertation §7.7.4).

At each decision the active coflows' correlation vectors are built from what
they still have to send (per-link remaining bytes over capacity, scaled to a
maximum of 1: MADD's view, §7.7.3 "we calculated the correlation vectors ...
using MADD"), the coflow-level mechanism of :mod:`coflowopt.fairness` turns
them into a share ``a^i_k`` of every link, and each coflow's share is split
among its flows (``split``):

``proportional`` (default, O(flows)): on every link the coflow's share is
                 divided among its flows there in proportion to their
                 remaining bytes, and a flow runs at the smaller of its two
                 links' offers - what two machines enforcing the coflow's
                 shares locally would give. For DRF this is exactly MADD's
                 rates scaled by the coflow's progress.
``maxmin``       max-min fairness weighted by remaining bytes, with the
                 coflow's share of each link as that link's capacity (one
                 :func:`coflowopt.alloc.max_min` call over (coflow, link)
                 "virtual links"): the same first water level, and capacity a
                 flow cannot use goes to the coflow's other flows. Exact but
                 slow on large traces.

Rates stay within every link's capacity because the shares do. Share that a
coflow's flows cannot use (their other link offers less) is not passed on:
at flow level none of the three policies is work-conserving.

Parameters (all three policies):

``reschedule``  ``"coflow"`` (default): re-allocate on coflow arrivals and
                completions, as Varys does (§5.6.2), and when the fabric
                would go idle; ``"flow"``: also at every flow completion.
                With ``"coflow"`` a share stays as decided until the next
                coflow event, also when its coflow has nothing left to send
                for now (its anchor waits for a finishes-before
                predecessor, or its next wave has not started): with weights
                far apart (1e6 against 0.3) the others then crawl on what the
                weights left them (in one instance: 3e8 s, against 580 s
                with ``"flow"``). Use ``"flow"`` for such workloads.
``vectors``     ``"remaining"`` (default, clairvoyant): loads of the remaining
                bytes; ``"flows"``: one unit per active flow (non-clairvoyant,
                the "current rate estimations" of §7.6.1).
``elastic``     coflows are elastic (default True): they may use more than
                ``P_k d_k`` on non-bottleneck links.
``split``       ``"proportional"`` (default) or ``"maxmin"``, see above.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from ... import alloc
from ...fairness import FairnessProblem, allocate
from ..engine import Allocation, SimView
from ._base import Params, Policy, check_bool, check_choice

__all__ = ["NAMED", "CoflowFairness", "FairnessParams", "named_vectors"]

RESCHEDULES = ("coflow", "flow")
VECTORS = ("remaining", "flows")
SPLITS = ("proportional", "maxmin")


@dataclass(frozen=True, slots=True)
class FairnessParams(Params):
    reschedule: str = "coflow"
    """``coflow``: decide on coflow arrivals and completions; ``flow``: also on flow completions."""
    vectors: str = "remaining"
    """``remaining``: correlation vectors from remaining bytes; ``flows``: from active flow counts."""
    elastic: bool = True
    """Coflows may use spare capacity on their non-bottleneck links."""
    split: str = "proportional"
    """How a coflow's link shares become flow rates: ``proportional`` or ``maxmin``."""

    def __post_init__(self) -> None:
        check_choice(self.reschedule, "reschedule", RESCHEDULES)
        check_choice(self.vectors, "vectors", VECTORS)
        check_choice(self.split, "split", SPLITS)
        check_bool(self.elastic, "elastic")


NAMED = 1e-200
"""Least demand on a link, relative to the coflow's largest, of a coflow with flows there."""


def named_vectors(vec: np.ndarray) -> np.ndarray:
    """Correlation vectors (coflows x links) in which every link a coflow uses keeps a demand.

    A flow about to finish (its remaining bytes rounded to 0 at a decision, its completion
    one float step away) still names its links, with a demand of at least :data:`NAMED`
    times its coflow's largest: an absolute floor vanished when normalised (a coflow
    with 1,972 such flows on a link and 323 s of transfer left on another stopped the
    Facebook trace under ``psp``). Demands above the floor are unchanged.
    """
    top = vec.max(axis=1, keepdims=True)
    return np.where(vec > 0, np.maximum(vec, top * NAMED), 0.0)


class CoflowFairness(Policy):
    """Base of the fairness policies: subclasses set ``mechanism`` (and may add options)."""

    mechanism: ClassVar[str] = ""
    clairvoyant = True  # with vectors="flows" no size is read, but the default needs them
    Params = FairnessParams

    def __init__(self, params: Any) -> None:
        super().__init__(params)
        self.on_flow_completion = params.reschedule == "flow"

    def mechanism_options(self) -> dict[str, Any]:
        """Keyword options for :func:`coflowopt.fairness.allocate`."""
        return {}

    def decide(self, view: SimView) -> Allocation:
        flows = view.active_flows()
        if flows.size == 0:
            return Allocation()
        p: Any = self.params
        demand = view.remaining(flows) if p.vectors == "remaining" else np.ones(flows.size)
        demand = np.maximum(demand, 1e-300)  # a flow about to finish still names its links
        ks, row = np.unique(view.flow_coflow[flows], return_inverse=True)
        L = view.num_links
        usage = view.usage(flows).tocoo()
        links = np.asarray(usage.col, np.int64)
        owner = row[usage.row]
        load = np.bincount(owner * L + links, weights=demand[usage.row] * usage.data,
                           minlength=ks.size * L).reshape(ks.size, L)
        cap = view.capacity
        problem = FairnessProblem(
            named_vectors(load / cap), weights=view.coflow_weight[ks], elastic=p.elastic,
            capacity=cap, exact=False,
        )
        share = np.maximum(allocate(problem, self.mechanism, **self.mechanism_options()).allocation, 0.0)
        share = (share * cap[None, :]).reshape(-1)
        cols = owner * L + links  # the (coflow, link) pair of each route entry
        if p.split == "maxmin":
            # flows of coflow j use the virtual links (j, their links), whose capacity is j's share
            virtual = sp.csr_array((usage.data, (usage.row, cols)), shape=(flows.size, ks.size * L))
            rates = alloc.max_min(virtual, share, weights=demand)
        else:
            # each link's share per remaining byte of the coflow there; a flow takes the smaller
            # offer. Its demand enters the link's load times its share of the link (a sprayed
            # flow puts half its rate on each of two links), so its rate is its demand times
            # the offer, not divided by that share.
            per_byte = share / np.maximum(load.reshape(-1), 1e-300)
            rates = np.full(flows.size, np.inf)
            np.minimum.at(rates, usage.row, per_byte[cols])
            rates = np.where(np.isfinite(rates), rates * demand, 0.0)
        return Allocation(flows, rates)
