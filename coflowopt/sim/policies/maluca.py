"""``maluca``: largest-load-first across uplinks, smallest-time-first within a link.

Maluca (Jiang et al., "Maximizing Link Utilization with Coflow-Aware Scheduling in
Datacenter Networks"), Algorithm 1 and §IV-B/C, invoked
"whenever a new coflow arrives in, or an old coflow departs from the
network" (``reschedule="coflow"``, default):

1. LARGESTLOADFIRST: uplinks sorted by decreasing current load, the data
   still to send through them divided by their capacity (Eq. 12); ties by
   port index (loads are compared at 30 significant bits, so that rounding
   in remaining data does not break a tie, see
   :data:`coflowopt.kernels.ties.TIE_BITS`; the same for ``T_k``).
2. SMALLESTTIMEFIRST, uplink by uplink in that order: the coflows with data
   on the uplink sorted by ``T_k``, their remaining isolation time (line 9:
   the largest remaining load of the coflow on any uplink or downlink over
   its capacity; ties by admission order). In that order, strict priority:
   the ``n_i^p`` flows of coflow ``p`` on uplink ``i`` each get
   ``min(B_R(P_i) / n_i^p, B_R(P_j) / n_j^p)`` (line 15, "flows belonging to
   the same coflow on a given link equally share the available
   bandwidth"), where ``n_j^p`` counts ``p``'s flows into downlink ``j`` and
   ``B_R`` is what earlier allocations left (read before ``p``'s turn on
   this uplink). What a link has left below ``SAT`` of its capacity is
   rounding and counts as nothing (else a coflow could crawl at 1e-17 and no
   coflow event would ever re-decide).
3. Soft reservation (§IV-C): "each uplink softly reserves a portion of
   bandwidth (α) for flows belonging to low priority coflows". The strict
   pass of step 2 may use only ``(1 - α)`` of the uplink; what is left of
   the uplink (at least ``α B_i``) is then shared equally among the flows on
   it whose coflows got nothing in step 2, each also limited to an equal
   share of its downlink's remainder among those flows. This happens uplink
   by uplink inside the largest-load-first loop (Algorithm 1, lines 28-29:
   one call per uplink): right after an uplink's strict pass, before the
   next uplink's, so a busier uplink's reserved share can take a downlink's
   remainder before a less busy uplink's strict pass reads it. The paper
   leaves the exact sharing rule and its place open; this is our reading (an
   independent simulator that instead ran the reservation as one pass after
   every uplink's strict pass differed by up to 15% in completion times on
   trace subsets). α = 0.1 as in §V.
4. BACKFILLING (lines 18-24): uplinks in the same order, coflows in the same
   order, flows by index, each flow adds ``min`` of what its uplink and its
   downlink still have. A deviation from the letter of line 19 (``for i = 1 :
   m``, uplinks by index; line 21 leaves the order of flows open): we follow
   §IV-C's "other flows then utilize the remaining bandwidth according to
   their priorities", so the busier uplinks backfill first. The two differ
   when uplinks compete for a downlink's spare capacity.

Between decisions the rates stay fixed, so with ``reschedule="coflow"`` a
finished flow's bandwidth stays idle until a coflow arrives or departs: the
schedule is not dense, and the paper's claim that Maluca is 2-approximate in
makespan offline with identical links fails for it, without bound
(``proofs/test_maluca_2_approx.py``: 2 ports, makespan 496 against an
optimum of 102; a family tends to ``(n + 1)^2``). With
``reschedule="flow"`` (re-decided at every flow completion) it is dense, and
makespan <= 2 x optimum held on every instance checked there (2 - 1/m on a
family: the factor is tight). The paper's other claims, checked in
``proofs/test_maluca_claims.py``: work conservation holds at each decision,
but not in between with ``reschedule="coflow"``; with alpha > 0 every flow
whose downlink has room gets a rate at each decision, yet a flow whose
downlink a busier uplink keeps full starves for as long as that uplink stays
busier, for every alpha (aging orders uplinks only; the reservation is per
uplink), against the claim of starvation freedom.

Maluca is defined on access links (an uplink and a downlink per flow). On a
multi-hop fabric a flow's uplink is its host's uplink and its "downlinks" are
all the other links of its path: ``n_j^p`` counts coflow ``p``'s flows on each
(by their share of it, under ``spray``), a flow's strict and reserved offers
are the least over those links, and backfilling fills whole paths. The
compiled decision covers two-link fabrics; on others the NumPy reference runs.

A decision runs in compiled code (:func:`coflowopt.sim.kernels.maluca.maluca_rates`,
the same arithmetic to the last bit); ``simulate(..., compiled=False)`` runs
the NumPy code of :meth:`Maluca.decide`, the reference.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ... import alloc
from ...kernels.ties import order_with_ties
from ..engine import Allocation, SimulationError, SimView
from ..kernels.maluca import maluca_rates
from . import register
from ._base import Params, Policy, check_choice, check_positive
from ._common import SAT


def _room(residual: np.ndarray, cap: np.ndarray, links: np.ndarray) -> np.ndarray:
    """What ``links`` have left, with a remainder below ``SAT`` of capacity counted as none."""
    x = residual[links]
    return np.where(x > SAT * cap[links], x, 0.0)


@dataclass(frozen=True, slots=True)
class MalucaParams(Params):
    alpha: float = 0.1
    """Fraction of each uplink softly reserved for low-priority coflows (0 <= alpha < 1)."""
    reschedule: str = "coflow"
    """Re-allocate on coflow arrivals/departures ("coflow", the paper) or every flow event."""

    def __post_init__(self) -> None:
        check_positive(self.alpha, "alpha", allow_zero=True)
        if self.alpha >= 1:
            raise SimulationError(f"parameter alpha must be below 1, got {self.alpha!r}")
        check_choice(self.reschedule, "reschedule", ("coflow", "flow"))


@register
class Maluca(Policy):
    name = "maluca"
    summary = "largest-load-first uplinks, smallest-remaining-time coflows, backfilling"
    clairvoyant = True
    Params = MalucaParams

    def start(self, view: SimView) -> None:
        self.on_flow_completion = self.params.reschedule == "flow"
        self._iwork = np.zeros(0, np.int64)  # scratch space of the compiled allocation
        self._fwork = np.zeros(0)

    def decide(self, view: SimView) -> Allocation:
        p: MalucaParams = self.params
        ks = list(view.active_coflows)
        if not ks:
            return Allocation()
        cap = view.capacity
        L = view.num_links
        flows = [view.flows_of(k) for k in ks]
        f = np.concatenate(flows)
        n = f.size
        if n == 0:
            return Allocation()
        if view.compiled_two_link:
            # the same arithmetic in compiled code (the rest of this method is the reference)
            kptr = np.zeros(len(ks) + 1, np.int64)
            np.cumsum([x.size for x in flows], out=kptr[1:])
            if self._fwork.size < 2 * n:
                self._iwork = np.empty(12 * n, np.int64)
                self._fwork = np.empty(4 * n)
            rates = maluca_rates(
                kptr, view.remaining(f), view.link_a[f], view.link_b[f],
                np.ascontiguousarray(cap, dtype=np.float64), float(p.alpha), SAT,
                self._iwork, self._fwork,
            )
            return Allocation(f, rates, math.inf)
        kloc = np.repeat(np.arange(len(ks)), [x.size for x in flows])
        rem = view.remaining(f)
        # a flow's uplink is its host's (link src on every fabric); its "downlinks" are the
        # other links of its path: on the big switch the one downlink, on a network every
        # link after the uplink, each counted by the flow's share of it
        up = view.flow_src[f]
        use = view.usage(f).tocsr()
        rows = np.repeat(np.arange(n), np.diff(use.indptr))
        links = np.asarray(use.indices, np.int64)
        share = np.asarray(use.data, np.float64)
        down_side = links != up[rows]
        other = sp.csr_array((share[down_side], links[down_side],
                              np.r_[0, np.cumsum(np.bincount(rows[down_side], minlength=n))]),
                             shape=(n, L))
        # T_k: remaining isolation time of each coflow (line 9)
        loads = np.zeros((len(ks), L))
        np.add.at(loads, (kloc[rows], links), rem[rows] * share)
        T = (loads / cap).max(axis=1)
        trank = np.empty(len(ks), np.int64)
        trank[order_with_ties(T)] = np.arange(len(ks))
        # uplinks by decreasing current load (Eq. 12)
        uload = np.bincount(up, rem, minlength=L) / cap
        urank = np.empty(L, np.int64)
        urank[order_with_ties(-uload)] = np.arange(L)
        order = np.lexsort((f, trank[kloc], urank[up]))
        # n_j^p: flows of each coflow on each of its downlinks
        orows = np.repeat(np.arange(n), np.diff(other.indptr))
        ndown = np.bincount(kloc[orows] * L + other.indices, weights=other.data,
                            minlength=len(ks) * L)
        residual = cap.astype(float).copy()
        rates = np.zeros(n)
        su, sk = up[order], kloc[order]
        cut = np.flatnonzero((su[1:] != su[:-1]) | (sk[1:] != sk[:-1])) + 1
        starts = np.r_[0, cut]
        ends = np.r_[cut, n]
        seg_up = su[starts]
        ustart = np.r_[0, np.flatnonzero(seg_up[1:] != seg_up[:-1]) + 1]
        uend = np.r_[ustart[1:], seg_up.size]
        alpha = p.alpha
        for a, b in zip(ustart, uend, strict=True):
            i = int(seg_up[a])
            budget = (1.0 - alpha) * residual[i]
            low = []
            # downlinks only fill up while this uplink is served, so a segment none of
            # whose flows has room on all its downlinks now gets nothing in the strict
            # pass: skip it cheaply
            lo_pos, hi_pos = int(starts[a]), int(ends[b - 1])
            sub = other[order[lo_pos:hi_pos]]
            room = (residual[sub.indices] > SAT * cap[sub.indices]).astype(np.int64)
            flow_room = np.minimum.reduceat(room, sub.indptr[:-1])
            seg_room = np.add.reduceat(flow_room, starts[a:b] - lo_pos) > 0
            for s_, has_room in zip(range(a, b), seg_room.tolist(), strict=True):
                pos = order[starts[s_] : ends[s_]]
                if not has_room or budget <= SAT * cap[i]:
                    low.append(pos)
                    continue
                d = other[pos]
                k = int(kloc[pos[0]])
                # a downlink left below SAT of its capacity has no room (that is rounding)
                offer = _room(residual, cap, d.indices) / ndown[k * L + d.indices]
                r = np.minimum(budget / pos.size, np.minimum.reduceat(offer, d.indptr[:-1]))
                r = np.maximum(r, 0.0)
                if not r.any():
                    low.append(pos)
                    continue
                rates[pos] = r
                budget -= r.sum()
                residual[i] -= r.sum()
                np.subtract.at(residual, d.indices, np.repeat(r, np.diff(d.indptr)) * d.data)
            if low and residual[i] > SAT * cap[i]:
                pos = np.concatenate(low)
                d = other[pos]
                m = np.bincount(d.indices, weights=d.data, minlength=L)[d.indices]
                offer = _room(residual, cap, d.indices) / m
                r = np.minimum(residual[i] / pos.size, np.minimum.reduceat(offer, d.indptr[:-1]))
                rates[pos] = r
                residual[i] -= r.sum()
                np.subtract.at(residual, d.indices, np.repeat(r, np.diff(d.indptr)) * d.data)
            np.maximum(residual, 0.0, out=residual)
        # backfilling: every flow in the same order takes what its links have left
        residual[residual <= SAT * cap] = 0.0
        if residual.any():
            rates[order] += alloc.greedy(view.usage(f[order]), residual, np.arange(n))
        return Allocation(f, rates, math.inf)
