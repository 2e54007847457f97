"""``mcs``: multi-attribute coflow scheduling (SNCF initial queue + double thresholds).

MCS (Wang et al., IEEE/ACM ToN 2018: "Multi-Attributes-Based Coflow Scheduling Without
Prior Knowledge"), Algorithm 2 and
§VIII-A's simulation parameters:

- NEWCOFLOW: a new coflow of width ``w`` joins queue ``p_i`` of the class
  ``i`` with ``Δ_{i-1} <= w < Δ_i``; the simulations use ``Δ_i = 10^i``
  and ``p_i = i`` (so widths 1-9 start in queue 1, 10-99 in queue 2, ...).
  The width is known in advance (the paper obtains it from the framework's
  API or CODA's identification), so the policy may read it; sizes it may
  not.
- RESCHEDULE (double thresholds): a narrow coflow (``w <= Δ_w``) in queue
  ``i`` is demoted when its bytes sent exceed ``θ^n_i = 10^i MB``; a wide
  one when its longest flow's bytes sent exceed ``θ^w_i = 2^(i-1) MB`` (over all
  its flows: a flow that finished keeps the bytes it sent).
  The paper does not state Δ_w for its simulations; the default 50 is the
  Varys and MCS papers' narrow/wide boundary (at most 50 flows is narrow). Demotions
  happen exactly when the threshold is crossed (the engine is woken then),
  repeatedly if a coflow crosses several. A deviation: §VI-C calls
  RESCHEDULE "when new coflows arrive or old coflows finish"; read
  literally, a coflow would keep its queue between those events however
  many bytes it sent. We follow the paper's daemons, which re-sync every
  10 ms (§VI-D, "as Aalo does"), in the fluid limit: a demotion takes
  effect when the threshold is crossed, as in Aalo.
- "Exceed" as Algorithm 2 writes it (``>``, :func:`.aalo.exceeded`): bytes
  that stopped exactly at a threshold stay in the queue; bytes still growing
  at it exceed it at once, so the demotion comes at the crossing (Aalo's
  queues demote at the crossing too, by their ``[Q^lo, Q^hi)`` ranges). The
  two readings differ only when bytes stop at the threshold, e.g. a wide
  coflow whose longest flow *finishes* with exactly ``θ^w_i`` bytes while
  its other flows still run: it stays in queue ``i`` (a wide coflow with
  flows of 1, 0.9 and 0.9 and ``θ^w_1 = 1`` and a narrow one arriving at 0.5
  on the same port: A at 1.8, B at 2.8; read as "reach", 2.8 and 2.0).
  This is also how the M/M/1 model (:mod:`coflowopt.mcs.thresholds`) counts
  (an attribute equal to ``θ_j`` stays in queue ``j``). "Stopped exactly at"
  allows a relative ``aalo.REACH_TOL`` above the threshold (rounding). On the
  Facebook trace 48 of the 127 wide coflows have a length of exactly
  ``2^j`` MB; the two readings give CCTs within 1e-6 s there (measured
  unbatched and with 10 s batches), but not in general: with the releases of
  40 of its coflows scaled by 0.01 (congested), 3 of 40 differ, by up to 6%,
  and by up to 1.7% on its first 60 scaled by 0.1 (an independent
  simulator's check).
- Batching: §VIII-A's simulations admit coflows "in batch", every 10 s by
  default. The policy does not batch by itself; pass
  ``batch_interval=10`` (CLI ``--batch-interval 10``) to simulate that
  setting. ``coflowopt compare``'s default runs are unbatched, like the
  other policies'.
- Queues: "coflows from higher-priority queues are scheduled first" (strict
  priority, default ``sharing="strict"``), FIFO within a queue, max-min
  among a coflow's flows, as in Aalo (:mod:`._queues`); ``sharing=
  "weighted"`` uses Aalo's weights K - i + 1 instead.

Thresholds are in bytes (MB = 2^20 bytes). K defaults to 10 queues as in
Aalo; coflows never move past the last queue.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...instance import MB
from ..engine import Allocation, SimulationError, SimView
from . import register
from ._base import Params, Policy, check_choice, check_positive
from ._common import RouteClasses
from ._queues import queue_rates
from .aalo import (
    REACH_TOL,
    check_num_queues,
    compiled_queues,
    demotion_wake,
    exceeded,
    exceeded_any,
    fifo_order,
    kernel_work,
    new_work,
)

__all__ = ["MCS", "MCSParams"]


def _default_width() -> tuple[float, ...]:
    return tuple(float(10**i) for i in range(1, 10))


def _default_narrow() -> tuple[float, ...]:
    return tuple(float(10**i * MB) for i in range(1, 10))


def _default_wide() -> tuple[float, ...]:
    return tuple(float(2 ** (i - 1) * MB) for i in range(1, 10))


@dataclass(frozen=True, slots=True)
class MCSParams(Params):
    num_queues: int = 10
    """K, the number of priority queues."""
    width_thresholds: tuple[float, ...] = _default_width()
    """Δ_1, Δ_2, ...: class i holds widths in [Δ_{i-1}, Δ_i) (Δ_0 = 0, last class unbounded)."""
    initial_queues: tuple[int, ...] = ()
    """p_i, the 1-based starting queue of class i; empty: p_i = i."""
    narrow_width: int = 50
    """Δ_w: coflows with at most this many flows are narrow."""
    narrow_thresholds: tuple[float, ...] = _default_narrow()
    """θ^n_i in bytes: narrow coflows leave queue i when their bytes sent exceed it."""
    wide_thresholds: tuple[float, ...] = _default_wide()
    """θ^w_i in bytes: wide coflows leave queue i when their longest flow's bytes exceed it."""
    sharing: str = "strict"
    """"strict" priority across queues (the paper) or Aalo's "weighted" sharing."""

    def __post_init__(self) -> None:
        check_num_queues(self.num_queues)
        for name in ("width_thresholds", "narrow_thresholds", "wide_thresholds"):
            vals = tuple(float(v) for v in getattr(self, name))
            object.__setattr__(self, name, vals)
            for v in vals:
                check_positive(v, name)
            if any(b <= a for a, b in itertools.pairwise(vals)):
                raise SimulationError(f"parameter {name} must be increasing, got {vals}")
        object.__setattr__(self, "initial_queues", tuple(int(q) for q in self.initial_queues))
        if self.initial_queues:
            if len(self.initial_queues) != len(self.width_thresholds) + 1:
                raise SimulationError(
                    "parameter initial_queues needs one queue per width class "
                    f"({len(self.width_thresholds) + 1}), got {len(self.initial_queues)}"
                )
            k = self.num_queues
            if min(self.initial_queues) < 1 or max(self.initial_queues) > k:
                raise SimulationError(f"parameter initial_queues must lie in 1..{k} (num_queues), "
                                      f"got {tuple(int(q) for q in self.initial_queues)}")
        n = self.narrow_width
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise SimulationError(f"parameter narrow_width must be an integer >= 1, got {n!r}")
        check_choice(self.sharing, "sharing", ("strict", "weighted"))

    def start_queue(self, width: int) -> int:
        """0-based starting queue of a coflow of this width."""
        cls = int(np.searchsorted(np.array(self.width_thresholds), width, side="right"))
        q = self.initial_queues[cls] if self.initial_queues else cls + 1
        return min(q, self.num_queues) - 1


def _threshold(vals: tuple[float, ...], q: int) -> float:
    return vals[q] if q < len(vals) else math.inf


@register
class MCS(Policy):
    name = "mcs"
    summary = "SNCF width classes for the first queue + double demotion thresholds"
    clairvoyant = False
    knows_width = True
    Params = MCSParams

    def start(self, view: SimView) -> None:
        p: MCSParams = self.params
        self.classes = RouteClasses.build(view)
        self.queue = np.full(view.num_coflows, -1, np.int64)
        self.weights = (
            np.arange(p.num_queues, 0, -1, dtype=float) if p.sharing == "weighted" else None
        )
        self.wide = np.zeros(view.num_coflows, bool)
        self.work = new_work()
        qs = range(p.num_queues)
        self.th_n = np.array([_threshold(p.narrow_thresholds, q) for q in qs])
        self.th_w = np.array([_threshold(p.wide_thresholds, q) for q in qs])

    def _enter(self, view: SimView, ks: Sequence[int] | np.ndarray) -> None:
        """SNCF (Algorithm 1): the first queue of coflows ``ks`` by their widths, once."""
        p: MCSParams = self.params
        for k in ks:
            if self.queue[k] < 0:
                w = int(view.width([k])[0])
                self.queue[k] = p.start_queue(w)
                self.wide[k] = w > p.narrow_width

    def decide(self, view: SimView) -> Allocation:
        if not view.active_coflows:
            return Allocation()
        p: MCSParams = self.params
        self._enter(view, view.arrived_coflows)
        sent = view.coflow_sent()
        tol = REACH_TOL * max(1.0, abs(view.t))
        last = p.num_queues - 1
        for k in view.active_coflows:
            q = int(self.queue[k])
            vals = p.wide_thresholds if self.wide[k] else p.narrow_thresholds
            if self.wide[k]:
                # the longest flow over all the coflow's flows: a finished one keeps its bytes
                f = view.all_flows_of(k)
                s = view.sent(f)
                r = view.rate(f)
            while q < last:
                # Algorithm 2's "exceed" (aalo.exceeded): a flow (wide) or coflow (narrow)
                # that stopped exactly at the threshold stays, one still sending at it goes
                if self.wide[k]:
                    hit = exceeded_any(s, r, _threshold(vals, q), tol)
                else:
                    hit = exceeded(sent[k], view.coflow_rate()[k], _threshold(vals, q), tol)
                if not hit:
                    break
                q += 1
            self.queue[k] = q
        fast = compiled_queues(view, self.classes, self.queue, self.wide, self.th_n, self.th_w,
                               self.weights, self.work, self._enter, exceed=True)
        if fast is not None:
            return fast
        queues: list[list[int]] = [[] for _ in range(p.num_queues)]
        for k in fifo_order(view, view.active_coflows):
            queues[int(self.queue[k])].append(k)
        flows, rates = queue_rates(view, self.classes, queues, self.weights)
        wake = math.inf
        per = np.bincount(view.flow_coflow[flows], rates, minlength=view.num_coflows)
        pos = {int(k): None for k in view.active_coflows}
        for k in pos:
            q = int(self.queue[k])
            if q >= last:
                continue
            if self.wide[k]:
                th = _threshold(p.wide_thresholds, q)
                sel = view.flow_coflow[flows] == k
                fk, rk = flows[sel], rates[sel]
                ok = rk > 0
                if ok.any():
                    s = view.sent(fk[ok])
                    wake = min(wake, view.t + float(((th - s) / rk[ok]).min()))
            else:
                wake = min(wake, demotion_wake(view.t, sent[k], per[k],
                                               _threshold(p.narrow_thresholds, q)))
        return Allocation(flows, rates, wake)

    def finish(self, view: SimView) -> dict[str, Any]:
        return kernel_work(self.work)
