"""``creek``: Creek's Conditional Shortest Job First (C-SJF) for many-to-many coflows.

Creek (§IV-B) schedules at the receivers, without a central coordinator:

- **Sub-coflows.** The flows of a coflow into one receiver form a sub-coflow; the
  receivers of a coflow share a small storage (§IV-B, "Coflow management") where each
  adds the bytes it has received, so every receiver knows the bytes received by the
  *whole* coflow.
- **Priorities.** ``num_queues`` = K <= 8 priority queues (commodity switches have at
  most 8, §IV-B; the testbed uses 8); every coflow starts in the highest and is demoted
  as its bytes cross the thresholds ``tau_1 < tau_2 < ...`` (``tau_k = first_threshold *
  multiplier^(k-1)``). The paper finds its thresholds by exhaustive search and gives
  none; the defaults are Aalo's (10 MB, times 10), stated here as ours.
- **The condition.** C-SJF "takes into account the coflow condition ... (e.g. the number
  of completed flows)", and recognises a coflow's size "as soon as a sub-coflow is
  completed" (§V-B). Our reading: once some sub-coflows of a coflow completed, its size
  is estimated as the mean bytes of its completed sub-coflows times the number of its
  receivers seen so far, and the coflow is placed by the larger of that estimate and
  its bytes received (``condition=False``: by its bytes received alone, as Aalo does).
  So a coflow whose finished sub-coflows were large leaves the high queues before its
  bytes say so. A coflow's queue never rises but by starvation mitigation (below): when
  a smaller sub-coflow completes later and the estimate falls, the coflow stays where it
  is (the paper's priorities are "dynamically demoted").
- **Within a queue** flows share by per-flow max-min (TCP, as the paper's simulations
  "implement rate limiters that act like TCP"); queues are strict priorities in every
  switch, so queue by queue, each takes max-min what the queues above left on every
  link of its flows' paths.
- **Starvation mitigation.** A flow that has waited (admitted, rate 0) for
  ``wait_threshold`` raises its coflow one queue (its worker resends with a higher
  priority and the receiver raises the coflow's priority, §IV-B), and again after each
  further ``wait_threshold`` of waiting. A raise is per coflow: however many of its flows
  are due at one instant, the coflow goes up one queue, and the wait of each of its
  waiting flows starts again (the paper's receiver raises the coflow, not each flow).
  The raise lasts until the coflow's bytes (or estimate) demote it to a lower queue than
  before, which clears it. The default, 0.2,
  is Linux's minimum TCP retransmission timeout in seconds (the paper: the wait "should
  not exceed TCP RTO"); ``None`` turns mitigation off.

Non-clairvoyant: the policy sees bytes sent and which flows completed, never sizes; the
receivers of a coflow are those of its admitted flows. Decisions at every flow arrival
and completion (max-min within a queue changes), at threshold crossings (computed
exactly from the current rates) and at starvation deadlines. On networks each decision's
queue-by-queue filling is one compiled call (:func:`._queues.strict_rates`);
``simulate(..., compiled=False)`` runs the reference.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...instance import MB
from ..engine import Allocation, SimulationError, SimView
from . import register
from ._base import Params, Policy, check_bool, check_positive
from ._common import RouteClasses
from ._queues import strict_rates
from .aalo import REACH_TOL, check_ladder, demotion_wake, ladder

__all__ = ["Creek", "CreekParams"]


@dataclass(frozen=True, slots=True)
class CreekParams(Params):
    num_queues: int = 8
    """K, the number of priority queues (at most 8, as commodity switches)."""
    multiplier: float = 10.0
    """The ratio between consecutive thresholds."""
    first_threshold: float = 10 * MB
    """The highest queue's threshold on the bytes a coflow received (10 MB, MB = 2^20)."""
    condition: bool = True
    """Place a coflow by its size estimated from its completed sub-coflows too."""
    wait_threshold: float | None = 0.2
    """Waiting after which a starving flow raises its coflow one queue (None: never)."""

    def __post_init__(self) -> None:
        check_ladder(self.num_queues, self.multiplier, self.first_threshold)
        if self.num_queues > 8:
            raise SimulationError(f"parameter num_queues must be at most 8 (switches' priority "
                                  f"queues, Creek §IV-B), got {self.num_queues}")
        check_bool(self.condition, "condition")
        check_positive(self.wait_threshold, "wait_threshold", allow_none=True)

    def thresholds(self) -> np.ndarray:
        """The thresholds between consecutive queues (K - 1 of them)."""
        return ladder(self.first_threshold, self.multiplier, self.num_queues)


@register
class Creek(Policy):
    name = "creek"
    summary = "Creek's C-SJF: receiver-side priorities by coflow bytes received, max-min within a queue"
    clairvoyant = False
    Params = CreekParams

    def start(self, view: SimView) -> None:
        p: CreekParams = self.params
        self.classes = RouteClasses.build(view)
        self.tau = p.thresholds()
        self.hi = np.r_[self.tau, np.inf]  # each queue's upper threshold (the last has none)
        K = view.num_coflows
        self.base = np.zeros(K, np.int64)  # the queue by bytes (or estimate)
        self.raised = np.zeros(K, np.int64)  # queues raised by starvation mitigation
        self.waiting = np.full(view.num_flows, np.inf)  # since when a flow waits
        # sub-coflows: (coflow, receiver) pairs, their flows left and their flows done
        key = view.flow_coflow * view.num_ports + view.flow_dst
        self.sub_of = np.unique(key, return_inverse=True)[1].reshape(-1)
        n_sub = int(self.sub_of.max()) + 1 if self.sub_of.size else 0
        self.sub_coflow = np.zeros(n_sub, np.int64)
        self.sub_coflow[self.sub_of] = view.flow_coflow
        # sub-coflows are numbered coflow by coflow (their keys start with the coflow), so
        # coflow k's are sub_ptr[k]:sub_ptr[k + 1]
        self.sub_ptr = np.searchsorted(self.sub_coflow, np.arange(K + 1))
        self.sub_seen = np.zeros(n_sub, bool)  # has an admitted flow (its receiver is known)
        self.sub_open = np.zeros(n_sub, np.int64)  # admitted flows not complete
        self.sub_done = np.zeros(n_sub, bool)
        self.sub_bytes = np.zeros(n_sub)  # bytes of completed sub-coflows

    def _subcoflows(self, view: SimView) -> None:
        new = view.arrived_flows
        if new.size:
            np.add.at(self.sub_open, self.sub_of[new], 1)
            self.sub_seen[self.sub_of[new]] = True
            self.waiting[new] = view.t
        done = view.completed_flows
        if done.size:
            s = self.sub_of[done]
            np.subtract.at(self.sub_open, s, 1)
            np.add.at(self.sub_bytes, s, view.sent(done))
            self.waiting[done] = np.inf
        # a sub-coflow is complete when its receiver has every flow the coflow sends it;
        # the policy cannot count flows not yet admitted, so it waits for the whole coflow
        # to be admitted (multi-wave coflows) before it calls a sub-coflow complete: checked
        # where flows completed, and where flows arrived (the coflow's last wave may find
        # sub-coflows of its first waves complete)
        for k in np.unique(view.flow_coflow[np.concatenate([new, done])]).tolist():
            if view.fully_admitted(k):
                lo, hi = int(self.sub_ptr[k]), int(self.sub_ptr[k + 1])
                ks = np.flatnonzero(self.sub_seen[lo:hi] & ~self.sub_done[lo:hi]) + lo
                self.sub_done[ks[self.sub_open[ks] == 0]] = True

    def _size(self, view: SimView, sent: np.ndarray) -> np.ndarray:
        """What each active coflow is placed by: bytes received, or the estimate if larger."""
        size = sent.copy()
        if not self.params.condition:
            return size
        done = np.bincount(self.sub_coflow[self.sub_done], minlength=size.size)
        have = np.flatnonzero(done)
        if have.size:
            total = np.bincount(self.sub_coflow[self.sub_done], self.sub_bytes[self.sub_done],
                                minlength=size.size)
            seen = np.bincount(self.sub_coflow[self.sub_seen], minlength=size.size)
            size[have] = np.maximum(size[have], total[have] / done[have] * seen[have])
        return size

    def decide(self, view: SimView) -> Allocation:
        self._subcoflows(view)
        if not view.active_coflows:
            return Allocation()
        p: CreekParams = self.params
        t = view.t
        tol = REACH_TOL * max(1.0, abs(t))
        sent = view.coflow_sent()
        size = self._size(view, sent)
        ks = np.array(view.active_coflows, np.int64)
        # a threshold within REACH_TOL below counts as crossed (a crossing due now)
        base = np.searchsorted(self.tau, size[ks] * (1 + REACH_TOL), side="right")
        lower = base > self.base[ks]
        self.raised[ks[lower]] = 0  # demoted below where it was: the raise is over
        # a later, smaller estimate (a smaller sub-coflow completed) leaves the coflow where
        # it is: priorities only fall, but by starvation mitigation
        self.base[ks[lower]] = base[lower]
        flows = view.active_flows()
        if p.wait_threshold is not None and flows.size:
            # a flow that waited wait_threshold raises its coflow one queue, and waits anew
            due = flows[self.waiting[flows] + p.wait_threshold <= t + tol]
            if due.size:
                cs = np.unique(view.flow_coflow[due])
                self.raised[cs] += 1
                self.waiting[flows[np.isin(view.flow_coflow[flows], cs) & np.isfinite(
                    self.waiting[flows])]] = t
        queue = np.maximum(self.base - self.raised, 0)
        fq = queue[view.flow_coflow[flows]]
        order = [flows[fq == q] for q in range(p.num_queues)]
        out_f, out_r = strict_rates(view, self.classes, order)
        # who waits from now (and since when)
        run = out_r > 0
        self.waiting[out_f[run]] = np.inf
        starts = out_f[~run & ~np.isfinite(self.waiting[out_f])]
        self.waiting[starts] = t
        wake = math.inf
        if p.wait_threshold is not None and (~run).any():
            wake = float(self.waiting[out_f[~run]].min()) + p.wait_threshold
        # the next threshold crossing of a coflow's bytes, at the current rates
        per = np.bincount(view.flow_coflow[out_f], out_r, minlength=view.num_coflows)
        for k in ks.tolist():
            wake = min(wake, demotion_wake(t, sent[k], per[k], float(self.hi[self.base[k]])))
        return Allocation(out_f, out_r, wake)
