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
(the big switch with uniform ports, e.g. the Facebook trace).

On any other fabric (multi-hop routes, fractional coefficients, capacities that
differ) a flow's greedy rate is a fraction of its links' residuals, and a
completion can move any later rate: :func:`greedy_csr_stretch` keeps, for every
flow and link of its route, the link's residual before the flow, and carries the
change a completion makes down each link's later flows, in order, recomputing their
rates with the arithmetic of :func:`coflowopt.alloc.greedy`, until a flow leaves the
link as it was, where a recomputation would pass over every flow of the order at
every completion.
"""

from __future__ import annotations

import heapq

import numpy as np

from ..._jit import njit
from ...kernels.rates import FULL
from ._common import EVENT, completed, earliest, next_event, served

__all__ = ["greedy_csr_state", "greedy_csr_stretch", "greedy_uniform_state",
           "greedy_uniform_stretch"]


def _history(F: int) -> tuple[np.ndarray, ...]:
    """The flows' history a greedy stretch keeps from one call to the next (``F`` flows):
    per flow, the time its rate was last set and its data then, its data and rate at the
    last return that reported it and that return's number; the time of the last return
    and the number of returns.

    A flow's data and completion are computed from when its rate was last set, as
    :meth:`coflowopt.sim.engine.Engine.apply` computes them, not from the start of the
    call: a flow whose rate a new order leaves as it was runs on without a rounding
    step at each call (such steps, apart by an ulp or so, moved completions across the
    engine's event tolerance; a flow then stopped short of its end by a fraction of that
    tolerance could wait for a whole coflow). A flow takes up the rate the last return
    reported for it when the call starts at the time of that return with the data it
    left (the engine set no rate since); otherwise its rate counts as set at the start."""
    return (np.zeros(F), np.zeros(F), np.zeros(F), np.zeros(F), np.full(F, -1, np.int64),
            np.full(1, np.nan), np.zeros(1, np.int64))


def greedy_uniform_state(F: int) -> tuple[np.ndarray, ...]:
    """What :func:`greedy_uniform_stretch` keeps from one call to the next for ``F`` flows:
    their history (see :func:`_history`)."""
    return _history(F)


@njit
def _kept(f, t0, sent, s_ret, ret_no, t_ret, calls):  # type: ignore[no-untyped-def]
    """Whether flow ``f`` runs on at ``t0`` from the last return (see :func:`_history`)."""
    return ret_no[f] == calls[0] and t0 == t_ret[0] and sent[f] == s_ret[f]


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
    t_set, s_set, s_ret, r_ret, ret_no, t_ret, calls,
):
    """Advance the greedy matching of ``act`` (priority order) from ``t0``; the arguments
    after ``lv_x`` are the flows' history (:func:`greedy_uniform_state`), kept from one
    call to the next: a flow's data and completion run from when its rate was last set.

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
            if not (r_ret[f] == c and _kept(f, t0, sent, s_ret, ret_no, t_ret, calls)):
                t_set[f] = t
                s_set[f] = sent[f]
            fin[i] = t_set[f] + max(size[f] - s_set[f], 0.0) / c
            heapq.heappush(heap, (fin[i], np.int64(i)))

    reason = 0
    while True:
        t_fin = earliest(heap, running, fin)
        t_next, thr, why, t, nev = next_event(t_fin, t_stop, tol, t, nev)
        if why != EVENT:
            reason = why
            break
        # every completion at this event, together
        t_new = t_next
        coflow_done = False
        while len(heap) > 0 and heap[0][0] <= thr:
            tf, i = heapq.heappop(heap)
            if not running[i] or tf != fin[i]:
                continue
            running[i] = False
            alive[i] = False
            npc, nd, last = completed(act[i], tstart[i], tf, c, fco, start, record, npc, pc_f,
                                      pc_t0, pc_t1, pc_r, sent, size, cf_left, done_f, done_t, nd)
            coflow_done |= last
            if tf > t_new:
                t_new = tf
            owner[A[i]] = -1
            owner[B[i]] = -1
            heapq.heappush(offers, (np.int64(i), A[i]))
            heapq.heappush(offers, (np.int64(i), B[i]))
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
                    sent[fh] = s_set[fh] + c * (t - t_set[fh])
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
                t_set[fg] = t
                s_set[fg] = sent[fg]
                fin[g] = t + max(size[fg] - sent[fg], 0.0) / c
                heapq.heappush(heap, (fin[g], np.int64(g)))
                break

    # close the running pieces at t; report the rates from t on
    for i in range(n):
        f = act[i]
        if running[i]:
            npc = served(f, tstart[i], t, c, fco, start, record, npc, pc_f, pc_t0, pc_t1, pc_r)
            sent[f] = s_set[f] + c * (t - t_set[f])
            rate_out[f] = c
        else:
            rate_out[f] = 0.0
        s_ret[f] = sent[f]
        r_ret[f] = rate_out[f]
        ret_no[f] = calls[0] + 1
    calls[0] += 1
    t_ret[0] = t
    return t, thr, nd, npc, 0, nev, reason


@njit
def _greedy_rate(ptr, idx, val, i, before, after):  # type: ignore[no-untyped-def]
    """Row ``i``'s greedy rate from its links' residuals ``before`` (one per entry of the
    row, in row order), and the residuals it leaves (``after``): the arithmetic of
    :func:`coflowopt.kernels.rates.greedy_csr` for one row without bound."""
    lo = ptr[i]
    hi = ptr[i + 1]
    room = before[0] / val[lo]
    for e in range(lo + 1, hi):
        v = before[e - lo] / val[e]
        if room == room and (v != v or v < room):
            room = v
    if not (room > 0):
        room = 0.0
    for e in range(lo, hi):
        v0 = before[e - lo]
        v = v0 - val[e] * room
        after[e - lo] = v if not (v <= FULL * v0) else 0.0
    return room


_BLOCK = 64
"""Slots per block: a search for the next (or previous) eager slot passes a block
without eager slots in one step."""


def greedy_csr_state(indptr: np.ndarray, indices: np.ndarray, L: int) -> tuple[np.ndarray, ...]:
    """What :func:`greedy_csr_stretch` keeps from one call to the next, for routes
    ``(indptr, indices)`` over ``L`` links: the arguments after the routes, in order.

    Per entry of the routes: its row (flow), the next entry on its link in the last
    order, its link's residual before and after its row, a change waiting at it; per
    flow: its greedy rate, whether it is in the structure, its position, marks, its
    piece's start and its predicted completion; the last order's flows and their
    number; per link, scratch. Then the slots (see :func:`greedy_csr_stretch`): per link
    its first slot and its number of entries; per entry its slot and whether it is lazy;
    per slot its entry and whether it is eager; per block of slots its eager ones. Then
    the flows' history (:func:`_history`), which a fresh structure may take over."""
    F = indptr.size - 1
    nnz = indices.size
    erow = np.repeat(np.arange(F, dtype=np.int64), np.diff(indptr))
    # each link's slots start at a block boundary, so that a block belongs to one link
    room = -(-np.bincount(indices, minlength=L) // _BLOCK) * _BLOCK
    lbase = np.zeros(L, np.int64)
    lbase[1:] = np.cumsum(room)[:-1]
    S = max(int(room.sum()), 1)
    return (erow, np.full(nnz, -1, np.int64), np.zeros(nnz), np.zeros(nnz),
            np.full(nnz, np.nan), np.zeros(F), np.zeros(F, np.bool_), np.zeros(F, np.int64),
            np.zeros(F, np.bool_), np.zeros(F, np.bool_), np.zeros(F, np.bool_), np.zeros(F),
            np.full(F, np.inf), np.zeros(F, np.int64), np.zeros(1, np.int64),
            np.full(L, -1, np.int64), lbase, np.zeros(L, np.int64), np.zeros(nnz, np.int64),
            np.zeros(nnz, np.bool_), np.zeros(S, np.int64), np.zeros(S, np.bool_),
            np.zeros(S // _BLOCK, np.int64), *_history(F))


@njit
def _eager_after(eager, nblk, s, end):  # type: ignore[no-untyped-def]
    """The first eager slot in ``[s, end)``, or -1."""
    while s < end:
        if s % _BLOCK == 0 and nblk[s // _BLOCK] == 0:
            s += _BLOCK
            continue
        if eager[s]:
            return s
        s += 1
    return -1


@njit
def _eager_before(eager, nblk, s, first):  # type: ignore[no-untyped-def]
    """The last eager slot in ``[first, s)``, or -1."""
    s -= 1
    while s >= first:
        if s % _BLOCK == _BLOCK - 1 and nblk[s // _BLOCK] == 0:
            s -= _BLOCK
            continue
        if eager[s]:
            return s
        s -= 1
    return -1


@njit
def _held(indptr, rb, g, q):  # type: ignore[no-untyped-def]
    """Whether row ``g`` (not queued: its residuals are settled) has no room because a
    link other than that of its entry ``q`` has none left before it: its greedy rate is 0
    whatever ``q``'s link has, and it leaves every link as it found it."""
    for e in range(indptr[g], indptr[g + 1]):
        if e != q and rb[e] == 0.0:
            return True
    return False


@njit
def greedy_csr_stretch(  # type: ignore[no-untyped-def]
    t0, t_stop, tol, act, la, lb, L, cap, size, sent, fco, cf_left, start,
    record, max_pieces, rate_out, done_f, done_t, pc_f, pc_t0, pc_t1, pc_r, lv_u, lv_t, lv_x,
    indptr, indices, data, erow, nxt, rb, ra, pend, rate, member, key, mark, alive, queued,
    tstart, fin, members, meta, tail, lbase, lcnt, gslot, lazy_e, sle, eager, nblk,
    t_set, s_set, s_ret, r_ret, ret_no, t_ret, calls,
):
    """Advance the greedy allocation of ``act`` (priority order) over routes
    ``(indptr, indices, data)`` (CSR, positive coefficients, at least one link per
    row) from ``t0``; the arguments after the routes are the state of
    :func:`greedy_csr_state`, kept from one call to the next.

    The stretch contract of :func:`greedy_uniform_stretch` (``la``/``lb`` unused). The
    greedy allocation is kept up to date with the arithmetic of a recomputation over
    the whole order, but touching only what changes: every entry of a row remembers
    its link's residual before and after that row, and a change (a completion, a
    changed rate, a row that joins or leaves, a new neighbour on a link) travels down
    the link's later rows, in position order, until a row leaves the link with the
    residual it had before (bit for bit); every row it reaches has its rate
    recomputed. A flow whose rate changes closes its piece and restarts; the others
    run on. Between calls (a new order, or the same one without the completed flows)
    the structure is kept: each link's rows are relinked in the new order in one pass
    over the rows, and only rows whose residuals before them differ from those they
    had, and new rows, start the changes (a new order at each coflow arrival differs
    little from the last one: gathering the rows and recomputing every rate afresh at
    every call cost more than all the events between calls on the Facebook trace).
    A flow's data and completion run from when its rate was last set (:func:`_history`).

    Most rows of an oversubscribed fabric's links are held at 0 by another link (the
    leaf uplinks fill, the host links never do), and a change passed each of them in
    turn. A held row's entry that passes a nonzero residual becomes lazy instead: its
    residual is that of the eager entry before it on its link (a held row passes its
    residual on unchanged), read when its row is recomputed, and a change with a
    nonzero residual passes over a run of lazy entries in one step (each link's entries
    have slots in the order, searched a block at a time). A zero residual is never
    lazy, so that :func:`_held` sees where every link fills; a change with a zero
    residual makes the lazy entries it reaches eager again. A lazy entry stays lazy in
    a new order where its residual is the one before it there; otherwise it starts a
    change like any other.
    """
    n = act.size
    width = 1
    # rows that left the structure since the last call (completed, or no longer listed)
    for i in range(n):
        f = act[i]
        mark[f] = True
        key[f] = i
        if indptr[f + 1] - indptr[f] > width:
            width = indptr[f + 1] - indptr[f]
    for j in range(meta[0]):
        f = members[j]
        if not mark[f]:
            member[f] = False
            rate[f] = 0.0
            alive[f] = False
    todo = [np.int64(0)]
    todo.pop()
    heap = [(np.inf, np.int64(-1))]
    heap.pop()
    eager[:] = False
    nblk[:] = 0
    # relink every link's rows in the new order; a row whose residual before it on
    # some link is not the one it had (a new neighbour), or a new row, starts a change
    for k in range(L):
        tail[k] = -1
        lcnt[k] = 0
    for i in range(n):
        f = act[i]
        mark[f] = False
        members[i] = f
        fresh = not member[f]
        member[f] = True
        alive[f] = True
        tstart[f] = t0
        # running on from the last return (the engine set no rate since)
        kept = _kept(f, t0, sent, s_ret, ret_no, t_ret, calls)
        if fresh:
            rate[f] = r_ret[f] if kept else 0.0
        change = fresh
        for e in range(indptr[f], indptr[f + 1]):
            k = indices[e]
            p = tail[k]
            if p >= 0:
                nxt[p] = e
                v = ra[p]
            else:
                v = cap[k]
            tail[k] = e
            sl = lbase[k] + lcnt[k]
            lcnt[k] += 1
            gslot[e] = sl
            sle[sl] = e
            lazy = lazy_e[e]
            if fresh:
                lazy = False
                rb[e] = v
                ra[e] = np.nan  # unknown until the row is computed: its successors wait for it
            elif v != rb[e]:
                lazy = False
                pend[e] = v
                change = True
            if not lazy:
                lazy_e[e] = False
                eager[sl] = True
                nblk[sl // _BLOCK] += 1
        if change:
            queued[f] = True
            heapq.heappush(todo, np.int64(i))
        if rate[f] > 0:
            if not kept:
                t_set[f] = t0
                s_set[f] = sent[f]
            fin[f] = t_set[f] + max(size[f] - s_set[f], 0.0) / rate[f]
            heapq.heappush(heap, (fin[f], f))
        else:
            fin[f] = np.inf
    for k in range(L):
        if tail[k] >= 0:
            nxt[tail[k]] = -1
    meta[0] = n
    before = np.empty(width)
    after = np.empty(width)
    t = t0
    nd = 0
    npc = np.int64(0)  # not the literal 0: its callees compile once, for int64
    nev = 0
    reason = 0
    thr = t0
    settle = True  # the changes of the new order first, at t0

    while True:
        if not settle:
            t_fin = earliest(heap, alive, fin)
            t_next, thr, why, t, nev = next_event(t_fin, t_stop, tol, t, nev)
            if why != EVENT:
                reason = why
                break
            t_new = t_next
            coflow_done = False
            while len(heap) > 0 and heap[0][0] <= thr:
                tf, f = heapq.heappop(heap)
                if not alive[f] or tf != fin[f]:
                    continue
                npc, nd, last = completed(f, tstart[f], tf, rate[f], fco, start, record, npc,
                                          pc_f, pc_t0, pc_t1, pc_r, sent, size, cf_left, done_f,
                                          done_t, nd)
                coflow_done |= last
                fin[f] = np.inf
                alive[f] = False
                if not queued[f]:
                    queued[f] = True
                    heapq.heappush(todo, key[f])
                if tf > t_new:
                    t_new = tf
            t = t_new
            if t_stop <= thr or coflow_done or (record and npc > max_pieces - 2 * n - 4):
                # the engine decides (or admits) now; the next call takes up the changes
                for i in todo:
                    queued[act[i]] = False
                reason = 0 if t_stop <= thr else (1 if coflow_done else 2)
                break
        settle = False
        # the changes travel down the links, rows in position order
        while len(todo) > 0:
            i = heapq.heappop(todo)
            f = act[i]
            queued[f] = False
            lo = indptr[f]
            hi = indptr[f + 1]
            for e in range(lo, hi):
                sl = gslot[e]
                if not eager[sl]:
                    # a lazy entry: its residual is that of the eager entry before it
                    k = indices[e]
                    p = _eager_before(eager, nblk, sl, lbase[k])
                    v = ra[sle[p]] if p >= 0 else cap[k]
                    rb[e] = v
                    ra[e] = v
                    lazy_e[e] = False
                    eager[sl] = True
                    nblk[sl // _BLOCK] += 1
                if pend[e] == pend[e]:
                    rb[e] = pend[e]
                    pend[e] = np.nan
                before[e - lo] = rb[e]
            if alive[f]:
                r = _greedy_rate(indptr, indices, data, f, before, after)
            else:
                r = 0.0
                for e in range(lo, hi):
                    after[e - lo] = before[e - lo]
            if r != rate[f]:
                if alive[f]:
                    if rate[f] > 0:
                        npc = served(f, tstart[f], t, rate[f], fco, start, record, npc, pc_f,
                                     pc_t0, pc_t1, pc_r)
                        sent[f] = s_set[f] + rate[f] * (t - t_set[f])
                    tstart[f] = t
                    t_set[f] = t
                    s_set[f] = sent[f]
                    if r > 0:
                        fin[f] = t + max(size[f] - sent[f], 0.0) / r
                        heapq.heappush(heap, (fin[f], f))
                    else:
                        fin[f] = np.inf
                rate[f] = r
            for e in range(lo, hi):
                v = after[e - lo]
                run = ra[e]  # the residual the lazy entries after e had
                ra[e] = v
                k = indices[e]
                end = lbase[k] + lcnt[k]
                q = nxt[e]
                # what the next row on this link had before it, against what it has now
                while q >= 0:
                    sl = gslot[q]
                    if not eager[sl]:
                        if v != 0.0:
                            # lazy entries keep a nonzero residual: they pass it on as the
                            # held rows they are, or wait in the queue for their row
                            p = _eager_after(eager, nblk, sl + 1, end)
                            q = sle[p] if p >= 0 else -1
                            continue
                        # the link fills before it: its zero must be seen by its row
                        rb[q] = run
                        ra[q] = run
                        lazy_e[q] = False
                        eager[sl] = True
                        nblk[sl // _BLOCK] += 1
                    else:
                        run = ra[q]
                    if v == rb[q] and pend[q] != pend[q]:
                        break
                    g = erow[q]
                    if not queued[g] and _held(indptr, rb, g, q):
                        # a row held at 0 by another link passes the change on as it is,
                        # rate and other links unchanged: settled here, not through the
                        # queue (most rows of an oversubscribed fabric's links are held);
                        # with a nonzero residual it becomes lazy, passed over from now on
                        rb[q] = v
                        ra[q] = v
                        if v != 0.0:
                            lazy_e[q] = True
                            eager[sl] = False
                            nblk[sl // _BLOCK] -= 1
                            p = _eager_after(eager, nblk, sl + 1, end)
                            q = sle[p] if p >= 0 else -1
                        else:
                            q = nxt[q]
                        continue
                    pend[q] = v
                    if not queued[g]:
                        queued[g] = True
                        heapq.heappush(todo, key[g])
                    break

    # close the running pieces at t; report the rates from t on
    for i in range(n):
        f = act[i]
        if alive[f] and rate[f] > 0:
            npc = served(f, tstart[f], t, rate[f], fco, start, record, npc, pc_f, pc_t0, pc_t1,
                         pc_r)
            sent[f] = s_set[f] + rate[f] * (t - t_set[f])
            rate_out[f] = rate[f]
        else:
            rate_out[f] = 0.0
        s_ret[f] = sent[f]
        r_ret[f] = rate_out[f]
        ret_no[f] = calls[0] + 1
    calls[0] += 1
    t_ret[0] = t
    return t, thr, nd, npc, 0, nev, reason
