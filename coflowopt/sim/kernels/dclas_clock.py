"""Strict-priority multi-level queues over time with link clocks (``aalo`` strict, ``mcs``).

The allocation of :func:`coflowopt.sim.kernels.dclas.dclas_stretch` with
strict priority across queues (FIFO within a queue, max-min within a coflow),
recomputed at every flow completion, demotion and coflow completion, through
the same water-fillings and the same per-(coflow) caching of levels; what
differs is how rates are kept between events. :func:`coflowopt.sim.policies.aalo.compiled_queues`
uses this kernel whenever the queues share by strict priority and the per-row
kernel for weighted sharing.

Max-min within a coflow gives a row (coflow, uplink, downlink) the rate
``min(lam[a], lam[b])`` of its two links' water levels. A running row is
*bound* to the link that attains that minimum (the uplink on a tie): its
rate is that link's level, and it changes only when that level changes. So
the kernel keeps one *clock* per (coflow, link) *slot*: the bytes each flow
bound to it has received since the slot's clock was last reset, advancing at
the slot's level. A bound row stores only its *anchor*: its flows' bytes
received since the stretch began are ``clock - anchor``. Each slot keeps the
smallest *target* of its rows (``need + anchor`` of each row's next flow; for
wide ``mcs`` coflows also ``anchor - longest bytes``), so the next completion
(and threshold crossing) comes from the slots. On the Facebook trace under
strict aalo an event changes about 30 levels, which the per-row kernel turned
into about 2,200 per-row rate updates; here it is 30 clock updates plus about
110 rows whose binding moves (*flips*: re-anchored on their new slot, or
stopped, or started).

Rows still get visited when a level changes: those whose other link's level
is not strictly below the changed link's old and new levels, to keep the
coflow's use of each link by differences (rows that lost flows at the old
levels, then the level changes with the flows now) and to find the flips (a
running coflow's rows are bound by its previous levels, so no per-row state is
read unless the binding moves). Per event: the water-fillings, ``O(1)`` per
visited row, ``O(rows on the link)`` per slot whose rows flipped away or
completed (its smallest target is recomputed), ``O(1)`` per changed level.

Levels are those of the per-row kernel up to rounding in the link uses (the
differences are summed in another order); bytes and completion times come from
clocks instead of per-row running sums. A clock holds the bytes of every row
bound to its slot since it was last reset, so a row's remaining bytes
(``need + anchor - clock``) would carry the rounding of other rows' bytes; a
row joins a slot only while the slot's clock is within :data:`REBASE` times
the row's own bytes (else the slot is re-based), which keeps each row as exact
as the per-row kernel's ``need - served``. A coflow's total rate (its demotion
times divide by it) is recomputed from its slots after each of its
allocations and completions, not kept by differences. Both kernels agree
with the reference path to rounding (``tests/sim/test_kernels_dclas.py``, and
the exact oracles of ``tests/sim/test_oracle.py``).

Arrays are passed to compiled helpers only once per solve, never per row: a
Numba call costs about 10 ns per array argument (reference counts), more than
a row's work.
"""

from __future__ import annotations

import numpy as np

from ..._jit import njit
from ...kernels.maxmin import waterfill
from ._common import served
from .dclas import (
    BLOCK,
    SPARE,
    W_ALLOC,
    W_CAND,
    W_CHANGED,
    W_KEPT,
    W_ROWS,
    W_SOLVED,
    W_STRETCHES,
    _admissions,
    _block_min,
    _blocked,
    _compact,
    _demand,
    _demotions,
    _flush,
    _index,
    _next_demotion,
    _on_link,
    _pending,
    _queue_order,
    _setup,
)

__all__ = ["dclas_clock_stretch"]

# rows of the per-slot float state ``sf``
CLK, TCK, NBF, TGT, WTG = range(5)

REBASE = 32.0
"""A row joins a slot only while the slot's clock is at most this many times the row's
own bytes (the larger of its next flow's need and what it has received); otherwise the
slot is re-based first (clock to 0, its rows' anchors and targets less the clock).

A row's remaining bytes are ``need + anchor - clock``, exact to the last digit of the
larger of anchor and clock. Bounded so, that is within a few digits of the row's own
bytes (its clock then grows only by what the row itself receives), as exact as the
per-row kernel's ``need - served``; otherwise a row joining a slot whose clock holds
other rows' bytes, whose level later drops by orders of magnitude, would see that
rounding divided by the small level (in one instance: 1e-9 relative, against 0
for the per-row kernel)."""


@njit
def _put(ix, s, v):  # type: ignore[no-untyped-def]
    """``ix.val[s] = v`` keeping the block minima (see :func:`coflowopt.sim.kernels.dclas._index`)."""
    val, bmin, bdirty = ix
    old = val[s]
    val[s] = v
    b = s // BLOCK
    if v <= bmin[b]:
        bmin[b] = v
    elif old == bmin[b]:
        bdirty[b] = True


@njit
def _eff(x):  # type: ignore[no-untyped-def]
    """A level as a rate: 0 unless finite and positive."""
    return x if (x > 0.0 and x < np.inf) else 0.0


@njit
def _rate(p, L, lo, sf):  # type: ignore[no-untyped-def]
    """Coflow ``p``'s total rate from its slots (flows bound times level).

    Recomputed after each of its allocations rather than kept by differences: a rate
    that falls by orders of magnitude would keep the rounding of its large values,
    and demotion times divide by it.
    """
    x = 0.0
    for j in range(L):
        s = p * L + j
        if sf[NBF, s] > 0.0:
            x += sf[NBF, s] * _eff(lo[j])
    return x


@njit
def _refresh(s, lev, th, sf, fix, wix, wide):  # type: ignore[no-untyped-def]
    """Slot ``s``'s next completion and (wide coflows) next threshold crossing, from its clock.

    ``lev``: its level; ``th``: its coflow's wide threshold. Written out again in
    :func:`_settle`, the per-solve loop.
    """
    if sf[NBF, s] > 0.0 and lev > 0.0 and lev < np.inf:
        _put(fix, s, sf[TCK, s] + max(sf[TGT, s] - sf[CLK, s], 0.0) / lev)
        if wide:
            _put(wix, s, sf[TCK, s] + max(th + sf[WTG, s] - sf[CLK, s], 0.0) / lev
                 if th < np.inf else np.inf)
    else:
        _put(fix, s, np.inf)
        if wide:
            _put(wix, s, np.inf)


@njit
def _flips(nf, fr, fb, p, t, L, split, adj, lo, olv, rc, bind, anc, tp, need, row_fl, head,  # type: ignore[no-untyped-def]
           row_ptr, sufmax, sf, nrun, start, k, wide, iix, dirty, dl, nd_, rec):
    """Rows ``fr[:nf]`` of coflow ``p`` (coflow id ``k``) change binding to ``fb[:nf]`` at ``t``.

    ``-1``: the row stops (it keeps its bytes); a link: it runs at that link's
    level ``lo[link]``, re-anchored on the slot's clock. ``olv``: the levels before
    this allocation (a row's old rate, for its piece). Slots that lose a row are
    listed in ``dl`` for a rescan (``dirty`` 1), slots that gain one for a refresh
    (``dirty`` 2). Written as one loop with no calls (but pieces when recording,
    and a slot's rare re-base): a call per row passing these arrays costs more
    than the row's work.
    """
    record, act, fco, pc_f, pc_t0, pc_t1, pc_r, npc = rec
    ival, imin, idirty = iix
    nl = nd_[0]
    for q in range(nf):
        r = fr[q]
        nb = fb[q]
        ob = bind[r]
        x = rc[r]
        h = head[r]
        if ob >= 0:
            s = p * L + ob
            lev = lo[ob]
            if not (lev > 0.0 and lev < np.inf):
                lev = 0.0
            serv = sf[CLK, s] + lev * (t - sf[TCK, s]) - anc[r]
            sf[NBF, s] -= x
            if dirty[s] != 1:
                if dirty[s] == 0:
                    dl[nl] = s
                    nl += 1
                dirty[s] = 1
            if record:
                ol = olv[ob]
                if not (ol > 0.0 and ol < np.inf):
                    ol = 0.0
                for jf in range(h, row_ptr[r + 1]):
                    npc[0] = served(act[row_fl[jf]], tp[r], t, ol, fco, start, record, npc[0],
                                    pc_f, pc_t0, pc_t1, pc_r)
        else:
            serv = anc[r]
        iv = np.inf
        if nb >= 0:
            s = p * L + nb
            lev = lo[nb]
            if sf[NBF, s] <= 0.0:
                sf[CLK, s] = 0.0
                sf[TCK, s] = t
                sf[NBF, s] = 0.0
                sf[TGT, s] = np.inf
                sf[WTG, s] = np.inf
            c = sf[CLK, s] + lev * (t - sf[TCK, s])
            if c > REBASE * max(need[row_fl[h]], serv):
                # re-base the slot to this moment (see REBASE): its clock goes to 0
                lst, a0, a1 = _on_link(p, nb, split, adj)
                for q2 in range(a0, a1):
                    r2 = lst[q2]
                    if bind[r2] == nb:
                        anc[r2] -= c
                sf[TGT, s] -= c
                sf[WTG, s] -= c
                sf[CLK, s] = 0.0
                sf[TCK, s] = t
                c = 0.0
            anc[r] = c - serv
            sf[NBF, s] += x
            v = need[row_fl[h]] + anc[r]
            if v < sf[TGT, s]:
                sf[TGT, s] = v
            if wide:
                v = anc[r] - sufmax[h]
                if v < sf[WTG, s]:
                    sf[WTG, s] = v
            if dirty[s] == 0:
                dirty[s] = 2
                dl[nl] = s
                nl += 1
            if ob < 0:
                nrun[p] += 1
            if start[k] == np.inf:
                start[k] = t
            tp[r] = t
        else:
            anc[r] = serv
            if ob >= 0:
                nrun[p] -= 1
            iv = -(sufmax[h] + serv)
        if wide and (ob < 0) != (nb < 0):
            # the index update of dclas._index: still rows' longest flows
            old = ival[r]
            ival[r] = iv
            b = r // BLOCK
            if iv <= imin[b]:
                imin[b] = iv
            elif old == imin[b]:
                idirty[b] = True
        bind[r] = nb
    nd_[0] = nl


@njit
def _settle(p, L, split, lo, th, adj, bind, anc, need, row_fl, head, sufmax, sf, fix, wix,  # type: ignore[no-untyped-def]
            wide, dirty, dl, nd_):
    """Slots of coflow ``p`` listed by :func:`_flips` or a level change: rescan, refresh.

    A slot that lost rows (``dirty`` 1) gets its smallest targets recomputed from
    the rows bound to it; every listed slot gets its next completion (and wide
    crossing) from its clock, as :func:`_refresh` (written out: one call per solve).
    """
    sl, acl, al, sr, acr, ar = adj[2:]
    fval, fmin, fdirty = fix
    wval, wmin, wdirty = wix
    for q in range(nd_[0]):
        s = dl[q]
        j = s - p * L
        if dirty[s] == 1:
            if j < split:
                a0 = sl[p, j]
                a1 = a0 + acl[p, j]
            else:
                a0 = sr[p, j - split]
                a1 = a0 + acr[p, j - split]
            tg = np.inf
            wg = np.inf
            for q2 in range(a0, a1):
                r = al[q2] if j < split else ar[q2]
                if bind[r] != j:
                    continue
                h = head[r]
                v = need[row_fl[h]] + anc[r]
                if v < tg:
                    tg = v
                if wide:
                    v = anc[r] - sufmax[h]
                    if v < wg:
                        wg = v
            sf[TGT, s] = tg
            sf[WTG, s] = wg
        dirty[s] = 0
        lev = lo[j]
        vf = np.inf
        vw = np.inf
        if sf[NBF, s] > 0.0 and lev > 0.0 and lev < np.inf:
            vf = sf[TCK, s] + max(sf[TGT, s] - sf[CLK, s], 0.0) / lev
            if wide and th < np.inf:
                vw = sf[TCK, s] + max(th + sf[WTG, s] - sf[CLK, s], 0.0) / lev
        b = s // BLOCK
        old = fval[s]
        fval[s] = vf
        if vf <= fmin[b]:
            fmin[b] = vf
        elif old == fmin[b]:
            fdirty[b] = True
        if wide:
            old = wval[s]
            wval[s] = vw
            if vw <= wmin[b]:
                wmin[b] = vw
            elif old == wmin[b]:
                wdirty[b] = True
    nd_[0] = 0


@njit
def _solve(  # type: ignore[no-untyped-def]
    ci, kv, t, on, split, ra, rb, rbl, rc, cl, adj, cch, lrow, co_r0, nlive, logs, work, ck,
):
    """Bring coflow ``ci``'s levels up to date at ``t``; True if a row gets a rate.

    The levels, the coflow's use of each link and their caching are those of
    :func:`coflowopt.sim.kernels.dclas._levels` (strict pass: slot 0), with the
    same arithmetic in the same order. When the coflow runs (``on``), the
    slots whose level changed have their clocks brought to ``t`` first, and
    the visited rows whose binding moves are re-anchored (:func:`_flips`).
    Rows are visited unless their other link's level is strictly below the
    changed link's old and new levels (then the row stays bound there).
    """
    ckey, cval, clam, cu, cdem = cch[:5]
    crc, npos, clog, scratch = cch[6:10]
    logbuf, log0, loglen = logs[0], logs[2], logs[3]
    capv, lam_l, lam_r, nob = scratch[:4]
    lam, W, hi = scratch[6], scratch[8], scratch[9]
    (sf, bind, anc, tp, olv, need, row_fl, head, row_ptr, sufmax, cfr, nrun, start, cos, wide_,
     iix, fix, wix, dirty, dl, nd_, thv, rec, fr, fb, thl, chg) = ck
    L = kv.size
    first = not cval[0, ci]
    keyo = ckey[0, ci]
    work[W_SOLVED] += 1
    dm = cdem[0, ci]
    u = cu[0, ci]
    rcs = crc[0]
    for j in range(L):
        capv[j] = kv[j] if kv[j] > 0.0 else 0.0
    mark, ctr = adj[0], adj[1]
    sl, acl, al, sr, acr, ar = adj[2:]
    ctr[0] += 1
    waterfill(
        capv[:split], capv[split:], W, W, dm[:split], dm[split:], ra, rbl, rc, rc,
        sl[ci], acl[ci], al, sr[ci], acr[ci], ar, nob, mark, ctr[0], lam_l, lam_r, True, False,
    )
    for j in range(split):
        lam[j] = lam_l[j] if kv[j] >= 0.0 else 0.0
    for j in range(split, L):
        lam[j] = lam_r[j - split] if kv[j] >= 0.0 else 0.0
    lo = clam[0, ci]
    for j in range(L):
        olv[j] = 0.0 if first else lo[j]
        hi[j] = lam[j] if lam[j] > olv[j] else olv[j]
        thl[j] = lam[j] if lam[j] < olv[j] else olv[j]
        chg[j] = cl[ci, j] > 0 and not first and lam[j] != olv[j]
    record, npc = rec[0], rec[7]
    base = ci * L
    wide = wide_[cos[ci]]
    # The coflow's use of each link and its count of rows with a rate, by differences:
    # rows that lost flows at the old levels (their log; a row listed twice adds 0 the
    # second time), then rows whose level may have changed, with their flows now.
    nf = 0
    npo = npos[0, ci]
    nvis = 0
    if first:
        for q in range(co_r0[ci], co_r0[ci] + nlive[ci]):
            r = lrow[q]
            x = rc[r]
            rcs[r] = x
            a = ra[r]
            b = rb[r]
            lv = _eff(min(lam[a], lam[b]))
            if lv > 0.0 and x > 0.0:
                u[a] += lv * x
                u[b] += lv * x
                npo += 1
        nvis = nlive[ci]
    else:
        for q in range(clog[0, ci], loglen[ci]):
            r = logbuf[log0[ci] + q]
            a = ra[r]
            b = rb[r]
            ov = _eff(min(olv[a], olv[b]))
            orc = rcs[r]
            x = rc[r]
            rcs[r] = x
            if ov > 0.0 and orc != x:
                d = ov * x - ov * orc
                u[a] += d
                u[b] += d
                if orc > 0.0 and x == 0.0:
                    npo -= 1
            nvis += 1
    for j in range(L):
        if chg[j]:
            s = base + j
            if on and sf[NBF, s] > 0.0:
                # the slot's rows change rate now: its clock (and their pieces) up to t
                ol = _eff(lo[j])
                if record:
                    lst, a0, a1 = _on_link(ci, j, split, adj)
                    for q in range(a0, a1):
                        r = lst[q]
                        if bind[r] == j:
                            for jf in range(head[r], row_ptr[r + 1]):
                                npc[0] = served(rec[1][row_fl[jf]], tp[r], t, ol, rec[2], start,
                                                record, npc[0], rec[3], rec[4], rec[5], rec[6])
                            tp[r] = t
                sf[CLK, s] += ol * (t - sf[TCK, s])
                sf[TCK, s] = t
                if dirty[s] == 0:
                    dirty[s] = 2
                    dl[nd_[0]] = s
                    nd_[0] += 1
            up = j < split
            if up:
                lst, a0, a1, other = al, sl[ci, j], sl[ci, j] + acl[ci, j], rb
            else:
                lst, a0, a1, other = ar, sr[ci, j - split], sr[ci, j - split] + acr[ci, j - split], ra
            th = thl[j]
            for q in range(a0, a1):
                r = lst[q]
                o = other[r]
                # a row stays bound to its other link, at its rate, when that link's level
                # was and is strictly below this one's old and new levels; a row taken by
                # its uplink's scan is not taken again by its downlink's
                if hi[o] < th or (not up and chg[o] and not hi[j] < thl[o]):
                    continue
                x = rc[r]
                if x <= 0.0:
                    continue
                nvis += 1
                if up:
                    a, b = j, o
                else:
                    a, b = o, j
                la_ = lam[a]
                lb_ = lam[b]
                oa = olv[a]
                ob_ = olv[b]
                lv = _eff(la_ if la_ < lb_ else lb_)
                ov = _eff(oa if oa < ob_ else ob_)
                if lv != ov:
                    d = lv * x - ov * x
                    u[a] += d
                    u[b] += d
                    if ov == 0.0:
                        npo += 1
                    elif lv == 0.0:
                        npo -= 1
                if on:
                    # the row's binding before (its coflow ran: it was bound by the old levels)
                    nb = -1 if lv == 0.0 else (a if la_ <= lb_ else b)
                    obd = -1 if ov == 0.0 else (a if oa <= ob_ else b)
                    if nb != obd:
                        fr[nf] = r
                        fb[nf] = nb
                        nf += 1
        lo[j] = lam[j]
        keyo[j] = kv[j]
    npos[0, ci] = npo
    work[W_CAND] += nvis
    if nf:
        work[W_CHANGED] += nf
        _flips(nf, fr, fb, ci, t, L, split, adj, lo, olv, rc, bind, anc, tp, need, row_fl, head,
               row_ptr, sufmax, sf, nrun, start, cos[ci], wide, iix, dirty, dl, nd_, rec)
    if nd_[0] > 0:
        _settle(ci, L, split, lo, thv[ci], adj, bind, anc, need, row_fl, head, sufmax, sf, fix,
                wix, wide, dirty, dl, nd_)
    if on:
        cfr[ci] = _rate(ci, L, lo, sf)
    cval[0, ci] = True
    clog[0, ci] = loglen[ci]
    return npos[0, ci] > 0


@njit
def _switch(p, on, t, L, split, ra, rb, lo, lrow, co_r0, nlive, rc, adj, ck, work):  # type: ignore[no-untyped-def]
    """Coflow ``p`` starts (``on``) or stops running at ``t``: bind or stop all its live rows."""
    (sf, bind, anc, tp, olv, need, row_fl, head, row_ptr, sufmax, cfr, nrun, start, cos, wide_,
     iix, fix, wix, dirty, dl, nd_, thv, rec, fr, fb) = ck[:25]
    wide = wide_[cos[p]]
    for j in range(L):
        olv[j] = lo[j]
    nf = 0
    for q in range(co_r0[p], co_r0[p] + nlive[p]):
        r = lrow[q]
        if rc[r] <= 0.0:
            continue
        nb = -1
        if on:
            la_ = lo[ra[r]]
            lb_ = lo[rb[r]]
            lv = la_ if la_ < lb_ else lb_
            if lv > 0.0 and lv < np.inf:
                nb = ra[r] if la_ <= lb_ else rb[r]
        if nb != bind[r]:
            fr[nf] = r
            fb[nf] = nb
            nf += 1
    work[W_CHANGED] += nf
    _flips(nf, fr, fb, p, t, L, split, adj, lo, olv, rc, bind, anc, tp, need, row_fl, head,
           row_ptr, sufmax, sf, nrun, start, cos[p], wide, iix, dirty, dl, nd_, rec)
    cfr[p] = _rate(p, L, lo, sf) if on else 0.0
    _settle(p, L, split, lo, thv[p], adj, bind, anc, need, row_fl, head, sufmax, sf, fix, wix,
            wide, dirty, dl, nd_)


@njit
def _strict(order, co_r0, ra, rb, rbl, rc, cl, split, cap, sat, adj, cch, lrow, nlive, ndead,  # type: ignore[no-untyped-def]
            logs, work, ck, on, t):
    """The strict-priority pass: coflow by coflow on what is left; which coflows run.

    A coflow whose levels stand (the test of :func:`_solve`, made here: a call passing
    the kernel's arrays costs about 10 ns per array) skips the call; its usable demand
    is brought up to date at its next solve (:func:`coflowopt.sim.kernels.dclas._demand`
    catches up from its last call).
    """
    ckey, cval, clam, cu = cch[:4]
    npos, clog = cch[7], cch[8]
    loglen = logs[3]
    L = cap.size
    residual = cap.copy()
    kv = np.empty(L)
    dead = np.empty(L, np.bool_)
    run = np.zeros(on.size, np.bool_)
    fresh = False  # kv and dead are up to date with residual
    for p in range(order.size):
        ci = order[p]
        if nlive[ci] - ndead[ci] <= 0:
            continue
        if not fresh:
            alldead = True
            for j in range(L):
                dead[j] = residual[j] <= sat * cap[j]
                if dead[j]:
                    kv[j] = -1.0
                else:
                    kv[j] = residual[j]
                    alldead = False
            if alldead:
                break
            fresh = True
        if _blocked(cl, ci, split, residual, sat, cap):
            continue
        same = cval[0, ci] and clog[0, ci] == loglen[ci]
        if same:
            keyo = ckey[0, ci]
            lo = clam[0, ci]
            u = cu[0, ci]
            for j in range(L):
                if cl[ci, j] > 0 and keyo[j] != kv[j]:
                    if not (lo[j] == np.inf and keyo[j] >= 0.0 and kv[j] > u[j] * (1.0 + SPARE)):
                        same = False
                        break
        if same:
            work[W_KEPT] += 1
            if npos[0, ci] <= 0:
                continue
        else:
            _demand(0, ci, dead, split, ra, rb, rc, cl, adj, cch, lrow, co_r0, nlive, logs)
            if not _solve(ci, kv, t, on[ci], split, ra, rb, rbl, rc, cl, adj, cch, lrow, co_r0,
                          nlive, logs, work, ck):
                continue
        run[ci] = True
        u = cu[0, ci]
        for j in range(L):
            residual[j] -= u[j]
            if residual[j] < 0.0:
                residual[j] = 0.0
        fresh = False
    return run


@njit
def dclas_clock_stretch(  # type: ignore[no-untyped-def]
    t0, t_stop, tol, act, la, lb, L, cap, size, sent, fco, cf_left, start,
    record, max_pieces, rate_out, done_f, done_t, pc_f, pc_t0, pc_t1, pc_r, lv_u, lv_t, lv_x,
    cos, queue, wide, th_n, th_w, weights, cf_sent, cf_long, split, sat, max_rounds, ptol, exceed,
    stop_co, work, adm_t, adm_at, dense_rows,
):
    """Advance the strict-priority multi-level queue allocation of ``act`` from ``t0``.

    Arguments and result as :func:`coflowopt.sim.kernels.dclas.dclas_stretch`
    (``weights`` must be empty: strict priority; ``dense_rows``, for weighted
    rounds, is not used), and admissions: the last
    ``adm_t.size`` coflows of ``cos`` are not yet admitted (unless ``adm_at``
    already gives the time the kernel admitted them, in an earlier run); each
    is admitted at the first event (at ``t_e``, reaching ``t`` with the
    completions within the tolerance) with ``adm_t[i] <= t_e + tol * max(1,
    |t_e|)``, after that event's completions, as the engine admits, and
    ``adm_at[i] = t``; it enters the queue ``queue`` gives it, behind the
    coflows admitted before it. ``t_stop`` is the first admission not listed.
    """
    n = act.size
    m = cos.size
    m0 = m - adm_t.size
    pend, t_adm = _pending(m, adm_t, adm_at)  # t_adm: the next admission the kernel makes
    nq = th_n.size
    last = nq - 1
    (anywide, ra, rb, rbl, co_r0, co_r1, rco, row_ptr, row_fl, need, fl0, rc, sufmax, head, cl,
     adj, lrow, nlive, ndead) = _setup(act, fco, cf_left.size, cos, wide, la, lb, L, split, size, sent)
    nrows = ra.size
    R = L - split
    nr1 = max(nrows, 1)
    # rows: binding (-1: not running), anchor (running: bytes since t0 = clock - anchor;
    # else the bytes since t0), start of the current piece (record)
    bind = np.full(nr1, -1, np.int64)
    anc = np.zeros(nr1)
    tp = np.full(nr1, t0)
    # slots (coflow position, link): clock, its time, flows bound, smallest targets
    ns_ = max(m * L, 1)
    sf = np.zeros((5, ns_))
    sf[TGT] = np.inf
    sf[WTG] = np.inf
    fix = _index(ns_, np.inf)  # next completion of each slot
    fval, bmin = fix[0], fix[1]
    nb = bmin.size
    wix = _index(ns_ if anywide else 0, np.inf)  # wide coflows: next threshold crossing
    iix = _index(nr1 if anywide else 0, np.inf)  # still rows: minus their longest flow's bytes
    if anywide:
        for r in range(nrows):
            if wide[cos[rco[r]]] and rc[r] > 0:
                iix[0][r] = -sufmax[head[r]]
        for b in range(iix[1].size):
            _block_min(b, iix)
    dirty = np.zeros(ns_, np.int64)
    dl = np.empty(ns_, np.int64)
    nd_ = np.zeros(1, np.int64)
    nrun = np.zeros(m, np.int64)
    cfr = np.zeros(m)
    cfs = np.empty(m)
    dmx = np.empty(m)  # the bytes of the coflow's longest finished flow (wide coflows)
    for p in range(m):
        cfs[p] = cf_sent[cos[p]]
        dmx[p] = cf_long[cos[p]]
    tcf = t0
    s0 = np.arange(m) * L  # each coflow's slots: s0[p] to s1[p]
    s1 = s0 + L
    dem = np.zeros(m, np.bool_)  # coflows demoted by one queue (_demotions)
    qof = np.empty(m, np.int64)
    thv = np.empty(m)  # each coflow's wide threshold now (inf: none)
    for p in range(m):
        qof[p] = queue[cos[p]]
        thv[p] = th_w[qof[p]] if qof[p] < last else np.inf
    order = np.empty(m, np.int64)
    on = np.zeros(m, np.bool_)
    cch = (
        np.empty((1, m, L)), np.zeros((1, m), np.bool_), np.zeros((1, m, L)),
        np.zeros((1, m, L)), np.zeros((1, m, L)), np.empty((1, 1)), np.empty((1, nr1)),
        np.zeros((1, m), np.int64), np.zeros((1, m), np.int64),
        (np.empty(L), np.empty(split), np.empty(R), np.zeros(0, np.int64),
         np.zeros(nr1, np.int64), np.zeros(1, np.int64), np.empty(L), np.empty(nr1, np.int64),
         np.zeros((0, 0)), np.empty(L)),
        np.zeros((1, m), np.bool_), np.zeros((1, m, L), np.bool_), np.zeros((1, m), np.int64),
    )
    clam = cch[2]
    olv = np.empty(L)
    logs = (np.empty(max(n, 1), np.int64), np.empty(max(n, 1)), fl0, np.zeros(m, np.int64))
    logbuf, logamt, log0, loglen = logs
    npc_ = np.zeros(1, np.int64)
    rec = (record, act, fco, pc_f, pc_t0, pc_t1, pc_r, npc_)
    ck = (sf, bind, anc, tp, olv, need, row_fl, head, row_ptr, sufmax, cfr, nrun, start, cos, wide,
          iix, fix, wix, dirty, dl, nd_, thv, rec, np.empty(nr1, np.int64), np.empty(nr1, np.int64),
          np.empty(L), np.zeros(L, np.bool_))
    work[W_STRETCHES] += 1
    work[W_ROWS] += nrows
    compact = np.zeros(m, np.bool_)  # coflows with rows finished at this event
    lost = np.zeros(m, np.bool_)  # coflows with flows finished at this event
    t = t0
    nd = 0
    nev = 0
    reason = 0
    first = True
    thr = t0 + tol * max(1.0, abs(t0))  # the last event's threshold (admissions due by it)
    while True:
        if not first:
            # demotions, with the rates in force up to now
            if anywide:
                _flush(wix)
                _flush(iix)
            while _demotions(t, ptol, exceed, last, cos, qof, cf_left, pend, wide, th_n, th_w, dmx,
                             cfs, cfr, tcf, co_r0, co_r1, iix, s0, s1, wix, dem):
                for p in range(m):
                    if dem[p]:
                        qk = qof[p] + 1
                        qof[p] = qk
                        queue[cos[p]] = qk
                        if wide[cos[p]]:
                            thv[p] = th_w[qk] if qk < last else np.inf
                            for j in range(L):
                                _refresh(p * L + j, clam[0, p, j], thv[p], sf, fix, wix, True)
                if anywide:
                    _flush(wix)
        first = False
        o = _queue_order(qof, cos, cf_left, nq, order, pend)
        work[W_ALLOC] += 1
        if t > tcf:
            for p in range(m):
                cfs[p] += cfr[p] * (t - tcf)
            tcf = t
        run = _strict(order[:o], co_r0, ra, rb, rbl, rc, cl, split, cap, sat, adj, cch, lrow,
                      nlive, ndead, logs, work, ck, on, t)
        for p in range(m):
            if run[p] != on[p]:
                on[p] = run[p]
                _switch(p, run[p], t, L, split, ra, rb, clam[0, p], lrow, co_r0, nlive, rc, adj,
                        ck, work)
        # the next demotion under these rates
        if anywide:
            _flush(wix)
        wake = _next_demotion(t, tol, qof, last, nrun, cos, wide, th_n, cfs, cfr, tcf, s0, s1,
                              wix)
        if record and npc_[0] > max_pieces - 3 * n - 4:
            reason = 2
            break
        # the next event: the earliest completion of a running slot
        _flush(fix)
        t_fin = np.inf
        for b in range(nb):
            if bmin[b] < t_fin:
                t_fin = bmin[b]
        t_next = min(t_fin, t_stop, wake, t_adm)
        if t_next == np.inf:
            reason = 3
            break
        t_next = max(t_next, t)
        thr = t_next + tol * max(1.0, abs(t_next))
        nev += 1
        for p in range(m):
            cfs[p] += cfr[p] * (t_next - tcf)
        tcf = t_next
        t_new = t_next
        coflow_done = False
        npc = npc_[0]
        for b in range(nb):
            if not bmin[b] <= thr:
                continue
            for s in range(b * BLOCK, min(b * BLOCK + BLOCK, ns_)):
                if not fval[s] <= thr:
                    continue
                p = s // L
                j = s - p * L
                x = clam[0, p, j]
                c0 = sf[CLK, s]
                tc = sf[TCK, s]
                wk = wide[cos[p]]
                lst, a0, a1 = _on_link(p, j, split, adj)
                tg = np.inf
                wg = np.inf
                for q in range(a0, a1):
                    r = lst[q]
                    if bind[r] != j:
                        continue
                    e = row_ptr[r + 1]
                    h = head[r]
                    # a flow's completion, as in dclas_stretch (written out, not a helper:
                    # a call per flow passing these arrays costs more than its bookkeeping)
                    while h < e:
                        i = row_fl[h]
                        fi = tc + max(need[i] + anc[r] - c0, 0.0) / x
                        if fi > thr:
                            break
                        f = act[i]
                        if record:
                            npc = served(f, tp[r], fi, x, fco, start, record, npc, pc_f, pc_t0,
                                         pc_t1, pc_r)
                        cfs[p] -= x * (t_next - fi)
                        lost[p] = True
                        sent[f] = size[f]
                        if size[f] > dmx[p]:
                            dmx[p] = size[f]
                        done_f[nd] = f
                        done_t[nd] = fi
                        nd += 1
                        if fi > t_new:
                            t_new = fi
                        k = fco[f]
                        cf_left[k] -= 1
                        if cf_left[k] == 0 and stop_co[k]:
                            coflow_done = True
                        h += 1
                    nf = h - head[r]
                    if nf:
                        logbuf[log0[p] + loglen[p]] = r
                        logamt[log0[p] + loglen[p]] = nf
                        loglen[p] += 1
                        head[r] = h
                        rc[r] = e - h
                        sf[NBF, s] -= nf
                    if h == e:
                        bind[r] = -1
                        cl[p, ra[r]] -= 1
                        cl[p, rb[r]] -= 1
                        ndead[p] += 1
                        nrun[p] -= 1
                        compact[p] = True
                        continue
                    v = need[row_fl[h]] + anc[r]
                    if v < tg:
                        tg = v
                    if wk:
                        v = anc[r] - sufmax[h]
                        if v < wg:
                            wg = v
                sf[TGT, s] = tg
                sf[WTG, s] = wg
                _refresh(s, x, thv[p], sf, fix, wix, wk)
            _block_min(b, fix)
        npc_[0] = npc
        for p in range(m):
            if lost[p]:
                lost[p] = False
                cfr[p] = _rate(p, L, clam[0, p], sf)
            if compact[p]:
                compact[p] = False
                if 2 * ndead[p] >= nlive[p]:
                    _compact(p, co_r0, rc, lrow, nlive, ndead, adj)
        t = t_new
        if t_adm <= thr:
            t, t_adm = _admissions(t, thr, m0, adm_t, adm_at, pend)
        if t_stop <= thr or coflow_done:
            reason = 0 if t_stop <= thr else 1
            break

    # close the running pieces at t; report the rates from t on
    npc = npc_[0]
    for p in range(m):
        cf_sent[cos[p]] = cfs[p] + cfr[p] * (t - tcf)
    for r in range(nrows):
        jb = bind[r]
        p = rco[r]
        if jb >= 0:
            s = p * L + jb
            x = clam[0, p, jb]
            sv = sf[CLK, s] + x * (t - sf[TCK, s]) - anc[r]
        else:
            x = 0.0
            sv = anc[r]
        for j in range(head[r], row_ptr[r + 1]):
            i = row_fl[j]
            f = act[i]
            if x > 0 and record:
                npc = served(f, tp[r], t, x, fco, start, record, npc, pc_f, pc_t0, pc_t1, pc_r)
            sent[f] += sv
            rate_out[f] = x
    return t, thr, nd, npc, 0, nev, reason
