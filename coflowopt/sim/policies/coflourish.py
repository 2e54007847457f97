"""``coflourish``: Varys' SEBF and MADD over bandwidth estimated from switch feedback.

Coflourish (§III) schedules as Varys does but on an estimate of the bandwidth the
background leaves, built from the switches' congestion registers:

- **Switches** (Algorithms 1-2). Every egress port keeps a register that grows by the
  bytes crossing it and decays by ``1 - alpha`` every ``dre_period`` (ESTCONG, a
  discontinuing rate estimator). Every ``feedback_period`` (``T_FB``) each spine sends a
  leaf its spine-to-leaf register; the leaf sends each of its hosts ``fS`` (the sum of
  the spine-to-leaf registers), ``tS`` (the sum of its leaf-to-spine registers) and
  ``fL`` (the register of its port to that host). The network model keeps the registers
  exactly (:func:`coflowopt.fabric.feedback.dre_advance`) and reports them.
- **Hosts** (Algorithm 3, Eq. 2). Host ``i`` knows its own NIC: ``UL_i`` and ``DL_i`` are
  its links' capacities minus the traffic on them at the report. ``beta = fL / (C -
  DL_i)`` calibrates Eq. 2, ``A = C - Cng / beta``; then ``US_i = min(sC - tS / beta, UL_i)``
  and ``DS_i = min(sC - fS / beta, DL_i)`` with ``sC`` the leaf's total capacity to (from)
  the spines.
- **Scheduler** (Eq. 3, Algorithm 4). ``PathRem(i, j) = min(UL_i, DL_j)`` within a leaf and
  ``min(US_i, DS_j)`` across leaves. Only coflows larger than ``min_size`` (25 MB) are
  scheduled; the others are sent unthrottled and share the links max-min with everything
  the scheduler does not control. SELECT orders the scheduled coflows smallest effective
  bottleneck first (ties, compared as :func:`coflowopt.kernels.ties.order_with_ties`
  compares them, by admission order, as Varys'), gives each its MADD rates on what the
  table has left (SHAREBW), then hands what is left to them in that order (work
  conservation); coflows left without any
  rate are starved (``C_str``). Stages alternate: ``select_period`` (``T_sel``) of CCT
  minimisation, then ``starve_period`` (``T_str``) in which only the starved coflows run,
  as one coflow with MADD rates. A new schedule is made when a scheduled coflow arrives
  or finishes, at a stage change, and when a report moves any entry of the table by more
  than ``bw_threshold`` of a leaf-spine link's capacity (``thld_BW``).

Defaults are the paper's Table III (``T_FB`` 200 ms, ``T_sel`` 2 s, ``T_str`` 200 ms,
``thld_BW`` 1/8 of a spine link, ``alpha`` 0.5, ``T_dre`` 250 us; its ``tau`` = 500 us
enters only through ``beta``, which the hosts calibrate, so it is not a parameter).

Readings where the paper is silent or cannot be taken literally, stated here:

- **Gamma sums per entry.** Eq. 4 reads ``Gamma = max_ij d_ij / PathRem(i, j)`` over host
  pairs. Taken literally, a coflow sending from one host to ten others would give each of
  the ten flows all of that host's uplink. Gamma is computed as Varys' (dissertation
  Eq. 4.1) on the table's entries: each entry (``UL_i``, ``US_i``, ``DL_j``, ``DS_j``)
  divides the coflow's remaining bytes that use it; a flow uses ``UL_i`` and ``DL_j``, and
  across leaves ``US_i`` and ``DS_j`` too. "Update PathRem with rate" subtracts a flow's
  rate from those entries.
- **What the registers count.** Switches count every packet; the scheduler knows what its
  scheduled flows sent, and the register is linear in the traffic, so it takes their
  share out. The registers (and the hosts' NIC readings) therefore count the background
  and the unscheduled coflows, and the table estimates the bandwidth they leave, which is
  what the ideal framework of §II is shown.
- ``beta`` cannot be calibrated while the host's downlink carries none of that traffic
  (``C - DL_i = 0``); it is then a register's steady ratio to its link's rate at the
  report's time (:func:`~coflowopt.fabric.feedback.steady_ratio`: ``dre_period / alpha``
  when reports fall on the decrease ticks, as with the paper's periods).
- The table is per host, as the hosts report it (Table II): a flow's rate is taken from
  its own hosts' entries only, not from the entries of other hosts under the same leaf,
  although they share the leaf's spine links (the network then shares them max-min).
  ``table="leaf"`` keeps one spine-layer entry per leaf and direction instead (``sC -
  tS / beta`` and ``sC - fS / beta``, ``beta`` the mean of the leaf's hosts'), which
  every flow across leaves draws from: the hosts would report their ``LtoSBW`` and
  ``StoLBW`` besides ``US_i`` and ``DS_i``. Ours, not the paper's.
- Work conservation hands what the table has left to the coflows in SEBF order, each
  growing its flows in the ratios of their remaining bytes (water-filling over the
  table's entries, :func:`coflowopt.alloc.max_min`).
- A starvation stage is skipped when no coflow starved, and ends early when every starved
  coflow has finished; coflows that arrive during it wait for the next selection. Either
  way the next CCT-minimisation stage starts with a new SELECT (Algorithm 4, line 21):
  every ``select_period`` at the latest. Flows that the last selection left without a
  rate (a coflow partly served by work conservation is not starved) and whose neighbours
  have finished since are served then; without it a run could wait forever, as a
  randomized check found (no background, one leaf, every coflow scheduled). The stage
  clock starts at the first scheduled coflow and restarts when none is left.
- **Starved coflows progress.** The paper promises every starved coflow "bandwidth
  allocations" in each starvation stage. When the estimate leaves them nothing (an entry
  on their way at its floor: a TCP-like background fills a link whenever they stop, so
  the registers show it full), the stage gives them MADD's rates on the nominal table
  instead, and the network shares the links max-min with the background. Without this, such
  a coflow waited for the background to end, and under Poisson background flows that keep
  a link full, forever. An entry at its floor also counts as empty in SELECT's work
  conservation (which would otherwise hand out that floor, a millionth of the link, and
  call the coflow served).

``estimate="nominal"`` keeps the table at the fabric's capacities (each host's NIC, and
its leaf's spine capacity): Varys' view in the paper's comparison, with the same
25 MB rule and stages. Clairvoyant (sizes, as Varys). Works on the big switch (one leaf)
and on spine-leaf fabrics; a fat-tree or a general graph has no such two-layer feedback
and is refused.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from ... import alloc
from ...errors import InstanceError
from ...fabric.feedback import FeedbackReport, SwitchFeedback, steady_ratio
from ...fabric.network import Network
from ...fabric.topology import SpineLeaf
from ...instance import MB, Fabric
from ...kernels.ties import order_with_ties
from ..engine import Allocation, SimulationError, SimView, check_time_parameter, time_resolution
from . import register
from ._base import Params, Policy, check_choice, check_positive

__all__ = ["Coflourish", "CoflourishParams"]

ESTIMATES = ("feedback", "nominal")
TABLES = ("host", "leaf")

MAX_WAKES = 10_000_000
"""Most periodic wake-ups (stages, and switch reports with the feedback estimate) a run may
need before its last coflow can end: a run of more is refused before it starts (the
periods are the paper's seconds; an instance in another time unit, with times of 1e7 and
more, would otherwise run for hours or days)."""

FLOOR = 1e-6
"""The least fraction of an entry's nominal bandwidth the table holds, so that ratios stay
finite (as :data:`coflowopt.sim.background.SEEN_FLOOR` for an ideal policy)."""


@dataclass(frozen=True, slots=True)
class CoflourishParams(Params):
    feedback_period: float = 0.2
    """``T_FB``: the switches report every this long (s)."""
    select_period: float = 2.0
    """``T_sel``: length of a CCT-minimisation stage (s)."""
    starve_period: float = 0.2
    """``T_str``: length of a starvation-prevention stage (s)."""
    bw_threshold: float = 0.125
    """``thld_BW`` as a fraction of a leaf-spine link's capacity (of a host link's on the
    big switch)."""
    alpha: float = 0.5
    """ESTCONG's decrease factor, in (0, 1)."""
    dre_period: float = 250e-6
    """``T_dre``: the registers decrease every this long (s)."""
    min_size: float = 25 * MB
    """Only coflows larger than this are scheduled (25 MB, MB = 2^20)."""
    estimate: str = "feedback"
    """``feedback`` (Coflourish) or ``nominal`` (the fabric's capacities: Varys' view)."""
    table: str = "host"
    """``host``: PathRem's entries per host, as the hosts report them (Table II); ``leaf``:
    the spine-layer entries per leaf, shared by its hosts (see the module docstring)."""

    def __post_init__(self) -> None:
        for name in ("feedback_period", "select_period", "starve_period", "dre_period"):
            check_positive(getattr(self, name), name)
        check_positive(self.bw_threshold, "bw_threshold", allow_zero=True)
        check_positive(self.min_size, "min_size", allow_zero=True)
        check_positive(self.alpha, "alpha")
        if self.alpha >= 1:
            raise SimulationError(f"parameter alpha must lie in (0, 1), got {self.alpha!r}")
        check_choice(self.estimate, "estimate", ESTIMATES)
        check_choice(self.table, "table", TABLES)


@register
class Coflourish(Policy):
    name = "coflourish"
    summary = "Coflourish: Varys' SEBF + MADD on bandwidth estimated from switch feedback"
    clairvoyant = True
    Params = CoflourishParams

    def __init__(self, params: CoflourishParams) -> None:
        super().__init__(params)
        self.on_flow_completion = False  # SERVECOFLOW runs when coflows arrive or finish
        self.feedback = SwitchFeedback(params.feedback_period, params.alpha, params.dre_period)

    # ------------------------------------------------------------------ set-up

    def start(self, view: SimView) -> None:
        p: CoflourishParams = self.params
        inst = view._e.instance
        # the last coflow ends at the earliest at its release plus its time alone: the
        # periods must be simulable up to there, and not wake the run too often on the way
        end = float(np.max(inst.release + inst.gamma, initial=view.t))
        # a stage starts at least every select_period; the switches report every
        # feedback_period when the estimate is built from their reports
        wakers = ("select_period", "feedback_period") if p.estimate == "feedback" else (
            "select_period",)
        name = min(wakers, key=lambda n: getattr(p, n))
        period = getattr(p, name)
        if (end - view.t) * sum(1.0 / getattr(p, n) for n in wakers) > MAX_WAKES:
            raise InstanceError(  # the instance's time unit: the command line names its file
                f"coflourish would wake every {period:g} (parameter {name}, in the instance's "
                f"time unit, seconds by the paper) until at least {end:.6g}, when the last coflow "
                f"can end: more than {MAX_WAKES:,} times. Give the instance's times in seconds "
                f"or scale the periods to its time unit")
        for name in ("feedback_period", "select_period", "starve_period"):
            check_time_parameter(getattr(p, name), f"parameter {name}", end)
        fabric = inst.fabric  # the layers the feedback comes from
        H = view.num_ports
        cap = np.asarray(view.capacity, dtype=np.float64)
        self.c_up, self.c_dn = cap[:H].copy(), cap[H:2 * H].copy()
        if isinstance(fabric, Fabric):
            leaf = np.zeros(H, np.int64)
            self.up_links = self.dn_links = np.zeros((1, 0), np.int64)
            spine_rate = float(cap[:2 * H].max())
        elif isinstance(fabric, Network) and isinstance(fabric.topology, SpineLeaf):
            topo = fabric.topology
            L, S = topo.leaves, topo.spines
            leaf = np.arange(H, dtype=np.int64) // topo.hosts_per_leaf
            base = 2 * H + np.arange(L, dtype=np.int64)[:, None] * S + np.arange(S)
            self.up_links, self.dn_links = base, base + L * S
            spine_rate = float(topo.spine_rate)
        else:
            kind = getattr(getattr(fabric, "topology", None), "kind", type(fabric).__name__)
            raise InstanceError(  # the instance's fabric: the command line names its file
                f"coflourish estimates bandwidth from a two-layer fabric's feedback (the big "
                f"switch or spine-leaf); this instance is on a {kind} fabric")
        self.leaf = leaf
        nL = int(leaf.max()) + 1 if H else 1
        self.s_up = cap[self.up_links].sum(axis=1) if self.up_links.size else np.full(nL, self.c_up.sum())
        self.s_dn = cap[self.dn_links].sum(axis=1) if self.dn_links.size else np.full(nL, self.c_dn.sum())
        self.threshold = p.bw_threshold * spine_rate
        # the table: UL_i at i, the spine-layer entry of i's uplink side at H + a(i), DL_j at
        # D + j, the spine-layer entry of j's downlink side at D + H + b(j), where for a
        # table per host a(i) = i, b(j) = j (US_i, DS_j) and per leaf the hosts' leaves
        per_leaf = p.table == "leaf"
        side = nL if per_leaf else H
        self.D = D = H + side
        a = leaf if per_leaf else np.arange(H)
        src, dst = view.flow_src, view.flow_dst
        across = leaf[src] != leaf[dst]
        n = src.size
        cols = [src, D + dst, np.where(across, H + a[src], -1), np.where(across, D + H + a[dst], -1)]
        c = np.stack(cols, axis=1)
        keep = c >= 0
        indptr = np.r_[0, np.cumsum(keep.sum(axis=1))]
        self.U = sp.csr_array((np.ones(int(keep.sum())), c[keep], indptr), shape=(n, 2 * D))
        if per_leaf:
            self.nominal = np.concatenate([self.c_up, self.s_up, self.c_dn, self.s_dn])
        else:
            self.nominal = np.concatenate([
                self.c_up, np.minimum(self.s_up[leaf], self.c_up),
                self.c_dn, np.minimum(self.s_dn[leaf], self.c_dn)])
        self.floor = FLOOR * self.nominal
        flows = np.arange(view.num_flows)
        size = np.bincount(view.flow_coflow, view.size(flows), minlength=view.num_coflows)
        self.large = size > p.min_size
        self.rate = np.zeros(view.num_flows)
        self.table = self.nominal.copy()  # the estimate now
        self.table_used = self.nominal.copy()  # the estimate of the schedule in force
        self.report_time = -math.inf
        self.stage = "select"
        self.stage_end = math.inf
        self.starved: list[int] = []
        self.selections = {"coflows": 0, "bandwidth": 0, "stage": 0}
        self.starved_on_nominal = 0

    # ------------------------------------------------------------------ the estimate

    def _estimate(self, rep: FeedbackReport) -> np.ndarray:
        """The table from a report (Algorithm 3 at every host, Eq. 2)."""
        p: CoflourishParams = self.params
        H, D = self.c_up.size, self.D
        g, u = rep.congestion, rep.load
        table = self.nominal.copy()  # one leaf: the spine-layer entries are never used
        table[:H] = UL = self.c_up - u[:H]
        table[D:D + H] = DL = self.c_dn - u[H:2 * H]
        if self.up_links.size:
            used = u[H:2 * H]
            fL = g[H:2 * H]
            calibrated = used > FLOOR * self.c_dn
            beta = np.full(H, steady_ratio(rep.time, p.alpha, p.dre_period))
            beta[calibrated] = fL[calibrated] / used[calibrated]
            beta = np.maximum(beta, 1e-300)
            tS = g[self.up_links].sum(axis=1)
            fS = g[self.dn_links].sum(axis=1)
            if p.table == "leaf":
                # one beta a leaf: the mean of its hosts' (each calibrates the same registers)
                nL = tS.size
                cnt = np.bincount(self.leaf, minlength=nL)
                b = np.bincount(self.leaf, beta, minlength=nL) / np.maximum(cnt, 1)
                table[H:D] = self.s_up - tS / b
                table[D + H:] = self.s_dn - fS / b
            else:
                table[H:D] = np.minimum(self.s_up[self.leaf] - tS[self.leaf] / beta, UL)
                table[D + H:] = np.minimum(self.s_dn[self.leaf] - fS[self.leaf] / beta, DL)
        return np.maximum(table, self.floor)

    def _read_feedback(self, view: SimView) -> bool:
        """Take a new report; True when it moved the table past the threshold."""
        if self.params.estimate == "nominal":
            return False
        rep: FeedbackReport | None = view.feedback  # type: ignore[attr-defined]
        if rep is None or rep.time <= self.report_time:
            return False
        self.report_time = rep.time
        self.table = self._estimate(rep)
        return bool(np.max(np.abs(self.table - self.table_used)) > self.threshold)

    # ------------------------------------------------------------------ Algorithm 4

    def _share(self, u: sp.csr_array, rem: np.ndarray, residual: np.ndarray) -> np.ndarray:
        """SHAREBW for one coflow (its flows' rows ``u`` of the table's incidence): MADD on
        the table's residual, which it updates."""
        need = u.T @ rem > 0
        if np.any(residual[need] <= self.floor[need]):
            return np.zeros(rem.size)
        x, gamma = alloc.madd(u, rem, residual)
        if not math.isfinite(gamma) or gamma <= 0:
            return np.zeros(rem.size)
        self._take(u, x, residual)
        return x

    def _take(self, u: sp.csr_array, x: np.ndarray, residual: np.ndarray) -> None:
        residual -= u.T @ x
        residual[residual <= self.floor] = 0.0

    @staticmethod
    def _backfill(u: sp.csr_array, rem: np.ndarray, residual: np.ndarray) -> np.ndarray:
        """Max-min of what the table has left, weighted by the bytes each flow has left. A
        flow with none left (it ends at this instant, within the engine's tolerance, or has
        size 0) has no weight and asks for nothing: on the Facebook trace placed on a
        spine-leaf fabric such flows reached the filling, which takes positive weights only."""
        live = rem > 0
        if live.all():
            return alloc.max_min(u, residual, weights=rem)
        x = np.zeros(rem.size)
        if live.any():
            x[live] = alloc.max_min(u[live], residual, weights=rem[live])
        return x

    def _select(self, view: SimView, ks: list[int]) -> None:
        """SELECT: SEBF order, SHAREBW, the rest of the table in that order; the starved."""
        table = self.table
        flows = [view.flows_of(k) for k in ks]
        rems = [view.remaining(f) for f in flows]
        us = [self.U[f] for f in flows]
        keys = np.array([float(np.max((u.T @ r) / table)) for u, r in zip(us, rems, strict=True)])
        order = order_with_ties(keys)
        residual = np.where(table > self.floor, table, 0.0)  # an entry at its floor has nothing
        got = [self._share(us[i], rems[i], residual) for i in order]
        for j, i in enumerate(order):
            if not (residual > 0).any():
                break
            x = self._backfill(us[i], rems[i], residual)
            got[j] = got[j] + x
            self._take(us[i], x, residual)
        self.starved = [ks[i] for j, i in enumerate(order) if not got[j].any()]
        for j, i in enumerate(order):
            self.rate[flows[i]] = got[j]
        self.table_used = table.copy()

    def _feed_starved(self, view: SimView, ks: list[int]) -> None:
        """The starvation stage: the scheduled coflows stop; the starved run as one."""
        for k in ks:
            self.rate[view.flows_of(k)] = 0.0
        live = [k for k in self.starved if k in set(ks)]
        if live:
            f = np.concatenate([view.flows_of(k) for k in live])
            u, rem = self.U[f], view.remaining(f)
            x = self._share(u, rem, self.table.copy())
            if not x.any():  # the estimate leaves them nothing: MADD on the nominal table
                x = self._share(u, rem, self.nominal.copy())
                self.starved_on_nominal += 1
            self.rate[f] = x
        self.table_used = self.table.copy()

    def decide(self, view: SimView) -> Allocation:
        p: CoflourishParams = self.params
        t = view.t
        tol = time_resolution(t)
        active = view.active_flows()
        ks = [k for k in view.active_coflows if self.large[k]]
        moved = self._read_feedback(view)
        if not ks:
            self.stage, self.stage_end, self.starved = "select", math.inf, []
            return Allocation(active, self._rates(view, active), math.inf)
        arrived = view.arrived_flows
        changed = bool(
            (arrived.size and self.large[view.flow_coflow[arrived]].any())
            or any(self.large[k] for k in view.completed_coflows))
        if self.stage == "starve" and not set(self.starved) & set(ks):
            self.stage_end = t  # every starved coflow has finished: the stage ends now
        switched = False
        if self.stage_end == math.inf:
            self.stage_end = t + p.select_period  # the first scheduled coflow starts the clock
        elif self.stage_end <= t + tol:  # a stage starts: a new schedule either way
            switched = True
            if self.stage == "select" and set(self.starved) & set(ks):
                self.stage, self.stage_end = "starve", t + p.starve_period
            else:  # nobody starved: the next CCT-minimisation stage, with a new SELECT
                self.stage, self.stage_end = "select", t + p.select_period
        if self.stage == "select":
            if changed or moved or switched:
                key = "stage" if switched else "coflows" if changed else "bandwidth"
                self.selections[key] += 1
                self._select(view, ks)
        elif changed or moved or switched:
            self._feed_starved(view, ks)
        wake = self.stage_end
        if p.estimate == "feedback":
            wake = min(wake, (self.feedback.reports_until(t) + 1) * p.feedback_period)
        return Allocation(active, self._rates(view, active), wake)

    def _rates(self, view: SimView, active: np.ndarray) -> np.ndarray:
        """What the scheduler asks for: its rates, and no limit for unscheduled flows."""
        r = self.rate[active]
        return np.where(self.large[view.flow_coflow[active]], r, math.inf)

    def finish(self, view: SimView) -> dict[str, Any]:
        return {"coflourish_selections": dict(self.selections),
                "coflourish_starved_on_nominal": self.starved_on_nominal}
