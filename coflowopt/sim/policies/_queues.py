"""Multi-level coflow queues: the allocation shared by ``aalo`` and ``mcs``.

Aalo's D-CLAS (dissertation §6.5.4, Pseudocode 4) and MCS (which "directly
adopts the priority queues of Aalo") schedule at three granularities:

- among flows of a coflow: max-min fairness (line 6);
- among coflows of a queue: FIFO (line 4): each coflow in turn takes what
  the coflows before it in the queue left;
- among queues: weighted sharing (lines 15-19) or strict priority.

Strict priority is sequential: queue by queue, coflow by coflow, each coflow
gets the max-min fair rates of its flows on what is left of every link. On
networks :func:`strict_rates` runs the whole sequence in one compiled call per
decision (:mod:`coflowopt.sim.kernels.queues`, the same arithmetic);
``simulate(..., compiled=False)`` runs the reference, ``_strict``.

Weighted sharing follows Pseudocode 4's loop "while the fabric is not
saturated" as rounds: in each round every link's spare capacity is split
among the queues that have a flow on it that can still grow, in proportion
to their weights (line 17: ``Q_i.share = Q_i.weight / W``); each queue fills
its shares FIFO with max-min inside each coflow (a share left below ``SAT``
of the link's capacity counts as used up); what a queue cannot use
stays spare and is split again in the next round among the queues that can
(line 10 / 19: unused share goes to the other queues by weighted max-min).
Rounds stop when no rate grows by more than a relative 1e-9, after at most
``MAX_ROUNDS``; a final strict-priority pass hands out any remainder so the
allocation is work-conserving. A coflow's rates are the sum of its max-min
rates over the rounds and that pass: not necessarily max-min over its flows
(see :mod:`.aalo`, "Deviations").
"""

from __future__ import annotations

import numpy as np

from ..engine import SimView
from ..kernels.queues import strict_fill
from ._common import SAT, RouteClasses, max_min_flows

__all__ = ["MAX_QUEUES", "MAX_ROUNDS", "queue_rates", "strict_rates"]

MAX_ROUNDS = 8

MAX_QUEUES = 64
"""The most queues ``aalo`` and ``mcs`` accept (the Aalo and MCS papers use 10; MCS's theory tools too
stop at 64)."""


def _usable(view: SimView, flows: np.ndarray, dead: np.ndarray) -> np.ndarray:
    """Flows whose every link still has capacity."""
    if view.two_link:
        return ~(dead[view.link_a[flows]] | dead[view.link_b[flows]])
    hit = view.usage(flows) @ dead.astype(float)
    return hit == 0


def strict_rates(
    view: SimView, classes: RouteClasses, order: list[np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """Strict priority over groups of flows on the full capacity: each group's flows share
    max-min what the groups before it left; returns the flows (concatenated) and their rates.

    Compiled on networks (:func:`coflowopt.sim.kernels.queues.strict_fill`, the same steps
    and arithmetic in one call); ``simulate(..., compiled=False)`` and the big switch run
    :func:`_strict`.
    """
    if not order:
        return np.zeros(0, np.int64), np.zeros(0)
    flows = np.concatenate(order).astype(np.int64, copy=False)
    if view.compiled and not view.two_link:
        return flows, _strict_fill(view, classes, order, flows)
    rates = [np.zeros(f.size) for f in order]
    _strict(view, classes, order, view.capacity.astype(float).copy(), rates)
    return flows, np.concatenate(rates)


def _strict_fill(
    view: SimView, classes: RouteClasses, order: list[np.ndarray], flows: np.ndarray
) -> np.ndarray:
    """The compiled filling of :func:`strict_rates`, resumed from the last one
    (``classes.strict``) at the first group that is not the same as there."""
    m = classes.strict
    G = len(order)
    gptr = np.zeros(G + 1, np.int64)
    np.cumsum([f.size for f in order], out=gptr[1:])
    indptr = view.route_csr[0]
    start = 0
    if (m.cap is not None and m.routes is indptr
            and np.array_equal(m.cap, view.capacity)):
        pg, pf = m.gptr, m.flows
        last = min(G, pg.size - 1)
        while (start < last and pg[start + 1] == gptr[start + 1]
               and np.array_equal(pf[pg[start]:pg[start + 1]], flows[gptr[start]:gptr[start + 1]])):
            start += 1
        undo_end = int(m.lptr[-1])
    else:
        m.cap = view.capacity.copy()
        m.routes = indptr
        m.residual = view.capacity.astype(float)
        m.lptr = np.zeros(1, np.int64)
        m.alv = np.zeros(1, np.int64)
        undo_end = 0
    lptr = np.empty(G + 1, np.int64)
    lptr[:start + 1] = m.lptr[:start + 1]
    alv = np.empty(G + 1, np.int64)
    alv[:start + 1] = m.alv[:start + 1]
    x = np.empty(flows.size)
    x[:gptr[start]] = m.x[:gptr[start]]
    rest = flows[gptr[start]:]
    need = int(lptr[start]) + int((indptr[rest + 1] - indptr[rest]).sum())
    if m.log_k.size < need:
        # room for the log kept (up to undo_end: the kernel undoes it) and what comes
        grow = max(need, 2 * m.log_k.size)
        m.log_k = np.concatenate([m.log_k[:undo_end], np.empty(grow - undo_end, np.int64)])
        m.log_r = np.concatenate([m.log_r[:undo_end], np.empty(grow - undo_end)])
    u = classes.usage
    cap, m.cap = m.cap, None  # a call that does not return leaves nothing to resume from
    strict_fill(*view.route_csr, flows, gptr, classes.of, u.indptr, u.indices, u.data,
                view.capacity, m.residual, SAT, x, classes.slot, classes.count_scratch,
                classes.link_scratch, start, lptr, alv, m.log_k, m.log_r, undo_end)
    m.cap, m.flows, m.gptr, m.x, m.lptr, m.alv = cap, flows.copy(), gptr, x, lptr, alv
    return x.copy()


def _strict(
    view: SimView, classes: RouteClasses, order: list[np.ndarray], residual: np.ndarray,
    rates: list[np.ndarray],
) -> None:
    """The reference of :func:`strict_rates` (``rates[i]`` grows by group ``i``'s rates,
    ``residual`` falls by their use of every link), and the final pass of weighted sharing."""
    cap = view.capacity
    for i, f in enumerate(order):
        if f.size == 0:
            continue
        dead = residual <= SAT * cap
        if dead.all():
            return
        ok = _usable(view, f, dead)
        if not ok.any():
            continue
        g = f[ok] if not ok.all() else f
        x = max_min_flows(view, classes, g, np.where(dead, 0.0, residual))
        if ok.all():
            rates[i] = rates[i] + x
        else:
            add = np.zeros(f.size)
            add[ok] = x
            rates[i] = rates[i] + add
        residual -= view.link_sum(g, x)
        np.maximum(residual, 0.0, out=residual)


def queue_rates(
    view: SimView,
    classes: RouteClasses,
    queues: list[list[int]],
    weights: np.ndarray | None,
) -> tuple[np.ndarray, np.ndarray]:
    """Rates of every active flow given coflows per queue (FIFO order within).

    ``weights[i]`` is queue ``i``'s weight; ``None`` means strict priority
    (queue 0 first).
    """
    ks = [k for q in queues for k in q]
    flows = [view.flows_of(k) for k in ks]
    if weights is None or len([q for q in queues if q]) <= 1:
        return strict_rates(view, classes, flows)
    rates = [np.zeros(f.size) for f in flows]
    residual = view.capacity.astype(float).copy()
    cap = view.capacity
    qid = np.concatenate([np.full(len(q), i) for i, q in enumerate(queues)]).astype(int)
    for _ in range(MAX_ROUNDS):
        dead = residual <= SAT * cap
        if dead.all():
            break
        live = [_usable(view, f, dead) if f.size else np.zeros(0, bool) for f in flows]
        present = np.zeros((len(queues), view.num_links), bool)
        for i, (f, ok) in enumerate(zip(flows, live, strict=True)):
            if ok.any():
                present[qid[i]] |= view.link_sum(f[ok], np.ones(int(ok.sum()))) > 0
        wl = weights[:, None] * present
        total = wl.sum(axis=0)
        if not total.any():
            break
        with np.errstate(invalid="ignore", divide="ignore"):
            share = np.where(total > 0, wl / total, 0.0) * residual
        grew = 0.0
        used = np.zeros(view.num_links)
        for i, (f, ok) in enumerate(zip(flows, live, strict=True)):
            if not ok.any():
                continue
            b = share[qid[i]]
            g = f[ok]
            # what is left of a share below SAT of the link is rounding, not capacity
            x = max_min_flows(view, classes, g, np.where(b > SAT * cap, b, 0.0))
            if not x.any():
                continue
            add = np.zeros(f.size)
            add[ok] = x
            rates[i] = rates[i] + add
            u = view.link_sum(g, x)
            b -= u
            used += u
            grew = max(grew, float((u / cap).max()))
        residual -= used
        np.maximum(residual, 0.0, out=residual)
        if grew <= 1e-9:
            break
    _strict(view, classes, flows, residual, rates)
    if not flows:
        return np.zeros(0, np.int64), np.zeros(0)
    return np.concatenate(flows), np.concatenate(rates)
