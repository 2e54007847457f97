"""Greedy order-preserving rates over time, compiled (priority policies).

For a priority order of flows, the greedy allocation
(:func:`coflowopt.alloc.greedy`) gives each flow, in order, all the
capacity its two links still have. When every link has the same capacity
``c`` this is a matching: each flow runs at ``c`` or not at all, and a flow
runs exactly when no flow earlier in the order runs on either of its links.

This kernel keeps that matching up to date across flow completions instead
of recomputing it: when a running flow completes, each of its links is
offered to the later flows on it, in order; the first one whose other link
is free, or held by a flow later than itself, takes the link (pre-empting
the later holders, whose other links are offered in turn). Offers are
processed in priority order, so the result is the same matching the
greedy recomputation gives, at a cost proportional to the flows looked at
rather than to all admitted flows.

Scope: two-link routes with coefficient 1 and one capacity for all links
(the big switch with uniform ports, e.g. the Facebook trace). The engine
uses its reference path otherwise.
"""

from __future__ import annotations

import heapq

import numpy as np

from ..._jit import njit
from ._common import EVENT, next_event, served

__all__ = ["greedy_uniform_stretch"]


@njit
def _lists(A, B, L):  # type: ignore[no-untyped-def]
    """For positions ``0..n-1``: the positions on each link, in position order (CSR)."""
    n = A.size
    cnt = np.zeros(L + 1, np.int64)
    for i in range(n):
        cnt[A[i] + 1] += 1
        cnt[B[i] + 1] += 1
    ptr = np.cumsum(cnt)
    fill = ptr[:-1].copy()
    lst = np.empty(2 * n, np.int64)
    for i in range(n):
        lst[fill[A[i]]] = i
        fill[A[i]] += 1
        lst[fill[B[i]]] = i
        fill[B[i]] += 1
    return ptr, lst


@njit
def greedy_uniform_stretch(  # type: ignore[no-untyped-def]
    t0, t_stop, tol, act, la, lb, L, cap, size, sent, fco, cf_left, start,
    record, max_pieces, rate_out, done_f, done_t, pc_f, pc_t0, pc_t1, pc_r, lv_u, lv_t, lv_x,
):
    """Advance the greedy matching of ``act`` (priority order) from ``t0``.

    Returns ``(t, thr, n_done, n_pieces, n_levels, n_events, reason)``: the time reached,
    the threshold of the last event (its time plus the tolerance: the engine
    admits what is due by it) and why it stopped (0: ``t_stop`` reached, 1: a
    coflow completed, 2: record buffer nearly full, 3: nothing runs and
    ``t_stop`` is infinite). ``sent`` and
    ``rate_out`` are exact at ``t`` for the flows of ``act``; completed flows
    are in ``done_f``/``done_t``; pieces (rate ``c``) in ``pc_*`` (no level changes:
    ``lv_*`` stay unused).
    """
    n = act.size
    c = cap[0]
    A = np.empty(n, np.int64)
    B = np.empty(n, np.int64)
    for i in range(n):
        A[i] = la[act[i]]
        B[i] = lb[act[i]]
    ptr, lst = _lists(A, B, L)
    running = np.zeros(n, np.bool_)
    alive = np.ones(n, np.bool_)
    tstart = np.zeros(n)
    fin = np.full(n, np.inf)
    owner = np.full(L, -1, np.int64)
    heap = [(np.inf, np.int64(-1))]
    heap.pop()
    offers = [(np.int64(0), np.int64(0))]
    offers.pop()
    t = t0
    nd = 0
    npc = np.int64(0)  # not the literal 0: its callees compile once, for int64
    nev = 0

    # the allocation at t0, from scratch
    for i in range(n):
        if owner[A[i]] < 0 and owner[B[i]] < 0:
            owner[A[i]] = i
            owner[B[i]] = i
            running[i] = True
            tstart[i] = t
            f = act[i]
            fin[i] = t + max(size[f] - sent[f], 0.0) / c
            heapq.heappush(heap, (fin[i], np.int64(i)))

    reason = 0
    while True:
        while len(heap) > 0 and (not running[heap[0][1]] or heap[0][0] != fin[heap[0][1]]):
            heapq.heappop(heap)
        t_fin = heap[0][0] if len(heap) > 0 else np.inf
        t_next, thr, why = next_event(t_fin, t_stop, tol)
        if why != EVENT:
            if why == 0:
                t = t_next
                nev += 1  # the engine's event at t_stop (an admission or a wake-up)
            reason = why
            break
        # every completion at this event, together
        nev += 1
        t_new = t_next
        coflow_done = False
        while len(heap) > 0 and heap[0][0] <= thr:
            tf, i = heapq.heappop(heap)
            if not running[i] or tf != fin[i]:
                continue
            f = act[i]
            running[i] = False
            alive[i] = False
            npc = served(f, tstart[i], tf, c, fco, start, record, npc, pc_f, pc_t0, pc_t1, pc_r)
            sent[f] = size[f]
            done_f[nd] = f
            done_t[nd] = tf
            nd += 1
            if tf > t_new:
                t_new = tf
            owner[A[i]] = -1
            owner[B[i]] = -1
            heapq.heappush(offers, (np.int64(i), A[i]))
            heapq.heappush(offers, (np.int64(i), B[i]))
            k = fco[f]
            cf_left[k] -= 1
            if cf_left[k] == 0:
                coflow_done = True
        t = t_new
        if t_stop <= thr or coflow_done or (record and npc > max_pieces - 2 * n - 4):
            # the engine decides (or admits) now; it restarts from the greedy allocation
            offers.clear()
            reason = 0 if t_stop <= thr else (1 if coflow_done else 2)
            break
        # offer the freed links, earliest position first
        while len(offers) > 0:
            p, link = heapq.heappop(offers)
            o = owner[link]
            if o >= 0 and o <= p:
                continue
            # first later flow on this link that may take it
            lo = ptr[link]
            hi = ptr[link + 1]
            while lo < hi:
                mid = (lo + hi) // 2
                if lst[mid] <= p:
                    lo = mid + 1
                else:
                    hi = mid
            for j in range(lo, ptr[link + 1]):
                g = lst[j]
                if not alive[g]:
                    continue
                if running[g]:
                    break
                m = B[g] if A[g] == link else A[g]
                om = owner[m]
                if om >= 0 and om < g:
                    continue
                hl = owner[link]
                for h in (hl, om):
                    if h < 0:
                        continue
                    # pre-empt a later holder; its link other than the one g takes is offered
                    fh = act[h]
                    if not running[h]:
                        continue  # the same flow held both of g's links: stopped already
                    running[h] = False
                    sent[fh] += c * (t - tstart[h])
                    npc = served(fh, tstart[h], t, c, fco, start, record, npc, pc_f, pc_t0, pc_t1, pc_r)
                    owner[A[h]] = -1
                    owner[B[h]] = -1
                    taken = link if h == hl else m
                    other = B[h] if A[h] == taken else A[h]
                    if other != link and other != m:
                        heapq.heappush(offers, (np.int64(h), other))
                owner[link] = g
                owner[m] = g
                running[g] = True
                tstart[g] = t
                fg = act[g]
                fin[g] = t + max(size[fg] - sent[fg], 0.0) / c
                heapq.heappush(heap, (fin[g], np.int64(g)))
                break

    # close the running pieces at t; report the rates from t on
    for i in range(n):
        f = act[i]
        if running[i]:
            npc = served(f, tstart[i], t, c, fco, start, record, npc, pc_f, pc_t0, pc_t1, pc_r)
            sent[f] += c * (t - tstart[i])
            rate_out[f] = c
        else:
            rate_out[f] = 0.0
    return t, thr, nd, npc, 0, nev, reason
