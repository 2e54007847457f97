"""``aalo``: Discretized Coflow-Aware Least-Attained Service (D-CLAS).

Dissertation §6.5.2-6.5.4 and Pseudocode 4; defaults from §6.8.1 (K = E =
10, Q1^hi = 10 MB, queue weights K - i + 1).

- Queues Q_1..Q_K hold coflows by the bytes they have sent so far: Q_i has
  ``[Q_i^lo, Q_i^hi)`` with ``Q_1^lo = 0``, ``Q_1^hi = first_threshold``,
  ``Q_{i+1}^hi = E * Q_i^hi``, ``Q_K^hi = inf``.
- A coflow enters Q_1 when its first flows are admitted and is demoted the
  moment its bytes sent reach the queue's upper threshold; the engine is
  woken exactly then (the crossing time follows from the coflow's current
  total rate), so demotions are exact, not checked every Δ.
- Within a queue coflows are served FIFO by their DAG's first admission time
  (a DAG: coflows joined by dependencies; a coflow without any is its own),
  ties by the DAG's first coflow, then a coflow's position in a
  dependency-respecting order, then its index: the external and internal
  CoflowIds of §6.6.1 (:func:`fifo_order`);
  within a coflow flows
  share by max-min fairness; across queues ``sharing="weighted"`` (default,
  weights ``K - i + 1`` as in §6.8.1, or ``weights`` given) or
  ``sharing="strict"`` (strict priority across queues, as coflowsim's
  ``CoflowSimulatorDark`` does; it differs otherwise: a demoted job goes to the
  tail of the next queue, a job's flows get a one-pass split ``min(free_src /
  n, free_dst / n)`` rather than max-min, and it re-decides only on job
  arrivals and departures; that implementation is the policy ``dark``,
  :mod:`.dark`). See :mod:`._queues` for the exact allocation.
- Measured deviations. With weighted sharing a coflow's
  rates are the sum of its max-min rates over the rounds (and the final
  strict pass), which need not be max-min over its flows (in 260 of 1,000
  random instances a flow was held below a sibling on the links that bind
  both); strict priority gives max-min. The rounds stop at ``MAX_ROUNDS``
  = 8 and the strict pass hands out the rest: when the shares have not
  settled by then (67 of 26,504 random decisions) a low queue can get a
  third of its converged rate; completion times moved by at most 6e-4
  relative in those runs. (Before 2026-11-26 coflows of a DAG kept their own
  admission times, so DAGs interleaved; they now share their DAG's first
  admission, Aalo's external CoflowId.)
- Non-clairvoyant: the policy sees bytes sent, never sizes or widths.
  Re-allocation at every flow arrival and completion and every demotion
  (Aalo's coordinator recomputes every Δ = 10 ms; the fluid model does it
  at the events where the allocation changes).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...instance import MB
from ..engine import Allocation, SimulationError, SimView, Stretch
from ..kernels.dclas import WORK, dclas_stretch
from ..kernels.dclas_clock import dclas_clock_stretch
from . import register
from ._base import Params, Policy, check_choice, check_positive
from ._common import SAT, RouteClasses
from ._queues import MAX_QUEUES, MAX_ROUNDS, queue_rates

__all__ = [
    "DENSE_ROWS", "HORIZON", "Aalo", "AaloParams", "check_ladder", "check_num_queues",
    "compiled_queues", "demotion_wake",
    "exceeded", "exceeded_any", "fifo_order", "kernel_work", "new_work", "reached",
]

REACH_TOL = 1e-12
"""Relative tolerance within which a threshold counts as reached: in time (a crossing
due within ``REACH_TOL * max(1, t)``) and in bytes (bytes sent within ``REACH_TOL`` of the
threshold below it). Without the byte slack, a coflow whose total lands one ulp short of a
threshold while its rate is 0 would never be demoted (no rate, no crossing to wait for)."""


@dataclass(frozen=True, slots=True)
class AaloParams(Params):
    num_queues: int = 10
    """K, the number of queues."""
    multiplier: float = 10.0
    """E, the ratio between consecutive queue thresholds."""
    first_threshold: float = 10 * MB
    """Q1^hi in bytes (10 MB, MB = 2^20 bytes as in the trace)."""
    sharing: str = "weighted"
    """"weighted" sharing across queues or "strict" priority."""
    weights: tuple[float, ...] = ()
    """Queue weights, highest-priority queue first; empty: K - i + 1."""

    def __post_init__(self) -> None:
        check_ladder(self.num_queues, self.multiplier, self.first_threshold)
        k = self.num_queues
        check_choice(self.sharing, "sharing", ("weighted", "strict"))
        object.__setattr__(self, "weights", tuple(float(w) for w in self.weights))
        if self.weights:
            if len(self.weights) != k:
                raise SimulationError(
                    f"parameter weights needs {k} values (one per queue), got {len(self.weights)}"
                )
            for w in self.weights:
                check_positive(w, "weights")
            if self.sharing == "strict":
                raise SimulationError("parameter weights applies to sharing=weighted only "
                                      "(strict priority has no weights)")
            if any(a < b for a, b in zip(self.weights, self.weights[1:], strict=False)):
                raise SimulationError(
                    "parameter weights must not increase from the first queue to the last "
                    f"(§6.5.4: Q_i.weight >= Q_i+1.weight), got {', '.join(map(repr, self.weights))}")
            if not math.isfinite(sum(self.weights)):
                raise SimulationError("parameter weights must have a finite sum (an infinite one "
                                      "made every share 0: strict priority in disguise)")

    def queue_weights(self) -> np.ndarray:
        if self.weights:
            return np.array(self.weights, float)
        k = self.num_queues
        return np.arange(k, 0, -1, dtype=float)  # K - i + 1 for i = 1..K

    def thresholds(self) -> np.ndarray:
        """Upper thresholds Q_1^hi .. Q_{K-1}^hi (Q_K has none)."""
        return ladder(self.first_threshold, self.multiplier, self.num_queues)


def ladder(first: float, multiplier: float, num_queues: int) -> np.ndarray:
    """The ``num_queues - 1`` thresholds ``first * multiplier^k`` between consecutive
    queues; a threshold beyond the largest float is ``inf`` (never reached).

    Where ``multiplier^k`` alone is beyond the largest float, the threshold is the one
    before it times ``multiplier`` (finite if the product is)."""
    with np.errstate(over="ignore"):
        power = multiplier ** np.arange(num_queues - 1, dtype=np.float64)
        out = first * power
        for k in np.flatnonzero(np.isinf(power)).tolist():
            out[k] = out[k - 1] * multiplier
    return out


def check_num_queues(k: int) -> None:
    """Validate a number of queues: an integer from 1 to :data:`MAX_QUEUES`."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise SimulationError(f"parameter num_queues must be an integer >= 1, got {k!r}")
    if k > MAX_QUEUES:
        raise SimulationError(f"parameter num_queues must be at most {MAX_QUEUES}, got {k!r}")


def check_ladder(num_queues: int, multiplier: float, first_threshold: float) -> None:
    """Validate a queue ladder: K queues (:func:`check_num_queues`), thresholds
    ``first_threshold * multiplier^j`` with ``multiplier > 1``."""
    check_num_queues(num_queues)
    check_positive(multiplier, "multiplier")
    if multiplier <= 1:
        raise SimulationError(f"parameter multiplier must be > 1, got {multiplier!r}")
    check_positive(first_threshold, "first_threshold")


def fifo_order(view: SimView, coflows: Iterable[int]) -> list[int]:
    """``coflows`` in FIFO order: by their DAG's first admission, then the DAG (its first
    coflow in the instance: the DAG's external CoflowId of §6.6.1, so a queue serves a
    DAG's coflows together, in the DAG's arrival order), then dependency rank, then
    index. A coflow without dependencies is a DAG of its own."""
    dag = view.dag
    first = np.full(dag.size, np.inf)
    np.minimum.at(first, dag, view.coflow_admitted)
    rank = view.topological_rank
    return sorted(coflows, key=lambda k: (float(first[dag[k]]), int(dag[k]), int(rank[k]), k))


def reached(sent: float, rate: float, threshold: float, tol: float) -> bool:
    """True when ``sent`` is at ``threshold`` or would reach it within ``tol`` time units.

    "At" allows a relative ``REACH_TOL`` below the threshold (rounding in running totals).
    """
    return sent >= threshold * (1.0 - REACH_TOL) or (rate > 0 and (threshold - sent) / rate <= tol)


def exceeded(sent: float, rate: float, threshold: float, tol: float) -> bool:
    """True when ``sent`` is above ``threshold``, or at it (:func:`reached`) while growing.

    MCS's Algorithm 2 demotes when bytes *exceed* a threshold: bytes that stopped exactly
    at it (``rate`` 0) stay (above: by more than a relative ``REACH_TOL``), while bytes
    still growing at it exceed it at once, so the demotion is due now (as with
    :func:`reached`).
    """
    return sent > threshold * (1.0 + REACH_TOL) or (rate > 0 and reached(sent, rate, threshold, tol))


def exceeded_any(sent: np.ndarray, rate: np.ndarray, threshold: float, tol: float) -> bool:
    """:func:`exceeded` for any of several flows (the same tests, elementwise)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        at = (sent >= threshold * (1.0 - REACH_TOL)) | ((threshold - sent) / rate <= tol)
    return bool(np.any((sent > threshold * (1.0 + REACH_TOL)) | ((rate > 0) & at)))


HORIZON = (32, 50_000)
"""How many coflows (and at most how many of their flows in all) a queue kernel admits
by itself before it hands control back (:meth:`SimView.upcoming`).

Without it a stretch ends at every admission, and the next one sets up every active
flow again (on the Facebook trace, 526 stretches of 36,000 flows each). With it, a
flow is set up about as many times as its coflow spans horizons. The allocation is
the same rule either way; what differs is rounding: a coflow whose levels stand
keeps them across an admission (as at any other event) instead of being solved
afresh. ``(0, 0)``: a stretch per admission.

Strict priority only: with weighted sharing set-up is a small part of the work, and
on the Facebook trace the kernel revisited 3.5% more rows and took 5-10% longer with
it (123-125 s against 113-116 s, in-process pairs), so weighted stretches still end at
every admission (the per-row kernel can make admissions too: the tests run it so with
strict priority)."""


DENSE_ROWS = 2048
"""With weighted sharing, a coflow with at least this many rows (distinct uplink-downlink
pairs with unfinished flows) when a stretch starts takes the dense water-filling: its
flows counted in an uplink x downlink matrix, whose rows the water-filling subtracts
whole (:func:`coflowopt.sim.kernels.dclas._dense`), instead of its rows one by one.

Weighted sharing keeps the big shuffles of the Facebook trace running at every event,
and 73% of its water-fillings were of coflows with 4,096 rows or more (12,750 on
average, three rounds each); there the matrix costs a fixed ``O(links)`` per frozen link
in contiguous memory. The levels are the same max-min levels up to rounding (links
without capacity take their rows at level 0 instead of leaving them out). ``0``: never."""


def compiled_queues(
    view: SimView, classes: RouteClasses, queue: np.ndarray, wide: np.ndarray,
    th_n: np.ndarray, th_w: np.ndarray, weights: np.ndarray | None, work: np.ndarray,
    enter: Callable[[SimView, np.ndarray], None] | None = None, *, exceed: bool = False,
) -> Allocation | None:
    """The compiled stretch of the queue allocation, or None where it does not apply.

    Queues must be up to date at ``view.t``; the kernel
    (:func:`coflowopt.sim.kernels.dclas_clock.dclas_clock_stretch` for strict
    priority, :func:`coflowopt.sim.kernels.dclas.dclas_stretch` for weighted
    sharing) then handles every
    flow completion, demotion and coflow completion until the next admission
    it does not make (or the completion of a coflow others depend on), as
    :func:`._queues.queue_rates` and the policies' demotion rules do at each
    of them (``simulate(..., compiled=False)``: the reference). With strict
    priority it makes the next admissions itself (:data:`HORIZON`): those
    coflows enter behind the active ones, each in the queue ``queue`` holds
    for it, which ``enter(view, coflows)`` sets beforehand (none: as it is,
    e.g. the first); the kernel reads it only when it admits the coflow. The
    kernel adds what it did to ``work`` (:func:`new_work`). ``exceed``: demote by
    :func:`exceeded` instead of :func:`reached` (``mcs``).
    """
    if not (view.compiled_two_link and classes.split is not None):
        return None
    cos = np.array(fifo_order(view, view.active_coflows), np.int64)
    w = np.zeros(0) if weights is None else np.asarray(weights, float)
    # the bytes of each wide coflow's longest flow so far, finished flows included
    longest = np.zeros(view.num_coflows)
    for k in cos[wide[cos]]:
        longest[k] = view.sent(view.all_flows_of(k)).max()
    flows = view.active_flows()
    # weighted sharing: measured slower with admissions in the kernel (see HORIZON)
    admits, adm_t = view.upcoming(*HORIZON) if not w.size else view.upcoming(0, 0)
    # the kernel queues its admissions behind the active coflows: a coflow of a DAG with
    # others may belong ahead of them (its DAG's CoflowId), so the engine admits it
    alone = np.bincount(view.dag, minlength=view.num_coflows)[view.dag[admits]] == 1
    if not alone.all():
        cut = int(np.argmin(alone))
        admits, adm_t = admits[:cut], adm_t[:cut]
    if admits.size:
        if enter is not None:
            enter(view, admits)
        cos = np.concatenate([cos, admits])
        flows = np.concatenate([flows, *(view.all_flows_of(int(k)) for k in admits)])
    adm_at = np.full(admits.size, np.inf)
    args = (cos, queue, wide, th_n, th_w, w, view.coflow_sent().copy(), longest, int(classes.split),
            SAT, MAX_ROUNDS, REACH_TOL, exceed, view.has_dependents, work, adm_t, adm_at, DENSE_ROWS)
    kernel = dclas_stretch if w.size else dclas_clock_stretch
    return Allocation(stretch=Stretch(kernel, flows, args, admits, adm_at))


def new_work() -> np.ndarray:
    """Zeroed counters for the compiled kernel's work (:data:`coflowopt.sim.kernels.dclas.WORK`)."""
    return np.zeros(len(WORK), np.int64)


def kernel_work(work: np.ndarray) -> dict[str, Any]:
    """The result's ``info`` entry for the kernel's work counters (empty if it never ran).

    Kept as a dict (not printed with the scalar facts): ``res.info["kernel_work"]`` tells
    how much the compiled stretches did, e.g. the rows whose rate changed
    (benchmarks/sim_fb.py reports it).
    """
    if not work.any():
        return {}
    return {"kernel_work": {k: int(v) for k, v in zip(WORK, work, strict=True)}}


def demotion_wake(t: float, sent: float, rate: float, threshold: float) -> float:
    """When a coflow sending at ``rate`` reaches ``threshold`` (``inf`` if never)."""
    if rate <= 0 or not math.isfinite(threshold):
        return math.inf
    return t + max(float(threshold) - float(sent), 0.0) / float(rate)


@register
class Aalo(Policy):
    name = "aalo"
    summary = "D-CLAS: K queues by bytes sent, FIFO within, max-min within a coflow"
    clairvoyant = False
    Params = AaloParams

    def start(self, view: SimView) -> None:
        p: AaloParams = self.params
        self.classes = RouteClasses.build(view)
        self.hi = np.r_[p.thresholds(), np.inf]
        self.queue = np.zeros(view.num_coflows, np.int64)
        self.weights = p.queue_weights() if p.sharing == "weighted" else None
        self.wide = np.zeros(view.num_coflows, bool)
        self.no_wide = np.full(len(self.hi), np.inf)
        self.work = new_work()

    def _demote(self, view: SimView, sent: np.ndarray) -> None:
        rate = view.coflow_rate()
        tol = REACH_TOL * max(1.0, abs(view.t))
        last = len(self.hi) - 1
        for k in view.active_coflows:
            q = int(self.queue[k])
            while q < last and reached(sent[k], rate[k], self.hi[q], tol):
                q += 1
            self.queue[k] = q

    def decide(self, view: SimView) -> Allocation:
        if not view.active_coflows:
            return Allocation()
        sent = view.coflow_sent()
        self._demote(view, sent)
        fast = compiled_queues(view, self.classes, self.queue, self.wide, self.hi, self.no_wide,
                               self.weights, self.work)
        if fast is not None:
            return fast
        queues: list[list[int]] = [[] for _ in self.hi]
        for k in fifo_order(view, view.active_coflows):
            queues[int(self.queue[k])].append(k)
        flows, rates = queue_rates(view, self.classes, queues, self.weights)
        # the earliest demotion under these rates
        per = np.bincount(view.flow_coflow[flows], rates, minlength=view.num_coflows)
        wake = math.inf
        for k in view.active_coflows:
            wake = min(wake, demotion_wake(view.t, sent[k], per[k], self.hi[self.queue[k]]))
        return Allocation(flows, rates, wake)

    def finish(self, view: SimView) -> dict[str, Any]:
        return kernel_work(self.work)
