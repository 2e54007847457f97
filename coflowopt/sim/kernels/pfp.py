"""Shortest remaining flow first (``pfp``) over time, compiled.

pfp takes the admitted flows in increasing order of their remaining size
(ties: lower flow index) and gives each, in that order, all the capacity its
two links still have (:func:`coflowopt.alloc.greedy`), recomputed at every
admission and flow completion. When every link has the same capacity ``c``
this is a matching: a flow runs at ``c`` exactly when no flow earlier in the
order runs on one of its links, and it holds both links.

Keys move: a waiting flow's key (its remaining size) is constant, a running
flow's key falls at rate ``c``, a pre-empted flow keeps what remains when it
stops. Running flows never share a link and all fall at the same rate, so
between two events they only overtake waiting flows: the matching of the
last event stays the greedy matching of the current order until the next
admission or completion (no crossing wake-ups are needed, and the reference
path asks for none since its served flows all have rate ``c``). At an event
the kernel repairs the matching instead of recomputing it:

- each link keeps its waiting flows sorted by key (a gap buffer in a fixed
  slice of one pool: a link never holds more waiting flows than the flows
  routed over it);
- a link freed by a completion or a pre-emption is *offered* to the waiting
  flows on it from the freeing flow's position on (those before it are
  blocked by other holders, which offer their own links when they go); the
  first whose other link is free or held by a later flow takes both links,
  pre-empting the later holders, whose other links are offered in turn;
- an admitted flow checks its own two links the same way.

Comparisons with a running holder use its current remaining size, computed
exactly as the engine computes it for the reference path
(``size - (sent + c * (t - t_sync))`` with the data sent at the flow's last
rate change), rounded to :data:`~coflowopt.kernels.ties.TIE_BITS`
significant bits where each key is made, ties by flow index, as on the
reference path (:func:`_before`; the buffers and the heap hold rounded keys,
so their orders agree). When no offer is left, every running flow has no
earlier running neighbour and every waiting flow has an earlier running
neighbour on one of its links: the unique greedy matching of the order.

The state (which flows wait or run, their keys, the per-link buffers, the
link holders) lives in the policy's arrays and persists across calls, so a
decision costs the engine's bookkeeping plus the new flows, not a sort of
all admitted flows.

Scope: two-link routes with coefficient 1 and one capacity for all links
(the big switch with uniform ports, e.g. the Facebook trace). With unequal
capacities served flows run at different rates, their remaining sizes cross,
and the greedy allocation is not a matching; ``pfp`` then stays on the
reference path.
"""

from __future__ import annotations

import heapq

import numpy as np

from ..._jit import njit
from ...kernels.ties import tie_key
from ._common import EVENT, next_event, served

__all__ = ["pfp_state", "pfp_uniform_stretch"]

_NEW = 0
_WAIT = 1
_RUN = 2
_DONE = 3


def pfp_state(la: np.ndarray, lb: np.ndarray, L: int) -> tuple[np.ndarray, ...]:
    """Fresh kernel state for flows routed over links ``la``/``lb`` (the stretch's args).

    Each link gets a slice of ``2 n + 2`` slots in the buffer pool, where
    ``n`` is the number of flows routed over it: it never holds more than
    ``n`` waiting flows, so the buffer never moves out of its slice.
    """
    F = la.size
    n = np.bincount(la, minlength=L) + np.bincount(lb, minlength=L)
    cp = 2 * n + 2
    off = np.zeros(L + 1, np.int64)
    np.cumsum(cp, out=off[1:])
    mid = off[:-1] + cp // 2
    return (
        np.zeros(F, np.int8),  # status: new, waiting, running, done
        np.zeros(F),  # key of a waiting flow (its remaining size)
        np.zeros(F),  # data sent up to the flow's last rate change (the reference's sync)
        np.zeros(F),  # time of that change
        np.full(F, np.inf),  # completion time of a running flow
        np.zeros(F),  # start of the running flow's current piece (this stretch)
        np.full(L, -1, np.int64),  # holder of each link
        np.empty(int(off[-1])),  # buffer keys
        np.empty(int(off[-1]), np.int64),  # buffer flows
        off,
        mid.copy(),  # first live slot of each link's buffer
        mid,  # one past its last live slot
        np.zeros(L),  # offers left for the next call: start keys,
        np.zeros(L, np.int64),  # start flows,
        np.zeros(L, np.int64),  # links (a link is freed at most once per event)
        np.zeros(1, np.int64),  # and their number
    )


@njit
def _before(ka, a, kb, b):  # type: ignore[no-untyped-def]
    """Whether ``(ka, a)`` precedes ``(kb, b)``: smaller key, then lower index.

    Keys are :func:`~coflowopt.kernels.ties.tie_key` values (``key``,
    :func:`_key_now`), rounded once where they are made.
    """
    return ka < kb or (ka == kb and a < b)


@njit
def _key_now(g, t, c, size, psent, pt):  # type: ignore[no-untyped-def]
    """Tie key of running flow ``g``'s remaining size at ``t``, as the reference path computes it."""
    r = size[g] - (psent[g] + c * (t - pt[g]))
    return tie_key(r if r > 0.0 else 0.0)


@njit
def _find(bk, bi, lo, hi, k, f):  # type: ignore[no-untyped-def]
    """First slot in ``[lo, hi)`` whose entry does not precede ``(k, f)``."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if _before(bk[mid], bi[mid], k, f):
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit
def _insert(bk, bi, off, hd, tl, link, k, f):  # type: ignore[no-untyped-def]
    """Put waiting flow ``f`` with key ``k`` into ``link``'s buffer, moving the shorter side."""
    h = hd[link]
    e = tl[link]
    lo = off[link]
    hi = off[link + 1]
    if h == lo or e == hi:
        # one side is full: centre the live entries in the slice (it has room for all)
        n = e - h
        nh = lo + ((hi - lo) - n) // 2
        if nh < h:
            for j in range(n):
                bk[nh + j] = bk[h + j]
                bi[nh + j] = bi[h + j]
        elif nh > h:
            for j in range(n - 1, -1, -1):
                bk[nh + j] = bk[h + j]
                bi[nh + j] = bi[h + j]
        h = nh
        e = nh + n
    pos = _find(bk, bi, h, e, k, f)
    if pos - h <= e - pos:
        for j in range(h, pos):
            bk[j - 1] = bk[j]
            bi[j - 1] = bi[j]
        h -= 1
        pos -= 1
    else:
        for j in range(e, pos, -1):
            bk[j] = bk[j - 1]
            bi[j] = bi[j - 1]
        e += 1
    bk[pos] = k
    bi[pos] = f
    hd[link] = h
    tl[link] = e


@njit
def _remove(bk, bi, hd, tl, link, k, f):  # type: ignore[no-untyped-def]
    """Take flow ``f`` (key ``k``) out of ``link``'s buffer, moving the shorter side."""
    h = hd[link]
    e = tl[link]
    pos = _find(bk, bi, h, e, k, f)
    if pos - h < e - 1 - pos:
        for j in range(pos, h, -1):
            bk[j] = bk[j - 1]
            bi[j] = bi[j - 1]
        hd[link] = h + 1
    else:
        for j in range(pos, e - 1):
            bk[j] = bk[j + 1]
            bi[j] = bi[j + 1]
        tl[link] = e - 1


@njit
def _merge_new(bk, bi, off, hd, tl, L, news, la, lb, key):  # type: ignore[no-untyped-def]
    """Put the admitted flows ``news`` (sorted by key, then index) into their links' buffers.

    One merge per link instead of one insertion per flow: an admission can
    bring thousands of flows.
    """
    m = news.size
    cnt = np.zeros(L + 1, np.int64)
    for i in range(m):
        f = news[i]
        cnt[la[f] + 1] += 1
        cnt[lb[f] + 1] += 1
    ptr = np.cumsum(cnt)
    fill = ptr[:-1].copy()
    run = np.empty(2 * m, np.int64)
    for i in range(m):
        f = news[i]
        run[fill[la[f]]] = f
        fill[la[f]] += 1
        run[fill[lb[f]]] = f
        fill[lb[f]] += 1
    width = 0
    for link in range(L):
        if ptr[link + 1] > ptr[link]:
            width = max(width, off[link + 1] - off[link])
    tk = np.empty(width)
    ti = np.empty(width, np.int64)
    for link in range(L):
        j = ptr[link]
        r1 = ptr[link + 1]
        if j == r1:
            continue
        i = hd[link]
        e = tl[link]
        o = 0
        while i < e and j < r1:
            f = run[j]
            if _before(bk[i], bi[i], key[f], f):
                tk[o] = bk[i]
                ti[o] = bi[i]
                i += 1
            else:
                tk[o] = key[f]
                ti[o] = f
                j += 1
            o += 1
        while i < e:
            tk[o] = bk[i]
            ti[o] = bi[i]
            i += 1
            o += 1
        while j < r1:
            f = run[j]
            tk[o] = key[f]
            ti[o] = f
            j += 1
            o += 1
        lo = off[link]
        h = lo + ((off[link + 1] - lo) - o) // 2
        for q in range(o):
            bk[h + q] = tk[q]
            bi[h + q] = ti[q]
        hd[link] = h
        tl[link] = h + o


@njit
def _scan(t, c, link, sk, sp, la, lb, size, psent, pt, owner, bk, bi, hd, tl):  # type: ignore[no-untyped-def]
    """The first waiting flow on ``link`` after position ``(sk, sp)`` that is not blocked now.

    Not blocked: the link's holder (if any) comes after it, and so does the
    holder of its other link. Returns -1 if there is none.
    """
    hl = owner[link]
    khl = 0.0
    if hl >= 0:
        khl = _key_now(hl, t, c, size, psent, pt)
        if not _before(sk, sp, khl, hl):
            return -1  # held by a flow no later than the offer's position
    j = _find(bk, bi, hd[link], tl[link], sk, sp)
    e = tl[link]
    while j < e:
        g = bi[j]
        kg = bk[j]
        j += 1
        if g == sp:
            continue
        if hl >= 0 and _before(khl, hl, kg, g):
            return -1  # the holder comes first: it keeps the link
        m = lb[g] if la[g] == link else la[g]
        om = owner[m]
        if om >= 0 and _before(_key_now(om, t, c, size, psent, pt), om, kg, g):
            continue  # blocked on its other link
        return g
    return -1


@njit
def _take(  # type: ignore[no-untyped-def]
    g, t, c, items, heap, la, lb, size, sent, fco, start, record, npc, pc_f, pc_t0, pc_t1, pc_r,
    st, key, psent, pt, fin, ts, owner, bk, bi, hd, tl, off,
):
    """Waiting flow ``g`` takes both its links; their later holders stop and offer their other links."""
    a = la[g]
    b = lb[g]
    for x in (a, b):
        h = owner[x]
        if h < 0 or st[h] != _RUN:
            continue  # free, or the same flow held both links: stopped already
        st[h] = _WAIT
        psent[h] = psent[h] + c * (t - pt[h])  # the reference's sync at a rate change
        pt[h] = t
        sent[h] += c * (t - ts[h])
        npc = served(h, ts[h], t, c, fco, start, record, npc, pc_f, pc_t0, pc_t1, pc_r)
        r = size[h] - psent[h]
        key[h] = tie_key(r if r > 0.0 else 0.0)
        owner[la[h]] = -1
        owner[lb[h]] = -1
        _insert(bk, bi, off, hd, tl, la[h], key[h], h)
        _insert(bk, bi, off, hd, tl, lb[h], key[h], h)
        other = lb[h] if la[h] == x else la[h]
        if other != a and other != b:
            heapq.heappush(items, (key[h], h, other, np.int64(0)))
    _remove(bk, bi, hd, tl, a, key[g], g)
    _remove(bk, bi, hd, tl, b, key[g], g)
    st[g] = _RUN
    pt[g] = t
    ts[g] = t
    r = size[g] - psent[g]
    fin[g] = t + (r if r > 0.0 else 0.0) / c
    heapq.heappush(heap, (fin[g], g))
    owner[a] = g
    owner[b] = g
    return npc


@njit
def _settle(  # type: ignore[no-untyped-def]
    t, c, items, news, heap, la, lb, size, sent, fco, start, record, npc, pc_f, pc_t0, pc_t1,
    pc_r, st, key, psent, pt, fin, ts, owner, bk, bi, hd, tl, off,
):
    """Repair the matching at time ``t``: process the pending items in order until none is left.

    An item ``(key, flow, link, 0)`` offers ``link`` from the position
    ``(key, flow)`` on; ``(key, flow, link, 1)`` is an attempt of a waiting
    flow to take its links (``link``: the offered link to scan further if it
    cannot); ``news`` (sorted) are the admitted flows' attempts. Every item
    pushed comes after the one being processed, so flows take links in
    priority order and a flow that takes links keeps them until the end:
    each flow changes state at most once per event, as in the reference
    path (whose one decision per event changes only the rates that differ).
    Returns the number of recorded pieces.
    """
    p = 0
    nn = news.size
    while True:
        if p < nn and (len(items) == 0 or _before(key[news[p]], news[p], items[0][0], items[0][1])):
            g = news[p]
            p += 1
            sk = key[g]
            link = np.int64(-1)
            kind = 1
        elif len(items) > 0:
            sk, g, link, kind = heapq.heappop(items)
        else:
            break
        if kind == 1:
            if st[g] != _WAIT:
                continue  # took its links through another offer
            ha = owner[la[g]]
            hb = owner[lb[g]]
            if not (
                (ha >= 0 and _before(_key_now(ha, t, c, size, psent, pt), ha, sk, g))
                or (hb >= 0 and _before(_key_now(hb, t, c, size, psent, pt), hb, sk, g))
            ):
                npc = _take(
                    g, t, c, items, heap, la, lb, size, sent, fco, start, record, npc, pc_f,
                    pc_t0, pc_t1, pc_r, st, key, psent, pt, fin, ts, owner, bk, bi, hd, tl, off,
                )
                continue
            if link < 0:
                continue
            # an earlier flow took one of its links meanwhile: offer the link further on
        cand = _scan(t, c, link, sk, g, la, lb, size, psent, pt, owner, bk, bi, hd, tl)
        if cand < 0:
            continue
        kc = key[cand]
        if (len(items) > 0 and _before(items[0][0], items[0][1], kc, cand)) or (
            p < nn and _before(key[news[p]], news[p], kc, cand)
        ):
            # an earlier item may still take one of its links: attempt in turn
            heapq.heappush(items, (kc, cand, link, np.int64(1)))
            continue
        npc = _take(
            cand, t, c, items, heap, la, lb, size, sent, fco, start, record, npc, pc_f, pc_t0,
            pc_t1, pc_r, st, key, psent, pt, fin, ts, owner, bk, bi, hd, tl, off,
        )
    return npc


@njit
def pfp_uniform_stretch(  # type: ignore[no-untyped-def]
    t0, t_stop, tol, act, la, lb, L, cap, size, sent, fco, cf_left, start,
    record, max_pieces, rate_out, done_f, done_t, pc_f, pc_t0, pc_t1, pc_r, lv_u, lv_t, lv_x,
    st, key, psent, pt, fin, ts, owner, bk, bi, off, hd, tl, pend_k, pend_f, pend_l, npend,
):
    """Advance shortest-remaining-first over the admitted flows ``act`` from ``t0``.

    The trailing arguments are the state made by :func:`pfp_state`, updated
    in place. Returns ``(t, thr, n_done, n_pieces, n_levels, n_events, reason)`` as
    :func:`coflowopt.sim.kernels.greedy.greedy_uniform_stretch` does. At an
    event where it hands control back, the links its completions freed stay
    free and their offers wait in the state: the next call (at the same
    time, after the engine's admissions) repairs the matching with the
    admitted flows in one go, as the reference path's single decision does.
    """
    n = act.size
    c = cap[0]
    t = t0
    nd = 0
    npc = np.int64(0)  # not the literal 0: its callees compile once, for int64
    nev = 0
    heap = [(np.inf, np.int64(-1))]
    heap.pop()
    items = [(np.inf, np.int64(0), np.int64(0), np.int64(0))]
    items.pop()

    # the running flows restart their pieces here (the engine closed them at t0)
    for link in range(L):
        g = owner[link]
        if g >= 0 and la[g] == link:
            ts[g] = t0
            heapq.heappush(heap, (fin[g], g))
    # the offers the last call left, and the admitted flows (by size, then index)
    for i in range(npend[0]):
        heapq.heappush(items, (pend_k[i], pend_f[i], pend_l[i], np.int64(0)))
    npend[0] = 0
    m = 0
    for i in range(n):
        if st[act[i]] == _NEW:
            m += 1
    news = np.empty(m, np.int64)
    m = 0
    for i in range(n):
        f = act[i]
        if st[f] == _NEW:
            news[m] = f
            m += 1
            st[f] = _WAIT
            psent[f] = 0.0
            pt[f] = t0
            key[f] = tie_key(size[f])  # the reference's size - (0 + 0 * (t - t0)), rounded
    if m > 0:
        news.sort()
        news = news[np.argsort(key[news], kind="mergesort")]
        if m > 32:
            _merge_new(bk, bi, off, hd, tl, L, news, la, lb, key)
        else:
            for i in range(m):
                f = news[i]
                _insert(bk, bi, off, hd, tl, la[f], key[f], f)
                _insert(bk, bi, off, hd, tl, lb[f], key[f], f)
    none = news[:0]

    t_cons = t  # the matching is the greedy one of the order at t_cons (after settling)
    reason = 0
    while True:
        npc = _settle(
            t, c, items, news, heap, la, lb, size, sent, fco, start, record, npc, pc_f, pc_t0,
            pc_t1, pc_r, st, key, psent, pt, fin, ts, owner, bk, bi, hd, tl, off,
        )
        news = none
        t_cons = t
        while len(heap) > 0 and (st[heap[0][1]] != _RUN or heap[0][0] != fin[heap[0][1]]):
            heapq.heappop(heap)
        t_fin = heap[0][0] if len(heap) > 0 else np.inf
        t_next, thr, why, t, nev = next_event(t_fin, t_stop, tol, t, nev)
        if why != EVENT:
            reason = why
            break
        # every completion at this event, together
        t_new = t_next
        coflow_done = False
        while len(heap) > 0 and heap[0][0] <= thr:
            tf, f = heapq.heappop(heap)
            if st[f] != _RUN or tf != fin[f]:
                continue
            # its links are offered from its position in the order of t_cons: the waiting
            # flows before it were blocked by other holders then, and still are
            kf = _key_now(f, t_cons, c, size, psent, pt)
            st[f] = _DONE
            npc = served(f, ts[f], tf, c, fco, start, record, npc, pc_f, pc_t0, pc_t1, pc_r)
            sent[f] = size[f]
            done_f[nd] = f
            done_t[nd] = tf
            nd += 1
            if tf > t_new:
                t_new = tf
            owner[la[f]] = -1
            owner[lb[f]] = -1
            heapq.heappush(items, (kf, f, la[f], np.int64(0)))
            heapq.heappush(items, (kf, f, lb[f], np.int64(0)))
            k = fco[f]
            cf_left[k] -= 1
            if cf_left[k] == 0:
                coflow_done = True
        t = t_new
        # the engine decides (or admits) now, or the record buffer may not hold another
        # event: the offers wait for the next call
        if t_stop <= thr:
            reason = 0
        elif coflow_done:
            reason = 1
        elif record and npc > max_pieces - 2 * n - 4:
            reason = 2
        else:
            continue
        i = 0
        while len(items) > 0:
            sk, g, link, _kind = heapq.heappop(items)
            pend_k[i] = sk
            pend_f[i] = g
            pend_l[i] = link
            i += 1
        npend[0] = i
        break
    # close the running pieces at t; report the rates from t on
    for link in range(L):
        f = owner[link]
        if f < 0 or la[f] != link:
            continue
        if t > ts[f]:
            npc = served(f, ts[f], t, c, fco, start, record, npc, pc_f, pc_t0, pc_t1, pc_r)
            sent[f] += c * (t - ts[f])
            ts[f] = t
        rate_out[f] = c
    return t, thr, nd, npc, 0, nev, reason
