"""Multi-level coflow queues over time, compiled (``aalo``'s D-CLAS and ``mcs``).

The stretch kernel runs the allocation of :mod:`coflowopt.sim.policies._queues`
(FIFO within a queue, max-min within a coflow, weighted rounds or strict
priority across queues) through every flow completion and every queue
demotion up to the next admission or coflow completion, recomputing the
allocation at each such event exactly as the reference policies do there.

Flows of one coflow on the same two links always get the same rate, so the
allocation works on *rows* (coflow, uplink, downlink) weighted by their
number of unfinished flows; a coflow's max-min rates are one call of the
shared water-filling (:func:`coflowopt.sim.kernels.maxmin.waterfill`) on its
usable rows. An event costs ``O(rows of the active coflows + L)`` per
coflow and round plus the flows whose rate changes; flows that wait at rate
0 cost nothing.

Scope: the big switch (two-link routes, uplinks below the split, downlinks
from it); the policies use their reference path otherwise.
"""

from __future__ import annotations

import numpy as np

from ..._jit import njit
from .maxmin import waterfill

__all__ = ["dclas_stretch"]


@njit
def _maxmin_rows(rows, nr, ci, ra, rbl, rc, split, c, lam_out, adj):  # type: ignore[no-untyped-def]
    """Max-min level of rows ``rows[:nr]`` of coflow ``ci`` (weights ``rc``) within ``c``.

    ``adj`` = ``(wt, mark, ctr, sl, cl, al, sr, cr, ar)``: the coflow's rows listed per
    link (:func:`_adjacency`, pruned by :func:`_compact`); its other listed rows have
    weight 0 (``wt`` is zero outside this call), which changes no link's demand and
    subtracts exact zeros, so the water levels are those of the rows given.
    """
    wt, mark, ctr, sl, cl, al, sr, cr, ar = adj
    R = c.size - split
    for q in range(nr):
        wt[rows[q]] = rc[rows[q]]
    ctr[0] += 1
    lam_l = np.empty(split)
    lam_r = np.empty(R)
    W = np.zeros((0, 0))
    waterfill(
        c[:split], c[split:], W, W, np.zeros(split), np.zeros(R), ra, rbl, wt, wt,
        sl[ci], cl[ci], al, sr[ci], cr[ci], ar, np.zeros(0, np.int64), mark, ctr[0],
        lam_l, lam_r,
    )
    for q in range(nr):
        wt[rows[q]] = 0.0
    anypos = False
    for q in range(nr):
        r = rows[q]
        lv = min(lam_l[ra[r]], lam_r[rbl[r]])
        if not np.isfinite(lv):
            lv = 0.0
        elif lv < 0.0:
            lv = 0.0
        lam_out[q] = lv
        if lv != 0.0:
            anypos = True
    return anypos


@njit
def _adjacency(m, co_r0, co_r1, ra, rbl, split, R):  # type: ignore[no-untyped-def]
    """Each coflow's rows per left and right link (CSR pieces inside the coflow's row range)."""
    nrows = ra.size
    sl = np.zeros((m, split), np.int64)
    cl = np.zeros((m, split), np.int64)
    sr = np.zeros((m, R), np.int64)
    cr = np.zeros((m, R), np.int64)
    al = np.empty(nrows, np.int64)
    ar = np.empty(nrows, np.int64)
    for p in range(m):
        for r in range(co_r0[p], co_r1[p]):
            cl[p, ra[r]] += 1
            cr[p, rbl[r]] += 1
        acc = co_r0[p]
        for i in range(split):
            sl[p, i] = acc
            acc += cl[p, i]
        acc = co_r0[p]
        for j in range(R):
            sr[p, j] = acc
            acc += cr[p, j]
        fl = sl[p].copy()
        fr = sr[p].copy()
        for r in range(co_r0[p], co_r1[p]):
            al[fl[ra[r]]] = r
            fl[ra[r]] += 1
            ar[fr[rbl[r]]] = r
            fr[rbl[r]] += 1
    wt = np.zeros(nrows)
    mark = np.zeros(nrows, np.int64)
    ctr = np.zeros(1, np.int64)
    return wt, mark, ctr, sl, cl, al, sr, cr, ar


@njit
def _compact(p, co_r0, rc, lrow, nlive, ndead, adj):  # type: ignore[no-untyped-def]
    """Drop coflow ``p``'s finished rows from its live-row and per-link lists (order kept).

    Finished rows have weight 0 in every water-filling, where they add and subtract
    exact zeros; dropping them changes no result, only the work.
    """
    sl, cl, al, sr, cr, ar = adj[3:]
    k = co_r0[p]
    for q in range(co_r0[p], co_r0[p] + nlive[p]):
        r = lrow[q]
        if rc[r] > 0:
            lrow[k] = r
            k += 1
    nlive[p] = k - co_r0[p]
    ndead[p] = 0
    for i in range(sl.shape[1]):
        s0 = sl[p, i]
        k = s0
        for q in range(s0, s0 + cl[p, i]):
            if rc[al[q]] > 0:
                al[k] = al[q]
                k += 1
        cl[p, i] = k - s0
    for j in range(sr.shape[1]):
        s0 = sr[p, j]
        k = s0
        for q in range(s0, s0 + cr[p, j]):
            if rc[ar[q]] > 0:
                ar[k] = ar[q]
                k += 1
        cr[p, j] = k - s0


@njit
def _levels(slot, ci, kv, c, co_r0, co_r1, ra, rc, cl, rbl, split, adj, cch, lrow, nlive):  # type: ignore[no-untyped-def]
    """Max-min levels of coflow ``ci``'s usable rows, reused when possible.

    ``kv[j]``: ``-1`` for a dead link, else the capacity ``c[j]`` the coflow gets on
    it. The usable rows and their levels depend only on ``kv`` on the links where the
    coflow has live rows and on its live rows (``ver``), so when both are bitwise the
    same as at the last call for this ``slot`` (a round of the weighted rounds, or the
    strict pass) the stored result is returned: exactly what the computation would give.
    Returns ``(rows, levels, any level positive)``: views of the slot's store.
    """
    ckey, cval, cver, ver, cnr, cbuf, clv, cany = cch
    L = c.size
    r0 = co_r0[ci]
    r1 = co_r1[ci]
    buf = cbuf[slot, r0:r1]
    lv = clv[slot, r0:r1]
    if cval[slot, ci] and cver[slot, ci] == ver[ci]:
        same = True
        for j in range(L):
            if cl[ci, j] > 0 and ckey[slot, ci, j] != kv[j]:
                same = False
                break
        if same:
            nr = cnr[slot, ci]
            return buf[:nr], lv[:nr], cany[slot, ci]
    nr = 0
    for q in range(r0, r0 + nlive[ci]):  # the live rows, in increasing order
        r = lrow[q]
        if rc[r] > 0 and kv[ra[r]] >= 0.0 and kv[rbl[r] + split] >= 0.0:
            buf[nr] = r
            nr += 1
    anyp = False
    if nr > 0:
        anyp = _maxmin_rows(buf, nr, ci, ra, rbl, rc, split, c, lv, adj)
    for j in range(L):
        ckey[slot, ci, j] = kv[j]
    cval[slot, ci] = True
    cver[slot, ci] = ver[ci]
    cnr[slot, ci] = nr
    cany[slot, ci] = anyp
    return buf[:nr], lv[:nr], anyp


@njit
def _blocked(cl, ci, split, residual, sat, cap):  # type: ignore[no-untyped-def]
    """True when coflow ``ci`` surely has no row with both links open (a quick test)."""
    L = cap.size
    up = False
    for j in range(split):
        if cl[ci, j] > 0 and not residual[j] <= sat * cap[j]:
            up = True
            break
    if not up:
        return True
    for j in range(split, L):
        if cl[ci, j] > 0 and not residual[j] <= sat * cap[j]:
            return False
    return True


@njit
def _touch(r, x, out, tmark, epoch, tl, ntl):  # type: ignore[no-untyped-def]
    out[r] += x
    if tmark[r] != epoch:
        tmark[r] = epoch
        tl[ntl] = r
        ntl += 1
    return ntl


@njit
def _allocate(  # type: ignore[no-untyped-def]
    order, m, co_r0, co_r1, ra, rb, rc, cl, split, cap, qof, nq, weights, sat, max_rounds,
    nonempty, out, tmark, epoch, tl, rbl, adj, cch, lrow, nlive,
):
    """Rates of the queue allocation, added to ``out`` (zero on entry) for the rows it lists.

    ``order``: coflow positions, queue-major. The rows given a rate are listed in
    ``tl`` (marked ``epoch`` in ``tmark``); returns how many.
    """
    L = cap.size
    residual = cap.copy()
    ntl = 0
    if weights.size > 0 and nonempty > 1:
        present = np.zeros((nq, L), np.bool_)
        share = np.zeros((nq, L))
        live = np.zeros(m, np.bool_)
        kv = np.empty(L)
        for rnd in range(max_rounds):
            alldead = True
            for j in range(L):
                if not residual[j] <= sat * cap[j]:
                    alldead = False
            if alldead:
                break
            present[:, :] = False
            for p in range(m):
                ci = order[p]
                qi = qof[ci]
                live[ci] = False
                if _blocked(cl, ci, split, residual, sat, cap):
                    continue
                # no dead link under the coflow's live rows: every live row is usable, so
                # the queue is present exactly where the coflow has live rows
                open_all = True
                for j in range(L):
                    if cl[ci, j] > 0 and residual[j] <= sat * cap[j]:
                        open_all = False
                        break
                if open_all:
                    for j in range(L):
                        if cl[ci, j] > 0:
                            present[qi, j] = True
                    live[ci] = True
                    continue
                for q in range(co_r0[ci], co_r0[ci] + nlive[ci]):
                    r = lrow[q]
                    if rc[r] > 0:
                        a = ra[r]
                        b = rb[r]
                        if not (residual[a] <= sat * cap[a]) and not (residual[b] <= sat * cap[b]):
                            present[qi, a] = True
                            present[qi, b] = True
                            live[ci] = True
            anytot = False
            for j in range(L):
                tot = 0.0
                for qi in range(nq):
                    if present[qi, j]:
                        tot += weights[qi]
                for qi in range(nq):
                    wl = weights[qi] if present[qi, j] else 0.0
                    share[qi, j] = (wl / tot if tot > 0 else 0.0) * residual[j]
                if tot != 0.0:
                    anytot = True
            if not anytot:
                break
            grew = 0.0
            used = np.zeros(L)
            u = np.empty(L)
            for p in range(m):
                ci = order[p]
                if not live[ci]:
                    continue
                qi = qof[ci]
                c = np.maximum(share[qi], 0.0)
                for j in range(L):
                    kv[j] = -1.0 if residual[j] <= sat * cap[j] else c[j]
                rows, lvl, anyp = _levels(rnd, ci, kv, c, co_r0, co_r1, ra, rc, cl, rbl, split, adj,
                                          cch, lrow, nlive)
                if not anyp:
                    continue
                u[:] = 0.0
                for q in range(rows.size):
                    r = rows[q]
                    ntl = _touch(r, lvl[q], out, tmark, epoch, tl, ntl)
                    x = lvl[q] * rc[r]
                    u[ra[r]] += x
                    u[rb[r]] += x
                for j in range(L):
                    share[qi, j] -= u[j]
                    used[j] += u[j]
                    g = u[j] / cap[j]
                    if g > grew:
                        grew = g
            for j in range(L):
                residual[j] = max(residual[j] - used[j], 0.0)
            if grew <= 1e-9:
                break
    # strict priority (or the final pass of the weighted rounds)
    c = np.empty(L)
    kv = np.empty(L)
    for p in range(m):
        ci = order[p]
        has = False
        for j in range(split):
            if cl[ci, j] > 0:
                has = True
                break
        if not has:
            continue
        alldead = True
        for j in range(L):
            if residual[j] <= sat * cap[j]:
                c[j] = 0.0
            else:
                c[j] = residual[j]
                alldead = False
        if alldead:
            return ntl
        if _blocked(cl, ci, split, residual, sat, cap):
            continue
        # usable links have c > 0 (residual above SAT * cap >= 0), dead ones c = 0
        for j in range(L):
            kv[j] = c[j] if c[j] > 0 else -1.0
        rows, lvl, _ = _levels(max_rounds, ci, kv, c, co_r0, co_r1, ra, rc, cl, rbl, split, adj,
                               cch, lrow, nlive)
        if rows.size == 0:
            continue
        for q in range(rows.size):
            r = rows[q]
            ntl = _touch(r, lvl[q], out, tmark, epoch, tl, ntl)
            x = lvl[q] * rc[r]
            residual[ra[r]] -= x
            residual[rb[r]] -= x
        for j in range(L):
            if residual[j] < 0.0:
                residual[j] = 0.0
    return ntl


@njit
def dclas_stretch(  # type: ignore[no-untyped-def]
    t0, t_stop, tol, act, la, lb, L, cap, size, sent, fco, cf_left, start,
    record, max_pieces, rate_out, done_f, done_t, pc_f, pc_t0, pc_t1, pc_r,
    cos, queue, wide, th_n, th_w, weights, cf_sent, split, sat, max_rounds, ptol,
):
    """Advance the multi-level queue allocation of ``act`` from ``t0``.

    ``cos``: the active coflows in FIFO order; ``queue`` (mutated): each
    coflow's 0-based queue; ``wide``: coflows whose demotions follow their
    longest flow (``mcs``); ``th_n``/``th_w``: per queue, the upper
    threshold on a coflow's bytes / on its longest flow's bytes (``inf``:
    none); ``weights``: queue weights (empty: strict priority);
    ``cf_sent``: each coflow's bytes sent at ``t0`` (updated); ``ptol``: the
    policies' relative tolerance for a threshold being reached. Returns
    ``(t, n_done, n_pieces, n_events, reason)`` as every stretch kernel.
    """
    n = act.size
    m = cos.size
    nq = th_n.size
    last = nq - 1
    K = cf_left.size
    pos = np.full(K, -1, np.int64)
    anywide = False
    for p in range(m):
        pos[cos[p]] = p
        if wide[cos[p]]:
            anywide = True
    # rows: (coflow position, uplink, downlink), built coflow by coflow
    ci_of = np.empty(n, np.int64)
    for i in range(n):
        ci_of[i] = pos[fco[act[i]]]
    byco = np.argsort(ci_of, kind="mergesort")
    R = L - split
    slot = np.full(split * R, -1, np.int64)
    frow = np.empty(n, np.int64)
    ra_l = np.empty(n, np.int64)
    rb_l = np.empty(n, np.int64)
    co_r0 = np.zeros(m, np.int64)
    co_r1 = np.zeros(m, np.int64)
    nrows = 0
    q = 0
    for p in range(m):
        co_r0[p] = nrows
        q0 = q
        while q < n and ci_of[byco[q]] == p:
            i = byco[q]
            f = act[i]
            key = la[f] * R + (lb[f] - split)
            if slot[key] < 0:
                slot[key] = nrows
                ra_l[nrows] = la[f]
                rb_l[nrows] = lb[f]
                nrows += 1
            frow[i] = slot[key]
            q += 1
        for qq in range(q0, q):
            f = act[byco[qq]]
            slot[la[f] * R + (lb[f] - split)] = -1
        co_r1[p] = nrows
    ra = ra_l[:nrows].copy()
    rco = np.empty(nrows, np.int64)
    for p in range(m):
        for r in range(co_r0[p], co_r1[p]):
            rco[r] = p
    rb = rb_l[:nrows].copy()
    rc = np.zeros(nrows)
    row_ptr = np.zeros(nrows + 1, np.int64)
    for i in range(n):
        row_ptr[frow[i] + 1] += 1
    for r in range(nrows):
        row_ptr[r + 1] += row_ptr[r]
    # each row's flows by what they still need (they all run at the row's rate, so they
    # complete in this order); live flows are row_fl[head[r] : row_ptr[r + 1]]
    need = np.empty(n)
    for i in range(n):
        f = act[i]
        need[i] = size[f] - sent[f]
    # bucket the flows by row in increasing need (ties: position), one sort for all rows
    by_need = np.argsort(need, kind="mergesort")
    fill = row_ptr[:-1].copy()
    row_fl = np.empty(n, np.int64)
    for q in range(n):
        i = by_need[q]
        r = frow[i]
        row_fl[fill[r]] = i
        fill[r] += 1
    sufmax = np.empty(n)  # largest bytes sent at t0 among row_fl[j:] of the row
    for r in range(nrows):
        lo = row_ptr[r]
        hi = row_ptr[r + 1]
        mx = -np.inf
        for j in range(hi - 1, lo - 1, -1):
            v = sent[act[row_fl[j]]]
            if v > mx:
                mx = v
            sufmax[j] = mx
        rc[r] = hi - lo
    head = row_ptr[:-1].copy()
    cl = np.zeros((m, L), np.int64)  # live rows of each coflow on each link
    for r in range(nrows):
        cl[rco[r], ra[r]] += 1
        cl[rco[r], rb[r]] += 1
    tmark = np.zeros(nrows, np.int64)
    rbl = rb - split
    adj = _adjacency(m, co_r0, co_r1, ra, rbl, split, R)
    # each coflow's live rows (lrow[co_r0[p] : co_r0[p] + nlive[p]], increasing); finished
    # rows are dropped from these and from the per-link lists once they are half of them
    lrow = np.arange(nrows)
    nlive = co_r1 - co_r0
    ndead = np.zeros(m, np.int64)
    tl = np.empty(max(nrows, 1), np.int64)
    runl = np.empty(max(nrows, 1), np.int64)  # rows with a positive rate, by coflow
    runtmp = np.empty(max(nrows, 1), np.int64)
    run0 = np.zeros(m + 1, np.int64)
    runfill = np.zeros(m, np.int64)
    nrun = 0
    epoch = 0
    per = np.zeros(m)
    # largest bytes sent among the flows of each coflow's still rows (wide coflows)
    idlemax = np.full(m, -np.inf)
    idle_dirty = np.ones(m, np.bool_)
    serv = np.zeros(nrows)  # bytes each flow of the row received since t0
    ts = np.full(nrows, t0)  # when serv was last brought up to date
    rowfin = np.full(nrows, np.inf)
    row_rate = np.zeros(nrows)
    cfr = np.zeros(m)
    cfs = np.empty(m)
    for p in range(m):
        cfs[p] = cf_sent[cos[p]]
    tcf = t0
    # queue of each coflow position; queue-major order
    qof = np.empty(m, np.int64)
    for p in range(m):
        qof[p] = queue[cos[p]]
    seen = np.zeros(nq, np.bool_)
    order = np.empty(m, np.int64)
    newr = np.zeros(nrows)
    # the last levels of each coflow per slot (weighted round, strict pass), see _levels
    ns = max_rounds + 1
    ver = np.zeros(m, np.int64)  # bumped when a coflow's live rows change
    cch = (
        np.empty((ns, m, L)), np.zeros((ns, m), np.bool_), np.zeros((ns, m), np.int64), ver,
        np.zeros((ns, m), np.int64), np.empty((ns, max(nrows, 1)), np.int64),
        np.empty((ns, max(nrows, 1))), np.zeros((ns, m), np.bool_),
    )
    t = t0
    nd = 0
    npc = 0
    nev = 0
    reason = 0
    first = True
    while True:
        if not first:
            # demotions, with the rates in force up to now
            ptl = ptol * max(1.0, abs(t))
            for p in range(m):
                k = cos[p]
                qk = qof[p]
                while qk < last:
                    if wide[k]:
                        # the longest flow: per row, the live flow with the most bytes
                        th = th_w[qk]
                        if idle_dirty[p]:
                            idle_dirty[p] = False
                            mx = -np.inf
                            for q in range(co_r0[p], co_r0[p] + nlive[p]):
                                r = lrow[q]
                                if head[r] < row_ptr[r + 1] and row_rate[r] == 0.0:
                                    v = sufmax[head[r]] + serv[r]
                                    if v > mx:
                                        mx = v
                            idlemax[p] = mx
                        hit = idlemax[p] >= th
                        if not hit:
                            for q in range(run0[p], run0[p + 1]):
                                r = runl[q]
                                if head[r] == row_ptr[r + 1]:
                                    continue
                                x = row_rate[r]
                                sm = sufmax[head[r]] + serv[r] + x * (t - ts[r])
                                if sm >= th or (x > 0 and (th - sm) <= ptl * x):
                                    hit = True
                                    break
                    else:
                        th = th_n[qk]
                        sm = cfs[p] + cfr[p] * (t - tcf)
                        x = cfr[p]
                        hit = sm >= th or (x > 0 and (th - sm) / x <= ptl)
                    if not hit:
                        break
                    qk += 1
                if qk != qof[p]:
                    qof[p] = qk
                    queue[k] = qk
        first = False
        nonempty = 0
        seen[:] = False
        for p in range(m):
            if not seen[qof[p]]:
                seen[qof[p]] = True
                nonempty += 1
        o = 0
        for qi in range(nq):
            for p in range(m):
                if qof[p] == qi:
                    order[o] = p
                    o += 1
        epoch += 1
        ntl = _allocate(order, m, co_r0, co_r1, ra, rb, rc, cl, split, cap, qof, nq, weights,
                        sat, max_rounds, nonempty, newr, tmark, epoch, tl, rbl, adj, cch,
                        lrow, nlive)
        # apply: the coflow totals move to t first (as the engine's _sync_coflows), then
        # only the rows that ran or get a rate are looked at
        if t > tcf:
            for p in range(m):
                cfs[p] += cfr[p] * (t - tcf)
            tcf = t
        for q in range(nrun):
            r = runl[q]
            if tmark[r] != epoch:
                tmark[r] = epoch
                tl[ntl] = r
                ntl += 1
        nrun = 0
        for p in range(m):
            per[p] = 0.0
        t_fin = np.inf  # the next completion: the earliest head of a running row
        for q in range(ntl):
            r = tl[q]
            x = newr[r]
            newr[r] = 0.0
            old = row_rate[r]
            h = head[r]
            e = row_ptr[r + 1]
            if h == e:
                row_rate[r] = x
                continue
            p = rco[r]
            if x > 0:
                runtmp[nrun] = r
                nrun += 1
                per[p] += x * (e - h)
            if x == old:
                if x > 0 and rowfin[r] < t_fin:
                    t_fin = rowfin[r]
                continue
            if x == 0.0 or old == 0.0:
                idle_dirty[p] = True
            if record and old > 0 and t > ts[r]:
                for j in range(h, e):
                    pc_f[npc] = act[row_fl[j]]
                    pc_t0[npc] = ts[r]
                    pc_t1[npc] = t
                    pc_r[npc] = old
                    npc += 1
            serv[r] += old * (t - ts[r])
            ts[r] = t
            if x > 0:
                rowfin[r] = t + max(need[row_fl[h]] - serv[r], 0.0) / x
                if rowfin[r] < t_fin:
                    t_fin = rowfin[r]
            else:
                rowfin[r] = np.inf
            row_rate[r] = x
            cfr[p] += (x - old) * (e - h)
            if x > 0 and start[cos[p]] == np.inf:
                start[cos[p]] = t
        # the running rows grouped by coflow
        for p in range(m + 1):
            run0[p] = 0
        for q in range(nrun):
            run0[rco[runtmp[q]] + 1] += 1
        for p in range(m):
            run0[p + 1] += run0[p]
        for p in range(m):
            runfill[p] = run0[p]
        for q in range(nrun):
            r = runtmp[q]
            runl[runfill[rco[r]]] = r
            runfill[rco[r]] += 1
        # the next demotion under these rates
        wake = np.inf
        for q in range(nrun if anywide else 0):
            r = runl[q]
            p = rco[r]
            if wide[cos[p]] and qof[p] < last and head[r] < row_ptr[r + 1]:
                x = row_rate[r]
                sm = sufmax[head[r]] + serv[r] + x * (t - ts[r])
                w = t + (th_w[qof[p]] - sm) / x
                if w < wake:
                    wake = w
        for p in range(m):
            if wide[cos[p]] or qof[p] >= last:
                continue
            th = th_n[qof[p]]
            if per[p] > 0 and np.isfinite(th):
                sm = cfs[p] + cfr[p] * (t - tcf)
                w = t + max(th - sm, 0.0) / per[p]
                if w < wake:
                    wake = w
        floor = t + 2 * tol * max(1.0, abs(t))
        if wake < floor:
            wake = floor
        if record and npc > max_pieces - 3 * n - 4:
            reason = 2
            break
        # the next event
        t_next = min(t_fin, t_stop, wake)
        if t_next == np.inf:
            reason = 3
            break
        t_next = max(t_next, t)
        thr = t_next + tol * max(1.0, abs(t_next))
        nev += 1
        # the coflow totals move to t_next (the engine's _sync_coflows)
        for p in range(m):
            cfs[p] += cfr[p] * (t_next - tcf)
        tcf = t_next
        t_new = t_next
        coflow_done = False
        for q in range(nrun):
            r = runl[q]
            if not rowfin[r] <= thr:
                continue
            x = row_rate[r]
            p = rco[r]
            e = row_ptr[r + 1]
            h = head[r]
            while h < e:
                i = row_fl[h]
                fi = ts[r] + max(need[i] - serv[r], 0.0) / x
                if fi > thr:
                    break
                f = act[i]
                if record and fi > ts[r]:
                    pc_f[npc] = f
                    pc_t0[npc] = ts[r]
                    pc_t1[npc] = fi
                    pc_r[npc] = x
                    npc += 1
                cfs[p] -= x * (t_next - fi)
                cfr[p] -= x
                sent[f] = size[f]
                done_f[nd] = f
                done_t[nd] = fi
                nd += 1
                if fi > t_new:
                    t_new = fi
                k = fco[f]
                cf_left[k] -= 1
                if cf_left[k] == 0:
                    coflow_done = True
                h += 1
            if h != head[r]:
                ver[p] += 1
            head[r] = h
            rc[r] = e - h
            if h == e:
                cl[p, ra[r]] -= 1
                cl[p, rb[r]] -= 1
                ndead[p] += 1
                if 2 * ndead[p] >= nlive[p]:
                    _compact(p, co_r0, rc, lrow, nlive, ndead, adj)
            if h < e:
                rowfin[r] = ts[r] + max(need[row_fl[h]] - serv[r], 0.0) / x
            else:
                rowfin[r] = np.inf
        t = t_new
        if t_stop <= thr or coflow_done:
            reason = 0 if t_stop <= thr else 1
            break

    # close the running pieces at t; report the rates from t on
    for p in range(m):
        cf_sent[cos[p]] = cfs[p] + cfr[p] * (t - tcf)
    for r in range(nrows):
        x = row_rate[r]
        sv = serv[r] + x * (t - ts[r])
        for j in range(head[r], row_ptr[r + 1]):
            i = row_fl[j]
            f = act[i]
            if x > 0 and record and t > ts[r]:
                pc_f[npc] = f
                pc_t0[npc] = ts[r]
                pc_t1[npc] = t
                pc_r[npc] = x
                npc += 1
            sent[f] += sv
            rate_out[f] = x
    return t, nd, npc, nev, reason
