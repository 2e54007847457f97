"""``dark``: coflowsim's DARK, the D-CLAS that the Aalo paper's simulations ran.

coflowsim (the Java simulator of the Varys and Aalo papers,
``CoflowSimulatorDark``) implements Aalo's discretized coflow-aware
least-attained service differently from the dissertation's Pseudocode 4
(:mod:`.aalo`); this policy is that implementation in the fluid model, so
that its published numbers can be reproduced coflow by coflow:

- ``num_queues`` = 10 queues (``NUM_JOB_QUEUES``); a coflow joins the tail of
  queue 0 when admitted (admission order: admission time, then index).
- Queue of a coflow: the number of thresholds ``first_threshold *
  multiplier^j`` (10 MB, 100 MB, ...; ``INIT_QUEUE_LIMIT``,
  ``JOB_SIZE_MULT``) strictly below its bytes sent. At each decision the
  queues are swept from the first to the last; a coflow below its queue
  moves one queue down, to the tail of the next queue, which the sweep then
  visits (``updateJobOrder``): so it can move several queues at once, each
  time to a tail.
- Rates (``updateRates``): strict priority, queue by queue, coflows in queue
  order; each coflow's unfinished flows whose two ports both have capacity
  left are counted per port, and each gets ``min(free_src / n_src,
  free_dst / n_dst)`` of what the coflows before it left (one pass, not
  max-min: coflowsim's ``updateRatesFairShare``,
  :func:`.varys.coflowsim_fair_share`); then the next coflow.
- Decisions only when coflows are admitted or complete
  (``afterJobAdmission``, ``afterJobDeparture``): capacity a finished flow
  frees stays idle until then, and demotions wait for the next decision.
- Decisions only between coflowsim's 8 ms steps (``step``,
  :data:`.varys.COFLOWSIM_STEP`): a coflow that completes inside a step leaves
  its capacity idle until the step ends (coflowsim records it as completing
  then; the engine records the exact time). With it, on the trace as coflowsim
  reads it, every coflow's completion rounded up to the step is coflowsim's
  (``tests/sim/test_coflowsim_reference.py``).

Not reproduced: when nothing runs while work is left, the engine asks again at once (a stall,
:mod:`coflowopt.sim.engine`), where coflowsim waits for the next admission;
and its 10.24 s admission epochs and size rounding, which are in its reading of
the trace (``--format coflowsim``, :func:`coflowopt.io.benchmark.loads_coflowsim`;
pass ``--port-rate 131072000`` for its rack rate). "Capacity left" is more
than ``SAT`` of the port's capacity (coflowsim: more than 1e-3 bit/s).
Non-clairvoyant: the policy sees bytes sent only. coflowsim's racks are the big
switch (a flow's uplink and downlink); on a multi-hop fabric the same pass runs
over each flow's whole path: a flow whose every link has capacity left is
counted on each of them (by its share of the link, under ``spray``) and gets the
least of ``free / count`` over its path.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...instance import MB
from ..engine import Allocation, SimView
from . import register
from ._base import Params, Policy, check_positive
from .aalo import check_ladder
from .varys import COFLOWSIM_STEP, coflowsim_fair_share, step_end


@dataclass(frozen=True, slots=True)
class DarkParams(Params):
    num_queues: int = 10
    """``NUM_JOB_QUEUES``."""
    multiplier: float = 10.0
    """``JOB_SIZE_MULT``: ratio between consecutive thresholds."""
    first_threshold: float = 10 * MB
    """``INIT_QUEUE_LIMIT`` in bytes (10 MB, MB = 2^20 bytes)."""
    step: float = COFLOWSIM_STEP
    """Decide only at multiples of ``step`` seconds (coflowsim's 8 ms step; 0: at once)."""

    def __post_init__(self) -> None:
        check_ladder(self.num_queues, self.multiplier, self.first_threshold)
        check_positive(self.step, "step", allow_zero=True)


@register
class Dark(Policy):
    name = "dark"
    summary = "coflowsim's DARK (the Aalo paper's simulated D-CLAS): one-pass split, coflow events"
    clairvoyant = False
    Params = DarkParams

    def __init__(self, params: DarkParams) -> None:
        super().__init__(params)
        self.on_flow_completion = False

    def start(self, view: SimView) -> None:
        p: DarkParams = self.params
        self.queues: list[list[int]] = [[] for _ in range(p.num_queues)]
        self.level = np.zeros(view.num_coflows, np.int64)  # coflowsim's currentJobQueue
        self.known = np.zeros(view.num_coflows, bool)

    def _target(self, sent: float) -> int:
        """How many thresholds lie strictly below ``sent`` bytes."""
        p: DarkParams = self.params
        n, k = 0, p.first_threshold
        while k < sent:
            n += 1
            k *= p.multiplier
        return n

    def decide(self, view: SimView) -> Allocation:
        p: DarkParams = self.params
        if p.step > 0:
            end = step_end(view.t, p.step)
            if end > view.t:  # coflowsim decides between its steps only
                return Allocation(wake=end)
        active = view.active_coflows
        live = np.zeros(view.num_coflows, bool)
        live[active] = True
        for q in self.queues:
            q[:] = [k for k in q if live[k]]
        adm = view.coflow_admitted
        new = sorted((k for k in active if not self.known[k]), key=lambda k: (adm[k], k))
        self.known[new] = True
        self.queues[0].extend(new)
        sent = view.coflow_sent()
        for i, q in enumerate(self.queues):  # updateJobOrder: one sweep, tails
            move = []
            for k in q:
                if self.level[k] < self._target(float(sent[k])):
                    self.level[k] += 1
                    move.append(k)
            if move and i + 1 < len(self.queues):
                gone = set(move)
                q[:] = [k for k in q if k not in gone]
                self.queues[i + 1].extend(move)
        free = view.capacity.astype(float).copy()
        flows, rates = [], []
        for q in self.queues:
            for k in q:
                f = view.flows_of(k)
                if f.size == 0:
                    continue
                flows.append(f)
                rates.append(coflowsim_fair_share(view, [f], free)[0])
        if not flows:
            return Allocation()
        return Allocation(np.concatenate(flows), np.concatenate(rates))
