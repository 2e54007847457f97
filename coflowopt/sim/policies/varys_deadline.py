"""``varys-deadline``: Varys' admission control for deadlines (Pseudocode 2).

Dissertation §5.5.4 and Pseudocode 2 (MEETDEADLINE). At every decision the
admitted coflows, in arrival order, get their minimum rates: MADD at the
deadline, ``r_ij = remaining_ij / (D - t)`` (ALLOCBANDWIDTH with
``cct = false``). A coflow with a deadline that arrives is admitted if and
only if its effective bottleneck Γ on what those minimum rates leave
(Eq. 4.1 on ``Rem(.)``) is at most the time left to its deadline (within a
relative 1e-12: a deadline set to release + Γ in floating point can come out an
ulp short of it); admitted coflows are never preempted, so they all finish by
their deadlines (to that rounding). Spare
capacity then goes to the admitted coflows by backfilling (``backfill``, as
in :mod:`.varys`: proportional by default, as §5.5.3's text; ``greedy`` takes
them in earliest-deadline order, ties by arrival, as coflowsim's deadline mode
refills: "Sort coflows by EDF and then refill").

Coflows that are not admitted, and coflows without a deadline, are not
dropped (a schedule must deliver every byte): they are served best effort
from whatever capacity is left after that, flow by flow in arrival order
(the greedy rule of coflowsim's work-conservation pass). A deviation from
the source: the dissertation has rejected coflows resubmitted later
(§5.4.2: "rejected coflows must be resubmitted later"; Pseudocode 2 gives
spare bandwidth only to the admitted set), and coflowsim skips them and
never serves them. Varys counts a rejected coflow as
missing its deadline: that count is ``info["deadline_admitted"]`` of
``info["deadline_coflows"]``. The summary's ``deadlines_met`` is the
policy-free metric (every coflow that finishes by its deadline), so a
rejected coflow that best effort happens to finish in time counts there.
The per-coflow table gets a column ``admitted_deadline`` (False also for a coflow without
a deadline: the table's ``deadline`` column is empty for those).

Multi-wave coflows (flows that start later): Varys passes a coflow to the
scheduler only once it is READY, after all its ``numFlows`` flows have called
``get()`` (§5.6.2, Pseudocode 3, lines 13-19). So a coflow with a deadline gets no
service at all until every one of its flows has been admitted; then it is judged
on all its data (the barrier of §6.8.3's second approach). Until this version its
early flows were served best effort meanwhile and the admission test saw only what
they left, so a coflow Varys would reject could be admitted. A finishes-before
anchor (the flow the engine holds until the predecessors complete,
:meth:`SimView.ready`) is not a flow yet to come: such a coflow is served best
effort while its predecessors run (holding it back would turn finishes-before
into starts-after), and judged once the anchor is admitted, on all its data
(judged without the anchor, its minimum rates could not cover the anchor's data
later: a hypothesis search found them exceeding a port). Coflows without a
deadline need no admission and are served best effort as their flows come.

Re-allocation happens on coflow arrivals and departures (§5.6.2); with
``reschedule="flow"`` also on every flow completion.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..engine import Allocation, SimView
from . import register
from ._base import Params, Policy, check_choice
from ._common import madd_flows, saturated
from .varys import BACKFILLS, backfill_greedy, backfill_proportional


@dataclass(frozen=True, slots=True)
class DeadlineParams(Params):
    backfill: str = "proportional"
    """Spare capacity for admitted coflows: "proportional", "greedy" (earliest deadline first) or "none"."""
    reschedule: str = "coflow"
    """Re-allocate on coflow events ("coflow") or also on every flow completion ("flow")."""

    def __post_init__(self) -> None:
        check_choice(self.backfill, "backfill", BACKFILLS)
        check_choice(self.reschedule, "reschedule", ("coflow", "flow"))


@register
class VarysDeadline(Policy):
    name = "varys-deadline"
    summary = "Varys deadline admission control: MADD at the deadline + backfilling"
    clairvoyant = True
    Params = DeadlineParams

    def start(self, view: SimView) -> None:
        p: DeadlineParams = self.params
        self.on_flow_completion = p.reschedule == "flow"
        self.deadline = view.deadline()
        self.admitted: list[int] = []  # admitted coflows in arrival order
        self.decided = np.zeros(view.num_coflows, bool)
        self.accepted = np.zeros(view.num_coflows, bool)

    def _minimum_rates(
        self, view: SimView, ks: list[int], residual: np.ndarray
    ) -> tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray]]:
        flows, rates, rems = [], [], []
        t = view.t
        for k in ks:
            f = view.flows_of(k)
            rem = view.remaining(f)
            r = rem / (self.deadline[k] - t)
            flows.append(f)
            rates.append(r)
            rems.append(rem)
            residual -= view.link_sum(f, r)
        np.maximum(residual, 0.0, out=residual)
        return flows, rates, rems

    def decide(self, view: SimView) -> Allocation:
        p: DeadlineParams = self.params
        active = set(view.active_coflows)
        t = view.t
        # an admitted coflow still running at its deadline (rounding) continues best effort
        self.admitted = [
            k for k in self.admitted
            if k in active and self.deadline[k] > t + 1e-12 * max(1.0, abs(t))
        ]
        residual = view.capacity.astype(float).copy()
        flows, rates, rems = self._minimum_rates(view, self.admitted, residual)
        unready: set[int] = set()  # not READY (Pseudocode 3): a deadline coflow with flows yet to come
        for k in view.active_coflows:
            if self.decided[k]:
                continue
            d = self.deadline[k]
            if not view.fully_admitted(k):
                if math.isfinite(d) and not view.ready(k):
                    unready.add(k)  # flows yet to come: no service before READY
                continue  # judged on all its data, a finishes-before anchor's included
            self.decided[k] = True
            if not math.isfinite(d) or d <= t:
                continue
            f = view.flows_of(k)
            rem = view.remaining(f)
            _, gamma = madd_flows(view, f, rem, residual)
            if math.isfinite(gamma) and gamma <= (d - t) * (1 + 1e-12):
                r = rem / (d - t)
                residual -= view.link_sum(f, r)
                np.maximum(residual, 0.0, out=residual)
                self.admitted.append(k)
                self.accepted[k] = True
                flows.append(f)
                rates.append(r)
                rems.append(rem)
        residual[saturated(residual, view.capacity)] = 0.0
        if p.backfill == "proportional":
            extra = backfill_proportional(view, list(zip(flows, rems, strict=True)), residual)
        elif p.backfill == "greedy":  # coflowsim refills in earliest-deadline order
            edf = sorted(range(len(flows)), key=lambda i: self.deadline[self.admitted[i]])
            got = backfill_greedy(view, [flows[i] for i in edf], residual)
            extra = [np.zeros(0)] * len(flows)
            for i, x in zip(edf, got, strict=True):
                extra[i] = x
        else:
            extra = [np.zeros(f.size) for f in flows]
        rates = [r + e for r, e in zip(rates, extra, strict=True)]
        # best effort for the rest, in arrival order
        taken = set(self.admitted) | unready
        rest = [view.flows_of(k) for k in view.active_coflows if k not in taken]
        if rest:
            rates += backfill_greedy(view, rest, residual)
            flows += rest
        # a coflow not READY any more (a finishes-before anchor now waits for its batch)
        # may have been served best effort: it stops (unlisted flows keep their rates)
        for k in sorted(unready):
            f = view.flows_of(k)
            flows.append(f)
            rates.append(np.zeros(f.size))
        if not flows:
            return Allocation()
        return Allocation(np.concatenate(flows), np.concatenate(rates))

    def finish(self, view: SimView) -> dict[str, Any]:
        has = np.isfinite(self.deadline)
        return {
            "deadline_coflows": int(has.sum()),
            "deadline_admitted": int(self.accepted.sum()),
            "coflow_columns": {"admitted_deadline": self.accepted.copy()},
        }
