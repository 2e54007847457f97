"""``baraat``: FIFO with limited multiplexing (FIFO-LM), decided at each link.

Baraat (Dogar et al., SIGCOMM 2014) as the dissertation evaluates it
(§6.8.2, "FIFO-LM"): every link serves coflows first-in first-out, but a
coflow that has become *heavy* there (sent at least ``heavy_threshold``
bytes through that link, counting its finished flows; "at" allows a
relative ``REACH_TOL`` = 1e-12 below, as for Aalo's thresholds) lets the
next coflow in line run beside it. So on each link the coflows allowed to
send are those up to and including the first one that is still light; a
flow runs if its coflow is allowed on all its links, and running flows
share by per-flow max-min fairness ("fair sharing among heavy coflows").
Decisions are local to each link, without coordination, as in Baraat. The
threshold defaults to the ``heavy_percentile``-th percentile (80th, the
choice §6.8.2 reports) of the workload's coflow sizes, set offline.
Re-allocation at every flow arrival and completion and whenever a coflow
turns heavy on a link (computed from its current rate there). FIFO ties:
admission time, then coflow index.

Reading, not in the dissertation: a light coflow keeps its turn on a link even while
its flows there wait for another link (the link does not know why they do not
send, as a switch would not), so the coflows behind it on that link wait too
and the link may idle. The allocation is work-conserving only among the
coflows allowed to send. A switch with strict-priority queues would instead
pass the unused capacity to the next coflow in line; the dissertation does
not say which its simulation did, and Baraat's own design schedules a
lower-priority task when the highest-priority one is bottlenecked at another
link: ``spare="next"`` does that (what the allowed coflows leave goes to the
coflows behind them in FIFO order, each by max-min on what is left: the
strict-priority filling of :func:`._queues.strict_rates`, compiled on networks),
and is work-conserving. Measured on the Facebook trace (1 Gbit/s, default
80th-percentile threshold): mean CCT 473.2 s, 11.4x Aalo's (the dissertation
reports FIFO-LM "significantly worse than Aalo (18.6x)", on its own metric).

Compiled (the big switch, ``spare="idle"``, every coflow's flows admitted
together), the rule runs through the per-pair max-min kernel with FIFO gates
(:mod:`coflowopt.sim.kernels.pairs`): while no coflow gains flows after its
admission, the coflows allowed on a link only grow (a link's first light
coflow moves on when it turns heavy or its last flow there completes, and
arrivals queue behind), so a flow that may send keeps that right until it
completes, and the allocation is per-flow max-min over a set of flows that
grows at gate events. The kernel makes those events itself: a link's first
light coflow reaching the threshold (from its rate through the link) and its
last flow there completing. On multi-hop fabrics the same gates run in the
route-class kernel of ``fair`` (:mod:`coflowopt.sim.kernels.routes_fair`): a
flow joins once its coflow may send on every link of its route, a coflow's
bytes through a link weigh each flow by its coefficient there (its share of
the link under spray), and the joined flows share by the kernel's incremental
max-min. Multi-wave coflows, ``finishes_before``
anchors and ``spare="next"`` take the reference path, :meth:`Baraat.decide`
(``simulate(..., compiled=False)``), which recomputes everything at every
event. On the Facebook trace: 15 s against about 6 minutes, the same events
and mean CCT (``benchmarks/results/simulator.md``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..engine import Allocation, SimulationError, SimView, Stretch
from ..kernels.pairs import pair_gate_admit, pair_stretch
from ..kernels.routes_fair import route_gate_admit, route_stretch
from . import register
from ._base import Params, Policy, check_choice, check_positive
from ._common import RouteClasses, max_min_flows
from ._queues import strict_rates
from .aalo import REACH_TOL
from .fair import CHANGE_TOL, pair_kernel_state, route_kernel_state, split_links


@dataclass(frozen=True, slots=True)
class BaraatParams(Params):
    heavy_threshold: float | None = None
    """Bytes through a link after which a coflow is heavy there; None: use the percentile."""
    heavy_percentile: float = 80.0
    """Percentile of the workload's coflow sizes used when no threshold is given."""
    spare: str = "idle"
    """Capacity the allowed coflows leave: "idle" (the reading above) or "next" (to the
    coflows behind them, FIFO, each by max-min on what is left: Baraat's design)."""

    def __post_init__(self) -> None:
        check_choice(self.spare, "spare", ("idle", "next"))
        check_positive(self.heavy_threshold, "heavy_threshold", allow_none=True)
        check_positive(self.heavy_percentile, "heavy_percentile", allow_zero=True)
        if self.heavy_percentile > 100:
            raise SimulationError(
                f"parameter heavy_percentile must be at most 100, got {self.heavy_percentile!r}")


@register
class Baraat(Policy):
    name = "baraat"
    summary = "FIFO with limited multiplexing: heavy coflows let the next one run (per link)"
    clairvoyant = False
    Params = BaraatParams

    def start(self, view: SimView) -> None:
        p: BaraatParams = self.params
        self.classes = RouteClasses.build(view)
        if p.heavy_threshold is not None:
            self.threshold = float(p.heavy_threshold)
        else:
            sizes = view.workload_coflow_sizes()
            self.threshold = float(np.percentile(sizes, p.heavy_percentile)) if sizes.size else 0.0
        self.seen = np.zeros(0, np.int64)  # the active flows at the last decision
        self.done_bytes: dict[int, np.ndarray] = {}  # per coflow: finished flows' bytes per link
        self.kernel: tuple[object, ...] | None = None
        self.on_routes = False  # the kernel is routes_fair's (else the pair kernel's)
        split = split_links(view)
        if view.compiled and p.spare == "idle" and not view.staggered:
            gate = (self.threshold, REACH_TOL)
            if split is not None:
                self.kernel = pair_kernel_state(view, split, np.ones(view.num_flows), CHANGE_TOL,
                                                gate=gate)
            else:
                self.kernel = route_kernel_state(view, self.classes, np.ones(view.num_flows),
                                                 CHANGE_TOL, gate)
                self.on_routes = self.kernel is not None

    def _per_link(self, view: SimView, row: np.ndarray, m: int, flows: np.ndarray,
                  values: np.ndarray) -> np.ndarray:
        """``(m, L)`` sums of ``values`` over the routes of ``flows``, by coflow position ``row``."""
        L = view.num_links
        if view.two_link:
            # (float even when empty: bincount of no values is an integer array)
            out = np.bincount(row * L + view.link_a[flows], values, minlength=m * L).astype(float)
            out += np.bincount(row * L + view.link_b[flows], values, minlength=m * L)
            return out.reshape(m, L)
        pick = sp.csr_array((values, (row, np.arange(flows.size))), shape=(m, flows.size))
        return np.asarray((pick @ view.usage(flows)).todense()).reshape(m, L)

    def _finished_bytes(self, view: SimView) -> None:
        """Add the bytes of flows finished since the last decision to their coflows' links."""
        seen = self.seen
        if seen.size:
            gone = seen[~view.is_active(seen)]
            if gone.size:
                ks, row = np.unique(view.flow_coflow[gone], return_inverse=True)
                per = self._per_link(view, row.reshape(-1), ks.size, gone, view.sent(gone))
                for i, k in enumerate(ks.tolist()):
                    if k in self.done_bytes:
                        self.done_bytes[k] += per[i]
                    else:
                        self.done_bytes[k] = per[i].copy()
        for k in view.completed_coflows:
            self.done_bytes.pop(k, None)

    def decide(self, view: SimView) -> Allocation:
        if self.kernel is not None:
            new = view.arrived_flows
            if new.size:
                adm = view.coflow_admitted
                fifo = np.array(sorted(np.unique(view.flow_coflow[new]).tolist(),
                                       key=lambda k: (adm[k], k)), np.int64)
                if self.on_routes:
                    route_gate_admit(fifo, view.t, *self.kernel)
                else:
                    pair_gate_admit(fifo, view.t, view.link_a, view.link_b, *self.kernel)
            if self.on_routes:
                return Allocation(stretch=Stretch(route_stretch, view.active_flows(), self.kernel,
                                                  tied=True, series=self.classes.of))
            return Allocation(stretch=Stretch(pair_stretch, view.active_flows(), self.kernel,
                                              tied=True))
        self._finished_bytes(view)
        ks = sorted(view.active_coflows, key=lambda k: (view.coflow_admitted[k], k))
        self.seen = all_f = view.active_flows()
        if not ks:
            return Allocation()
        m = len(ks)
        pos = np.full(view.num_coflows, -1, np.int64)
        pos[ks] = np.arange(m)
        row = pos[view.flow_coflow[all_f]]
        # bytes each coflow sent through each link, its finished flows included
        sent = self._per_link(view, row, m, all_f, view.sent(all_f))
        for i, k in enumerate(ks):
            if k in self.done_bytes:
                sent[i] += self.done_bytes[k]
        present = self._per_link(view, row, m, all_f, np.ones(all_f.size)) > 0
        # what a flow has received crossed every link of its route; "at" the threshold
        # allows a relative REACH_TOL below it (rounding in the running totals)
        heavy = sent >= self.threshold * (1.0 - REACH_TOL)
        light = present & ~heavy
        before: np.ndarray = np.cumsum(light, axis=0) - light
        allowed = present & (before == 0)
        if view.two_link:
            ok = allowed[row, view.link_a[all_f]] & allowed[row, view.link_b[all_f]]
        else:
            blocked = (view.usage(all_f).multiply((~allowed)[row])).sum(axis=1)
            ok = np.asarray(blocked).reshape(-1) == 0
        rates = np.zeros(all_f.size)
        if self.params.spare == "next":
            # the allowed flows share max-min; the coflows not allowed, FIFO, each take
            # max-min rates for their waiting flows on what is left, as strict-priority
            # queues pass unused capacity on (a link with at most SAT of its capacity left
            # counts as full): the strict-priority filling of Aalo's queues
            groups = [np.flatnonzero(ok)] + [np.flatnonzero((row == i) & ~ok) for i in range(m)]
            _, x = strict_rates(view, self.classes, [all_f[g] for g in groups])
            rates[np.concatenate(groups)] = x
        else:
            rates[ok] = max_min_flows(view, self.classes, all_f[ok], view.capacity)
        # the next time a light, running coflow turns heavy on some link
        wake = math.inf
        if ok.any():
            per = self._per_link(view, row, m, all_f, rates)
            grow = light & (per > 0)
            if grow.any():
                dt = (self.threshold - sent[grow]) / per[grow]
                wake = view.t + float(dt.min())
        return Allocation(all_f, rates, wake)
