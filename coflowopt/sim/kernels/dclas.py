"""Multi-level coflow queues over time, compiled (``aalo``'s D-CLAS and ``mcs``).

The stretch kernel runs the allocation of :mod:`coflowopt.sim.policies._queues`
(FIFO within a queue, max-min within a coflow, weighted rounds or strict
priority across queues) through every flow completion, queue demotion and
coflow completion up to the next admission (or the completion of a coflow
that others depend on), recomputing the allocation at each such event
exactly as the reference policies do there.

Flows of one coflow on the same two links always get the same rate, so the
allocation works on *rows* (coflow, uplink, downlink) weighted by their
number of unfinished flows; a coflow's max-min rates are one call of the
shared water-filling (:func:`coflowopt.kernels.maxmin.waterfill`) on its
usable rows.

Cost. Each (slot, coflow) keeps its last result (see :func:`_levels`), so an
event costs, per coflow and slot, ``O(L)`` when its inputs are unchanged and
otherwise the water-filling's frozen rows plus the rows that lost flows,
whose usability changed, or whose level may have moved with a link's; then
``O(1)`` per row whose rate changed (the next completion comes from block
minima of the rows' completion times). Rows that keep their rate, and flows
that wait, cost nothing per event. A stretch starts with ``O(n)`` set-up for
its ``n`` flows.

Scope: the big switch (two-link routes, uplinks below the split, downlinks
from it); the policies use their reference path otherwise.
"""

from __future__ import annotations

import numpy as np

from ..._jit import njit
from ...kernels.maxmin import waterfill
from ._common import served

__all__ = ["WORK", "dclas_stretch"]

BLOCK = 64
"""Rows per block of the next-completion index (each block keeps its earliest completion)."""

WORK = ("stretches", "rows", "allocations", "rounds", "levels_kept", "levels_solved",
        "rows_revisited", "rate_changes")
"""What the kernel's ``work`` counters count, in order: stretches set up, rows set up
(summed over stretches), allocations computed (one per event), weighted rounds, (slot,
coflow) levels kept unchanged and re-solved by a water-filling, rows revisited after one,
and rows whose rate changed (the strict kernel, :mod:`.dclas_clock`, whose rows follow
their link's clock: rows whose binding moved, see its docstring)."""
(W_STRETCHES, W_ROWS, W_ALLOC, W_ROUNDS, W_KEPT, W_SOLVED, W_CAND, W_CHANGED) = range(8)

SPARE = 1e-9
"""Relative room above a coflow's use of a link it does not fill within which a change of
the link's capacity is known to leave the coflow's max-min levels as they are (see
:func:`_levels`); far above the rounding in the running use."""


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
    mark = np.zeros(nrows, np.int64)
    ctr = np.zeros(1, np.int64)
    return mark, ctr, sl, cl, al, sr, cr, ar


@njit
def _compact(p, co_r0, rc, lrow, nlive, ndead, adj):  # type: ignore[no-untyped-def]
    """Drop coflow ``p``'s finished rows from its live-row and per-link lists (order kept).

    Finished rows have weight 0 in every water-filling, where they add and subtract
    exact zeros; dropping them changes no result, only the work.
    """
    sl, cl, al, sr, cr, ar = adj[2:]
    k = co_r0[p]
    for q in range(co_r0[p], co_r0[p] + nlive[p]):
        r = lrow[q]
        if rc[r] > 0:
            lrow[k] = r
            k += 1
    nlive[p] = k - co_r0[p]
    ndead[p] = 0
    _keep_live(sl[p], cl[p], al, rc)
    _keep_live(sr[p], cr[p], ar, rc)


@njit
def _keep_live(start, cnt, lst, rc):  # type: ignore[no-untyped-def]
    """Keep only rows with flows left in each list ``lst[start[i] : start[i] + cnt[i]]``."""
    for i in range(start.size):
        s0 = start[i]
        k = s0
        for q in range(s0, s0 + cnt[i]):
            if rc[lst[q]] > 0:
                lst[k] = lst[q]
                k += 1
        cnt[i] = k - s0


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
def _on_link(ci, j, split, adj):  # type: ignore[no-untyped-def]
    """Coflow ``ci``'s listed rows on link ``j``: ``lst[a0:a1]``, as ``(lst, a0, a1)``."""
    sl, acl, al, sr, acr, ar = adj[2:]
    if j < split:
        return al, sl[ci, j], sl[ci, j] + acl[ci, j]
    return ar, sr[ci, j - split], sr[ci, j - split] + acr[ci, j - split]


@njit
def _demand_stands(slot, ci, dead, split, cl, dem, dval, ddead, dlog, loglen):  # type: ignore[no-untyped-def]
    """Whether coflow ``ci``'s usable demand in ``slot`` stands for ``dead`` (see :func:`_demand`).

    ``-1``: it must be brought up to date; else ``1`` if the coflow has usable demand,
    ``0`` if not. It stands when it was computed, no row of the coflow lost flows since,
    and no link the coflow has live rows on died or revived. (A link without live rows
    of the coflow keeps its old dead flag: no row of the coflow on it can lose flows
    again.) A separate test with few arguments: :func:`_demand`'s arrays cost their
    reference counting on every call.
    """
    if not dval[slot, ci] or dlog[slot, ci] != loglen[ci]:
        return -1
    for j in range(dead.size):
        if cl[ci, j] > 0 and ddead[slot, ci, j] != dead[j]:
            return -1
    for j in range(split):
        if dem[slot, ci, j] > 0.0:
            return 1
    return 0


@njit
def _demand(slot, ci, dead, split, ra, rb, rc, cl, adj, cch, lrow, co_r0, nlive, logs):  # type: ignore[no-untyped-def]
    """Bring coflow ``ci``'s usable demand per link in ``slot`` up to ``dead``; True if any.

    A row is usable when neither of its links is ``dead``; a link's usable demand
    is the number of unfinished flows of usable rows on it. Kept per (slot,
    coflow) and corrected from the last call by the rows that lost flows since
    (the coflow's log, by the amounts lost, with the old dead links) and the rows
    on links that died or revived: exact, as these are whole flow counts.
    """
    dem, dval, ddead, dlog, scratch = cch[4], cch[10], cch[11], cch[12], cch[9]
    logbuf, logamt, log0, loglen = logs
    cmark, cctr = scratch[4], scratch[5]
    L = dead.size
    dm = dem[slot, ci]
    kd = ddead[slot, ci]
    if not dval[slot, ci]:
        dm[:] = 0.0
        for q in range(co_r0[ci], co_r0[ci] + nlive[ci]):
            r = lrow[q]
            a = ra[r]
            b = rb[r]
            if not dead[a] and not dead[b]:
                dm[a] += rc[r]
                dm[b] += rc[r]
        dval[slot, ci] = True
    else:
        for q in range(dlog[slot, ci], loglen[ci]):
            r = logbuf[log0[ci] + q]
            a = ra[r]
            b = rb[r]
            if not kd[a] and not kd[b]:
                dm[a] -= logamt[log0[ci] + q]
                dm[b] -= logamt[log0[ci] + q]
        cctr[0] += 1
        ep = cctr[0]
        for j in range(L):
            if cl[ci, j] == 0 or kd[j] == dead[j]:
                continue
            lst, a0, a1 = _on_link(ci, j, split, adj)
            for q in range(a0, a1):
                r = lst[q]
                if cmark[r] == ep:
                    continue
                cmark[r] = ep
                a = ra[r]
                b = rb[r]
                old = not kd[a] and not kd[b]
                new = not dead[a] and not dead[b]
                if old != new:
                    x = rc[r] if new else -rc[r]
                    dm[a] += x
                    dm[b] += x
    dlog[slot, ci] = loglen[ci]
    anyu = False
    for j in range(L):
        kd[j] = dead[j]
        if j < split and dm[j] > 0.0:
            anyu = True
    return anyu


@njit
def _stands(slot, ci, kv, cl, ckey, cval, clam, cu, clog, loglen):  # type: ignore[no-untyped-def]
    """True when coflow ``ci``'s last levels in ``slot`` stand for the keys ``kv`` (see :func:`_levels`).

    A separate test with few arguments: a call that passes :func:`_levels`' arrays costs
    their reference counting, more than the test itself when the levels stand.
    """
    if not cval[slot, ci] or clog[slot, ci] != loglen[ci]:
        return False
    keyo = ckey[slot, ci]
    lo = clam[slot, ci]
    u = cu[slot, ci]
    for j in range(kv.size):
        if cl[ci, j] > 0 and keyo[j] != kv[j]:
            # a link the coflow does not fill (level inf), alive before and now, with
            # more than its use left: its capacity binds nothing, so the max-min
            # solution is the same one
            if not (lo[j] == np.inf and keyo[j] >= 0.0 and kv[j] > u[j] * (1.0 + SPARE)):
                return False
    return True


@njit
def _levels(slot, ci, kv, split, ra, rb, rbl, rc, cl, adj, cch, lrow, co_r0, nlive, logs, touch, dense):  # type: ignore[no-untyped-def]
    """Bring coflow ``ci``'s max-min levels in ``slot`` up to date; True if a row gets a rate.

    ``kv[j]``: ``-1`` for a dead link, else the capacity the coflow gets on it;
    ``slot``: a weighted round, or the strict pass (the last slot). A row is
    usable when both its links are alive; its level is the water level of
    max-min over the usable rows (weights: unfinished flows), 0 otherwise. The
    usable demand must be up to date for these dead links (:func:`_demand`).

    Each (slot, coflow) keeps the result of its last computation: per link the
    key ``kv`` and the level, per row its level and weight, and the coflow's use
    of each link. When neither ``kv`` (where the coflow has live rows) nor the
    coflow's rows (its log of rows that lost flows) changed, that result stands.
    Nor does it change when the only keys that changed are of links the coflow does
    not fill (level ``inf``), alive before and after, whose new capacity still exceeds
    the coflow's use of them by a relative :data:`SPARE`: a link that is not a
    bottleneck constrains no row, and the max-min solution is unique. (Solving again
    would give that solution up to rounding; the kept levels are the last solve's.)
    The caller tests that first (:func:`_stands`) and calls this only when the
    result does not stand. Then the water-filling is rerun (the same levels, bit
    for bit, as from scratch; a coflow in ``dense`` takes the dense one, over all
    its unfinished rows with dead links at capacity 0, which leaves their rows at
    level 0 as leaving them out does) and only the rows that lost flows and the rows on links whose
    level changed (a link that dies or revives changes level) are revisited,
    less those whose other link's level was and is at most the changed link's
    old and new levels (a row's level is the smaller of its two links', so it
    stands; when both links changed, one of the two scans takes any row whose
    level moves); the use of each link follows by differences. Rows whose level changes are
    listed in ``touch``.
    """
    ckey, cval, clam, cu, cdem, clv, crc, npos, clog, scratch = cch[:10]
    logbuf, log0, loglen = logs[0], logs[2], logs[3]
    tmark, tl, tcount, work = touch
    capv, lam_l, lam_r, nob, cmark, cctr, lam, cand, W, hi = scratch
    L = kv.size
    first = not cval[slot, ci]
    keyo = ckey[slot, ci]
    work[W_SOLVED] += 1
    cctr[0] += 1
    ep = cctr[0]
    dm = cdem[slot, ci]
    u = cu[slot, ci]
    lvs = clv[slot]
    rcs = crc[slot]
    nc = 0
    if first:
        for q in range(co_r0[ci], co_r0[ci] + nlive[ci]):
            r = lrow[q]
            lvs[r] = 0.0
            rcs[r] = 0.0
            cmark[r] = ep
            cand[nc] = r
            nc += 1
    else:
        for q in range(clog[slot, ci], loglen[ci]):
            r = logbuf[log0[ci] + q]
            if cmark[r] != ep:
                cmark[r] = ep
                cand[nc] = r
                nc += 1
    for j in range(L):
        capv[j] = kv[j] if kv[j] > 0.0 else 0.0
    mark, ctr = adj[0], adj[1]
    sl, acl, al, sr, acr, ar = adj[2:]
    ctr[0] += 1
    gidx, Wd, WdT, dsl, dsr, gz = dense
    g = gidx[ci]
    if g >= 0:
        waterfill(
            capv[:split], capv[split:], Wd[g], WdT[g], dsl[g], dsr[g], ra, rbl, rc, rc,
            gz[:split], gz[:split], al, gz[:L - split], gz[:L - split], ar, nob, mark, ctr[0],
            lam_l, lam_r, True, False,
        )
    else:
        waterfill(
            capv[:split], capv[split:], W, W, dm[:split], dm[split:], ra, rbl, rc, rc,
            sl[ci], acl[ci], al, sr[ci], acr[ci], ar, nob, mark, ctr[0], lam_l, lam_r, True, False,
        )
    for j in range(split):
        lam[j] = lam_l[j] if kv[j] >= 0.0 else 0.0
    for j in range(split, L):
        lam[j] = lam_r[j - split] if kv[j] >= 0.0 else 0.0
    lo = clam[slot, ci]
    if not first:
        for j in range(L):
            hi[j] = lam[j] if lam[j] > lo[j] else lo[j]
    for j in range(L):
        if cl[ci, j] > 0 and not first and lam[j] != lo[j]:
            # the rows on link j (written out: a call per link costs more than its rows)
            if j < split:
                lst, a0, a1, other = al, sl[ci, j], sl[ci, j] + acl[ci, j], rb
            else:
                lst, a0, a1, other = ar, sr[ci, j - split], sr[ci, j - split] + acr[ci, j - split], ra
            th = lam[j] if lam[j] < lo[j] else lo[j]
            for q in range(a0, a1):
                r = lst[q]
                # a row's level is min(lam[a], lam[b]): it stands when its other link's
                # level was and is at most this link's old and new ones (if both links
                # changed, the scan of one of them takes the row whenever its level moves)
                if hi[other[r]] <= th:
                    continue
                if cmark[r] != ep:
                    cmark[r] = ep
                    cand[nc] = r
                    nc += 1
        lo[j] = lam[j]
        keyo[j] = kv[j]
    work[W_CAND] += nc
    ntl = tcount[0]
    tep = tcount[1]
    for k in range(nc):
        r = cand[k]
        a = ra[r]
        b = rb[r]
        lv = min(lam[a], lam[b])
        if not (lv > 0.0 and lv < np.inf):
            lv = 0.0
        ov = lvs[r]
        orc = rcs[r]
        nrc = rc[r]
        if lv == ov and nrc == orc:
            continue
        oc = ov * orc
        ncn = lv * nrc
        if ncn != oc:
            u[a] += ncn - oc
            u[b] += ncn - oc
        if ov > 0.0 and orc > 0.0:
            npos[slot, ci] -= 1
        if lv > 0.0 and nrc > 0.0:
            npos[slot, ci] += 1
        lvs[r] = lv
        rcs[r] = nrc
        if lv != ov and tmark[r] != tep:
            tmark[r] = tep
            tl[ntl] = r
            ntl += 1
    tcount[0] = ntl
    cval[slot, ci] = True
    clog[slot, ci] = loglen[ci]
    return npos[slot, ci] > 0


@njit
def _allocate(  # type: ignore[no-untyped-def]
    order, m, co_r0, ra, rb, rbl, rc, cl, split, cap, qof, nq, weights, sat, max_rounds,
    nonempty, adj, cch, lrow, nlive, logs, touch, curmask, dense,
):
    """The queue allocation: which slots each coflow takes a rate in (``curmask``).

    ``order``: the unfinished coflows' positions, queue-major. Each coflow's
    rate on a row is the sum of its levels over the slots in its mask
    (weighted rounds first, then the strict pass in the last slot); rows whose
    level changed in a slot are listed in ``touch``.
    """
    ckey, cval, clam, cu, dem = cch[:5]
    npos, clog = cch[7], cch[8]
    dval, ddead, dlog = cch[10], cch[11], cch[12]
    loglen = logs[3]
    work = touch[3]
    L = cap.size
    residual = cap.copy()
    kv = np.empty(L)
    dead = np.empty(L, np.bool_)
    if weights.size > 0 and nonempty > 1:
        present = np.zeros((nq, L), np.bool_)
        share = np.zeros((nq, L))
        live = np.zeros(m, np.bool_)
        used = np.empty(L)
        for rnd in range(max_rounds):
            work[W_ROUNDS] += 1
            alldead = True
            for j in range(L):
                if not residual[j] <= sat * cap[j]:
                    alldead = False
            if alldead:
                break
            present[:, :] = False
            for j in range(L):
                dead[j] = residual[j] <= sat * cap[j]
            for p in range(order.size):
                ci = order[p]
                qi = qof[ci]
                live[ci] = False
                if _blocked(cl, ci, split, residual, sat, cap):
                    continue
                use = _demand_stands(rnd, ci, dead, split, cl, dem, dval, ddead, dlog, loglen)
                if use == 1 or (use < 0 and _demand(rnd, ci, dead, split, ra, rb, rc, cl, adj,
                                                    cch, lrow, co_r0, nlive, logs)):
                    live[ci] = True
                    dm = dem[rnd, ci]
                    for j in range(L):
                        if dm[j] > 0.0:
                            present[qi, j] = True
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
            used[:] = 0.0
            for p in range(order.size):
                ci = order[p]
                if not live[ci]:
                    continue
                qi = qof[ci]
                for j in range(L):
                    if residual[j] <= sat * cap[j]:
                        kv[j] = -1.0
                    else:  # a share left below sat is rounding (as in the reference)
                        kv[j] = share[qi, j] if share[qi, j] > sat * cap[j] else 0.0
                if _stands(rnd, ci, kv, cl, ckey, cval, clam, cu, clog, loglen):
                    work[W_KEPT] += 1
                    if npos[rnd, ci] == 0:
                        continue
                elif not _levels(rnd, ci, kv, split, ra, rb, rbl, rc, cl, adj, cch, lrow, co_r0,
                                 nlive, logs, touch, dense):
                    continue
                curmask[ci] |= 1 << rnd
                u = cu[rnd, ci]
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
    # strict priority (or the final pass of the weighted rounds): the last slot
    sslot = cu.shape[0] - 1
    for p in range(order.size):
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
            dead[j] = residual[j] <= sat * cap[j]
            if dead[j]:
                kv[j] = -1.0
            else:
                kv[j] = residual[j]
                alldead = False
        if alldead:
            return
        if _blocked(cl, ci, split, residual, sat, cap):
            continue
        if _demand_stands(sslot, ci, dead, split, cl, dem, dval, ddead, dlog, loglen) < 0:
            _demand(sslot, ci, dead, split, ra, rb, rc, cl, adj, cch, lrow, co_r0, nlive, logs)
        if _stands(sslot, ci, kv, cl, ckey, cval, clam, cu, clog, loglen):
            work[W_KEPT] += 1
            if npos[sslot, ci] == 0:
                continue
        elif not _levels(sslot, ci, kv, split, ra, rb, rbl, rc, cl, adj, cch, lrow, co_r0,
                         nlive, logs, touch, dense):
            continue
        curmask[ci] |= 1 << sslot
        u = cu[sslot, ci]
        for j in range(L):
            residual[j] -= u[j]
            if residual[j] < 0.0:
                residual[j] = 0.0


@njit
def _rows(act, fco, pos, m, la, lb, split, R, size, sent):  # type: ignore[no-untyped-def]
    """Rows (coflow position, uplink, downlink) of the flows ``act``, coflow by coflow.

    Returns ``(ra, rb, co_r0, co_r1, rco, row_ptr, row_fl, need, fl0)``: a row's flows
    are ``row_fl[row_ptr[r] : row_ptr[r + 1]]`` (positions in ``act``) by
    increasing need (ties: position), the order in which they complete since
    they all run at the row's rate. Counting sorts, plus a stable sort of each
    row's few flows. ``fl0[p]``: where coflow ``p``'s flows start when listed
    coflow by coflow (room for one entry per flow).
    """
    n = act.size
    cnt = np.zeros(m + 1, np.int64)
    ci_of = np.empty(n, np.int64)
    for i in range(n):
        p = pos[fco[act[i]]]
        ci_of[i] = p
        cnt[p + 1] += 1
    for p in range(m):
        cnt[p + 1] += cnt[p]
    byco = np.empty(n, np.int64)
    fill = cnt[:m].copy()
    for i in range(n):
        byco[fill[ci_of[i]]] = i
        fill[ci_of[i]] += 1
    slot = np.full(split * R, -1, np.int64)
    frow = np.empty(n, np.int64)
    ra_l = np.empty(n, np.int64)
    rb_l = np.empty(n, np.int64)
    co_r0 = np.zeros(m, np.int64)
    co_r1 = np.zeros(m, np.int64)
    nrows = 0
    for p in range(m):
        co_r0[p] = nrows
        for q in range(cnt[p], cnt[p + 1]):
            f = act[byco[q]]
            key = la[f] * R + (lb[f] - split)
            if slot[key] < 0:
                slot[key] = nrows
                ra_l[nrows] = la[f]
                rb_l[nrows] = lb[f]
                nrows += 1
            frow[byco[q]] = slot[key]
        for q in range(cnt[p], cnt[p + 1]):
            f = act[byco[q]]
            slot[la[f] * R + (lb[f] - split)] = -1
        co_r1[p] = nrows
    ra = ra_l[:nrows].copy()
    rb = rb_l[:nrows].copy()
    rco = np.empty(nrows, np.int64)
    for p in range(m):
        for r in range(co_r0[p], co_r1[p]):
            rco[r] = p
    row_ptr = np.zeros(nrows + 1, np.int64)
    for i in range(n):
        row_ptr[frow[i] + 1] += 1
    for r in range(nrows):
        row_ptr[r + 1] += row_ptr[r]
    need = np.empty(n)
    for i in range(n):
        f = act[i]
        need[i] = size[f] - sent[f]
    row_fl = np.empty(n, np.int64)
    fill = row_ptr[:nrows].copy()
    for i in range(n):  # by position within each row
        row_fl[fill[frow[i]]] = i
        fill[frow[i]] += 1
    for r in range(nrows):
        lo = row_ptr[r]
        hi = row_ptr[r + 1]
        if hi - lo > 32:
            seg = row_fl[lo:hi].copy()
            o = np.argsort(need[seg], kind="mergesort")
            for k in range(hi - lo):
                row_fl[lo + k] = seg[o[k]]
        else:  # insertion sort: stable
            for k in range(lo + 1, hi):
                v = row_fl[k]
                nv = need[v]
                j = k - 1
                while j >= lo and need[row_fl[j]] > nv:
                    row_fl[j + 1] = row_fl[j]
                    j -= 1
                row_fl[j + 1] = v
    return ra, rb, co_r0, co_r1, rco, row_ptr, row_fl, need, cnt[:m].copy()


@njit
def _index(n, fill):  # type: ignore[no-untyped-def]
    """Values ``val`` (all ``fill``) with the minimum of each block of ``BLOCK`` rows.

    ``(val, bmin, bdirty)``. Writers set ``val[r] = v`` and keep the block minima
    exact in place, with the update written out where it happens (a helper call per
    row cost several times the update itself in compiled code)::

        old = val[r]; val[r] = v; b = r // BLOCK
        if v <= bmin[b]: bmin[b] = v
        elif old == bmin[b]: bdirty[b] = True    # recomputed by _flush before a read

    A dirty block's minimum is recomputed once, by :func:`_flush`, before the minima
    are read again.
    """
    nb = max((n + BLOCK - 1) // BLOCK, 1)
    return np.full(n, fill), np.full(nb, fill), np.zeros(nb, np.bool_)


@njit
def _block_min(b, ix):  # type: ignore[no-untyped-def]
    val, bmin = ix[0], ix[1]
    lo = b * BLOCK
    hi = min(lo + BLOCK, val.size)
    mn = np.inf
    for r in range(lo, hi):
        if val[r] < mn:
            mn = val[r]
    bmin[b] = mn


@njit
def _flush(ix):  # type: ignore[no-untyped-def]
    bdirty = ix[2]
    for b in range(bdirty.size):
        if bdirty[b]:
            _block_min(b, ix)
            bdirty[b] = False


@njit
def _range_min(lo, hi, ix):  # type: ignore[no-untyped-def]
    """``min(val[lo:hi])`` from the block minima, scanning only the partial blocks at the ends."""
    val, bmin = ix[0], ix[1]
    mn = np.inf
    r = lo
    while r < hi:
        b = r // BLOCK
        if r == b * BLOCK and r + BLOCK <= hi:
            if bmin[b] < mn:
                mn = bmin[b]
            r += BLOCK
        else:
            if val[r] < mn:
                mn = val[r]
            r += 1
    return mn


@njit
def _reach_time(t0, sent, x, th):  # type: ignore[no-untyped-def]
    """When a flow with ``sent`` bytes at ``t0``, at rate ``x``, reaches ``th`` bytes.

    For a row: ``sent`` is its longest live flow's, ``sufmax[head] + serv``. Scalars
    only, so that the compiled callers inline it (see :func:`_index`).
    """
    return t0 + (th - sent) / x


@njit
def _wide_fill(p, th, co_r0, co_r1, head, row_ptr, row_rate, ts, serv, sufmax, wix):  # type: ignore[no-untyped-def]
    """Each running row's time to reach ``th`` with its longest live flow (coflow ``p``)."""
    wfin = wix[0]
    for r in range(co_r0[p], co_r1[p]):
        h = head[r]
        x = row_rate[r]
        if h < row_ptr[r + 1] and x > 0.0:
            wfin[r] = _reach_time(ts[r], sufmax[h] + serv[r], x, th)
        else:
            wfin[r] = np.inf
    for b in range(co_r0[p] // BLOCK, (co_r1[p] + BLOCK - 1) // BLOCK):
        _block_min(b, wix)


@njit
def _setup(act, fco, K, cos, wide, la, lb, L, split, size, sent):  # type: ignore[no-untyped-def]
    """A stretch's rows and per-link row lists (both queue kernels).

    Returns ``(anywide, ra, rb, rbl, co_r0, co_r1, rco, row_ptr, row_fl, need, fl0, rc,
    sufmax, head, cl, adj, lrow, nlive, ndead)``: the rows of :func:`_rows`, each row's
    downlink counted from the split (``rbl``) and unfinished flows (``rc``), the largest
    bytes sent at ``t0`` among ``row_fl[j:]`` of each row (``sufmax``), each row's first
    unfinished flow (``head``), each coflow's live rows per link (``cl``), the lists of
    :func:`_adjacency`, and each coflow's live rows (``lrow[co_r0[p] : co_r0[p] +
    nlive[p]]``, increasing; finished rows are dropped from these and from the per-link
    lists once they are half of them, ``ndead`` counting them).
    """
    n = act.size
    m = cos.size
    pos = np.full(K, -1, np.int64)
    anywide = False
    for p in range(m):
        pos[cos[p]] = p
        if wide[cos[p]]:
            anywide = True
    R = L - split
    ra, rb, co_r0, co_r1, rco, row_ptr, row_fl, need, fl0 = _rows(act, fco, pos, m, la, lb, split,
                                                                  R, size, sent)
    nrows = ra.size
    rbl = rb - split
    rc = np.empty(nrows)
    sufmax = np.empty(n)
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
    cl = np.zeros((m, L), np.int64)
    for r in range(nrows):
        cl[rco[r], ra[r]] += 1
        cl[rco[r], rb[r]] += 1
    adj = _adjacency(m, co_r0, co_r1, ra, rbl, split, R)
    lrow = np.arange(nrows)
    nlive = co_r1 - co_r0
    ndead = np.zeros(m, np.int64)
    return (anywide, ra, rb, rbl, co_r0, co_r1, rco, row_ptr, row_fl, need, fl0, rc, sufmax, head,
            cl, adj, lrow, nlive, ndead)


@njit
def _dense(m, co_r0, co_r1, ra, rbl, rc, split, R, giant):  # type: ignore[no-untyped-def]
    """The unfinished flows of each coflow with at least ``giant`` rows, per uplink and downlink.

    ``(gidx, Wd, WdT, dsl, dsr, zeros)``: coflow position ``p``'s matrix is ``Wd[gidx[p]]``
    (``-1``: none), its transpose ``WdT[...]`` and sums ``dsl``/``dsr`` (the kernel takes
    the flows a row finishes off all four, whole numbers, so they stay exact); ``zeros``:
    empty row lists for the water-filling. ``giant <= 0``: no coflow.
    """
    gidx = np.full(m, -1, np.int64)
    ng = 0
    if giant > 0:
        for p in range(m):
            if co_r1[p] - co_r0[p] >= giant:
                gidx[p] = ng
                ng += 1
    Wd = np.zeros((ng, split, R))
    WdT = np.zeros((ng, R, split))
    dsl = np.zeros((ng, split))
    dsr = np.zeros((ng, R))
    for p in range(m):
        g = gidx[p]
        if g < 0:
            continue
        for r in range(co_r0[p], co_r1[p]):
            Wd[g, ra[r], rbl[r]] += rc[r]
            WdT[g, rbl[r], ra[r]] += rc[r]
            dsl[g, ra[r]] += rc[r]
            dsr[g, rbl[r]] += rc[r]
    return gidx, Wd, WdT, dsl, dsr, np.zeros(split + R, np.int64)


@njit
def _pending(m, adm_t, adm_at):  # type: ignore[no-untyped-def]
    """Which of the ``m`` positions are not yet admitted, and the next admission time.

    The last ``adm_t.size`` positions are the coflows the kernel admits itself,
    at times ``adm_t``; ``adm_at`` holds when it did (``inf``: not yet).
    """
    m0 = m - adm_t.size
    pend = np.zeros(m, np.bool_)
    t_adm = np.inf
    for i in range(adm_t.size):
        if adm_at[i] == np.inf:
            pend[m0 + i] = True
            if adm_t[i] < t_adm:
                t_adm = adm_t[i]
    return pend, t_adm


@njit
def _admissions(t, thr, m0, adm_t, adm_at, pend):  # type: ignore[no-untyped-def]
    """Admit, at the event ``t`` (after its completions), every pending coflow due by ``thr``.

    ``thr``: the event's threshold (its time plus the engine's tolerance), by which
    the engine admits too; ``t``: the time reached (its latest completion). The event
    happens at the latest of ``t`` and the admission times it takes in (no coflow starts
    before its release; every completion due by ``thr`` is already in), which is each
    admitted coflow's ``adm_at[i]``. Returns ``(t, next admission time)``.
    """
    nxt = np.inf
    for i in range(adm_t.size):
        if pend[m0 + i] and adm_t[i] <= thr and adm_t[i] > t:
            t = adm_t[i]
    for i in range(adm_t.size):
        p = m0 + i
        if pend[p]:
            if adm_t[i] <= thr:
                pend[p] = False
                adm_at[i] = t
            elif adm_t[i] < nxt:
                nxt = adm_t[i]
    return t, nxt


@njit
def _queue_order(qof, cos, cf_left, nq, order, pend):  # type: ignore[no-untyped-def]
    """The unfinished coflows' positions, queue-major (FIFO within a queue) into ``order``; their count.

    Positions marked in ``pend`` (not yet admitted) are left out.
    """
    o = 0
    for qi in range(nq):
        for p in range(qof.size):
            if qof[p] == qi and cf_left[cos[p]] > 0 and not pend[p]:
                order[o] = p
                o += 1
    return o


@njit
def _demotions(t, ptol, exceed, last, cos, qof, cf_left, pend, wide, th_n, th_w, dmx, cfs, cfr,  # type: ignore[no-untyped-def]
               tcf, co_r0, co_r1, iix, w0, w1, wix, hit):
    """Which admitted, unfinished coflows reach their queue's upper threshold at ``t`` (``hit``).

    One queue at a time (both kernels): a kernel moves each hit coflow down one queue,
    brings its wide coflows' threshold crossings (``wix``) to the new thresholds, and
    asks again. A narrow coflow's bytes reach the threshold within the policies'
    tolerance (:data:`coflowopt.sim.policies.aalo.REACH_TOL`: in bytes, or in time at
    its rate); a wide coflow's longest flow does: among its finished flows (``dmx``)
    and still rows (``iix``, minus their longest flow's bytes), else a running row's
    crossing (``wix`` entries ``w0[p]:w1[p]``) is due. Returns True if any is hit.

    ``exceed`` (``mcs``, Algorithm 2's ``>``): bytes that no longer grow (a narrow
    coflow at rate 0, finished flows, still rows) must be above the threshold by the
    tolerance; a running coflow or flow at it is demoted, as it exceeds it at once
    (:func:`coflowopt.sim.policies.aalo.exceeded`).
    """
    ptl = ptol * max(1.0, abs(t))
    anyhit = False
    for p in range(qof.size):
        hit[p] = False
        k = cos[p]
        qk = qof[p]
        if cf_left[k] == 0 or pend[p] or qk >= last:
            continue
        if wide[k]:
            th = th_w[qk]
            still = max(dmx[p], -_range_min(co_r0[p], co_r1[p], iix))
            h = still > th * (1.0 + ptol) if exceed else still >= th * (1.0 - ptol)
            if not h:
                h = _range_min(w0[p], w1[p], wix) <= t + ptl
        else:
            th = th_n[qk]
            sm = cfs[p] + cfr[p] * (t - tcf)
            x = cfr[p]
            if exceed:  # aalo.exceeded: above, or at it (reached) while growing
                h = sm > th * (1.0 + ptol) or (
                    x > 0 and (sm >= th * (1.0 - ptol) or (th - sm) / x <= ptl))
            else:
                h = sm >= th * (1.0 - ptol) or (x > 0 and (th - sm) / x <= ptl)
        if h:
            hit[p] = True
            anyhit = True
    return anyhit


@njit
def _next_demotion(t, tol, qof, last, nrun, cos, wide, th_n, cfs, cfr, tcf, w0, w1, wix):  # type: ignore[no-untyped-def]
    """The earliest queue demotion under the current rates (not before ``t`` plus twice ``tol``).

    A narrow coflow's comes from its bytes and rate; a wide coflow's is the earliest of
    ``wix``'s entries ``w0[p]:w1[p]`` (its rows', or its slots', threshold crossings).
    """
    wake = np.inf
    for p in range(qof.size):
        if qof[p] >= last or nrun[p] == 0:
            continue
        if wide[cos[p]]:
            w = _range_min(w0[p], w1[p], wix)
        else:
            th = th_n[qof[p]]
            if not np.isfinite(th) or not cfr[p] > 0:
                continue
            sm = cfs[p] + cfr[p] * (t - tcf)
            w = t + max(th - sm, 0.0) / cfr[p]
        if w < wake:
            wake = w
    floor = t + 2 * tol * max(1.0, abs(t))
    return floor if wake < floor else wake


@njit
def dclas_stretch(  # type: ignore[no-untyped-def]
    t0, t_stop, tol, act, la, lb, L, cap, size, sent, fco, cf_left, start,
    record, max_pieces, rate_out, done_f, done_t, pc_f, pc_t0, pc_t1, pc_r, lv_u, lv_t, lv_x,
    cos, queue, wide, th_n, th_w, weights, cf_sent, cf_long, split, sat, max_rounds, ptol, exceed,
    stop_co, work, adm_t, adm_at, dense_rows,
):
    """Advance the multi-level queue allocation of ``act`` from ``t0``.

    ``cos``: the active coflows in FIFO order; ``queue`` (mutated): each
    coflow's 0-based queue; ``wide``: coflows whose demotions follow their
    longest flow (``mcs``); ``th_n``/``th_w``: per queue, the upper
    threshold on a coflow's bytes / on its longest flow's bytes (``inf``:
    none); ``weights``: queue weights (empty: strict priority);
    ``cf_sent``: each coflow's bytes sent at ``t0`` (updated); ``cf_long``: the
    bytes of each wide coflow's longest flow at ``t0``, finished flows included
    (a finished flow keeps what it sent); ``ptol``: the
    policies' relative tolerance for a threshold being reached (in time and in
    bytes, see :data:`coflowopt.sim.policies.aalo.REACH_TOL`); ``exceed``: bytes that
    no longer grow must be above a threshold, not at it (``mcs``, see
    :func:`_demotions`); ``stop_co``:
    coflows at whose completion the kernel returns (those others depend on;
    the allocation after any other completion is the kernel's own next
    event); ``work``: counters the kernel adds to (see :data:`WORK`);
    ``adm_t``/``adm_at``: the admissions the kernel makes (:func:`_admissions`);
    ``dense_rows``: with weighted sharing, coflows with at least this many rows
    at the start take the dense water-filling (:func:`_dense`; 0: none).
    Returns ``(t, thr, n_done, n_pieces, n_levels, n_events, reason)`` as every stretch kernel.
    """
    n = act.size
    m = cos.size
    npend = adm_t.size
    m0 = m - npend
    pend, t_adm = _pending(m, adm_t, adm_at)
    nq = th_n.size
    last = nq - 1
    (anywide, ra, rb, rbl, co_r0, co_r1, rco, row_ptr, row_fl, need, fl0, rc, sufmax, head, cl,
     adj, lrow, nlive, ndead) = _setup(act, fco, cf_left.size, cos, wide, la, lb, L, split, size, sent)
    nrows = ra.size
    R = L - split
    dense = _dense(m, co_r0, co_r1, ra, rbl, rc, split, R, dense_rows if weights.size > 0 else 0)
    gidx, Wd, WdT, dsl, dsr = dense[:5]
    serv = np.zeros(nrows)  # bytes each flow of the row received since t0
    ts = np.full(nrows, t0)  # when serv was last brought up to date
    row_rate = np.zeros(nrows)
    fix = _index(nrows, np.inf)  # next completion of each running row
    rowfin, bmin, fdirty = fix
    nb = bmin.size
    # wide coflows (mcs): each running row's time to reach its coflow's threshold with its
    # longest flow, and minus the bytes of the longest flow of each still row
    nw = nrows if anywide else 0
    wix = _index(nw, np.inf)
    iix = _index(nw, np.inf)
    wval, wmin, wdirty = wix
    ival, imin, idirty = iix
    if anywide:
        for r in range(nrows):
            if wide[cos[rco[r]]] and rc[r] > 0:
                ival[r] = -sufmax[head[r]]
        for b in range(iix[1].size):
            _block_min(b, iix)
    nrun = np.zeros(m, np.int64)  # running rows of each coflow
    cfr = np.zeros(m)
    cfs = np.empty(m)
    dmx = np.empty(m)  # the bytes of the coflow's longest finished flow (wide coflows)
    for p in range(m):
        cfs[p] = cf_sent[cos[p]]
        dmx[p] = cf_long[cos[p]]
    tcf = t0
    # queue of each coflow position; queue-major order
    qof = np.empty(m, np.int64)
    for p in range(m):
        qof[p] = queue[cos[p]]
    seen = np.zeros(nq, np.bool_)
    order = np.empty(m, np.int64)
    # per (slot, coflow) the last levels (slots: the weighted rounds, then the strict pass;
    # a row's entries are set at its coflow's first computation in the slot)
    ns = max_rounds + 1 if weights.size > 0 else 1
    nr1 = max(nrows, 1)
    cch = (
        np.empty((ns, m, L)), np.zeros((ns, m), np.bool_), np.zeros((ns, m, L)),
        np.zeros((ns, m, L)), np.zeros((ns, m, L)), np.empty((ns, nr1)), np.empty((ns, nr1)),
        np.zeros((ns, m), np.int64), np.zeros((ns, m), np.int64),
        (np.empty(L), np.empty(split), np.empty(R), np.zeros(0, np.int64),
         np.zeros(nr1, np.int64), np.zeros(1, np.int64), np.empty(L), np.empty(nr1, np.int64),
         np.zeros((0, 0)), np.empty(L)),
        np.zeros((ns, m), np.bool_), np.zeros((ns, m, L), np.bool_), np.zeros((ns, m), np.int64),
    )
    clv = cch[5]
    # each coflow's log of rows that lost flows (room: its number of flows)
    logs = (np.empty(max(n, 1), np.int64), np.empty(max(n, 1)), fl0, np.zeros(m, np.int64))
    logbuf, logamt, log0, loglen = logs
    tl = np.empty(nr1, np.int64)
    touch = (np.zeros(nr1, np.int64), tl, np.zeros(2, np.int64), work)
    work[W_STRETCHES] += 1
    work[W_ROWS] += nrows
    tcount = touch[2]
    dem = np.zeros(m, np.bool_)  # coflows demoted by one queue (_demotions)
    curmask = np.zeros(m, np.int64)
    prevmask = np.zeros(m, np.int64)
    t = t0
    nd = 0
    npc = 0
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
                             cfs, cfr, tcf, co_r0, co_r1, iix, co_r0, co_r1, wix, dem):
                for p in range(m):
                    if dem[p]:
                        qk = qof[p] + 1
                        qof[p] = qk
                        queue[cos[p]] = qk
                        if wide[cos[p]]:
                            _wide_fill(p, th_w[qk] if qk < last else np.inf, co_r0, co_r1, head,
                                       row_ptr, row_rate, ts, serv, sufmax, wix)
        first = False
        nonempty = 0
        seen[:] = False
        for p in range(m):
            if not seen[qof[p]] and cf_left[cos[p]] > 0 and not pend[p]:
                seen[qof[p]] = True
                nonempty += 1
        o = _queue_order(qof, cos, cf_left, nq, order, pend)
        work[W_ALLOC] += 1
        curmask[:] = 0
        tcount[0] = 0
        tcount[1] += 1
        _allocate(order[:o], m, co_r0, ra, rb, rbl, rc, cl, split, cap, qof, nq, weights, sat,
                  max_rounds, nonempty, adj, cch, lrow, nlive, logs, touch, curmask, dense)
        # apply: the coflow totals move to t first (as the engine's _sync_coflows), then
        # only rows whose level changed, or of coflows whose slots changed, are looked at
        if t > tcf:
            for p in range(m):
                cfs[p] += cfr[p] * (t - tcf)
            tcf = t
        tmark = touch[0]
        tep = tcount[1]
        ntl = tcount[0]
        for p in range(m):
            if curmask[p] != prevmask[p]:
                prevmask[p] = curmask[p]
                for q in range(co_r0[p], co_r0[p] + nlive[p]):
                    r = lrow[q]
                    if tmark[r] != tep:
                        tmark[r] = tep
                        tl[ntl] = r
                        ntl += 1
        for q in range(ntl):
            r = tl[q]
            h = head[r]
            e = row_ptr[r + 1]
            if h == e:
                continue
            p = rco[r]
            mask = curmask[p]
            x = 0.0
            for s_ in range(ns):
                if (mask >> s_) & 1:
                    x += clv[s_, r]
            old = row_rate[r]
            if x == old:
                continue
            work[W_CHANGED] += 1
            if record and old > 0:
                for j in range(h, e):
                    npc = served(act[row_fl[j]], ts[r], t, old, fco, start, record, npc, pc_f,
                                 pc_t0, pc_t1, pc_r)
            serv[r] += old * (t - ts[r])
            ts[r] = t
            row_rate[r] = x
            cfr[p] += (x - old) * (e - h)
            b = r // BLOCK
            fo = rowfin[r]
            if x > 0:
                v = t + max(need[row_fl[h]] - serv[r], 0.0) / x
                if old == 0.0:
                    nrun[p] += 1
                if start[cos[p]] == np.inf:
                    start[cos[p]] = t
            else:
                v = np.inf
                nrun[p] -= 1
            rowfin[r] = v  # the index update of _index
            if v <= bmin[b]:
                bmin[b] = v
            elif fo == bmin[b]:
                fdirty[b] = True
            if wide[cos[p]]:
                # a running row: its time to reach the threshold (wix); a still row: its
                # longest live flow's bytes, negated (iix)
                th = th_w[qof[p]] if qof[p] < last else np.inf
                vw = _reach_time(ts[r], sufmax[h] + serv[r], x, th) if x > 0 else np.inf
                vi = np.inf if x > 0 else -(sufmax[h] + serv[r])
                wo = wval[r]
                io = ival[r]
                wval[r] = vw  # the index update of _index, twice
                if vw <= wmin[b]:
                    wmin[b] = vw
                elif wo == wmin[b]:
                    wdirty[b] = True
                ival[r] = vi
                if vi <= imin[b]:
                    imin[b] = vi
                elif io == imin[b]:
                    idirty[b] = True
        # the next demotion under these rates
        if anywide:
            _flush(wix)
        wake = _next_demotion(t, tol, qof, last, nrun, cos, wide, th_n, cfs, cfr, tcf, co_r0,
                              co_r1, wix)
        if record and npc > max_pieces - 3 * n - 4:
            reason = 2
            break
        # the next event: the earliest completion of a running row
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
        # the coflow totals move to t_next (the engine's _sync_coflows)
        for p in range(m):
            cfs[p] += cfr[p] * (t_next - tcf)
        tcf = t_next
        t_new = t_next
        coflow_done = False
        for b in range(nb):
            if not bmin[b] <= thr:
                continue
            for r in range(b * BLOCK, min(b * BLOCK + BLOCK, nrows)):
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
                    if record:
                        npc = served(f, ts[r], fi, x, fco, start, record, npc, pc_f, pc_t0,
                                     pc_t1, pc_r)
                    cfs[p] -= x * (t_next - fi)
                    cfr[p] -= x
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
                if h != head[r]:
                    logbuf[log0[p] + loglen[p]] = r
                    logamt[log0[p] + loglen[p]] = h - head[r]
                    loglen[p] += 1
                gd = gidx[p]
                if gd >= 0 and h != head[r]:
                    dd = float(h - head[r])
                    Wd[gd, ra[r], rbl[r]] -= dd
                    WdT[gd, rbl[r], ra[r]] -= dd
                    dsl[gd, ra[r]] -= dd
                    dsr[gd, rbl[r]] -= dd
                head[r] = h
                rc[r] = e - h
                if h == e:
                    cl[p, ra[r]] -= 1
                    cl[p, rb[r]] -= 1
                    ndead[p] += 1
                    nrun[p] -= 1
                    if 2 * ndead[p] >= nlive[p]:
                        _compact(p, co_r0, rc, lrow, nlive, ndead, adj)
                    rowfin[r] = np.inf
                else:
                    rowfin[r] = ts[r] + max(need[row_fl[h]] - serv[r], 0.0) / x
                if wide[cos[p]]:
                    th = th_w[qof[p]] if qof[p] < last else np.inf
                    vw = _reach_time(ts[r], sufmax[h] + serv[r], x, th) if h < e else np.inf
                    wo = wval[r]
                    wval[r] = vw  # the index update of _index
                    if vw <= wmin[r // BLOCK]:
                        wmin[r // BLOCK] = vw
                    elif wo == wmin[r // BLOCK]:
                        wdirty[r // BLOCK] = True
            _block_min(b, fix)
        t = t_new
        if t_adm <= thr:
            t, t_adm = _admissions(t, thr, m0, adm_t, adm_at, pend)
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
            if x > 0 and record:
                npc = served(f, ts[r], t, x, fco, start, record, npc, pc_f, pc_t0, pc_t1, pc_r)
            sent[f] += sv
            rate_out[f] = x
    return t, thr, nd, npc, 0, nev, reason
