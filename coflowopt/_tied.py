"""Compiled loops over tied pieces (:class:`coflowopt.schedule.TiedPieces`).

A tied piece serves a flow from its start to its end at its weight times the smaller of
two *level series*, each a step function given by its changes; it stands for the
constant-rate pieces between the times that minimum changes. Per-flow fair sharing on
the Facebook trace is 232 million such pieces, but only 706,397 tied pieces and 1.5
million level changes, so these loops walk the pieces without storing them: sums per
tied piece (:func:`walk`, which also writes the pieces out on request) and the sweep of
every link's load over time for the capacity check (:func:`sweep`). They belong to the
schedule and its verifier and share nothing with the simulator.

Levels are stored by series: series ``g`` has changes ``lp[g] .. lp[g + 1] - 1`` of the
arrays ``lt`` (times, increasing) and ``lv`` (levels); before its first change a series
has no limit (``inf``); series ``-1`` is none.
"""

from __future__ import annotations

import numpy as np

from ._jit import njit

__all__ = ["AMOUNT", "COLUMNS", "COUNT", "EARLY", "FIRST", "LAST", "LATE", "MAXEND",
           "NEGATIVE", "NONFINITE", "RESOLUTION", "sweep", "walk"]

(AMOUNT, RESOLUTION, EARLY, LATE, FIRST, LAST, MAXEND, COUNT, NONFINITE,
 NEGATIVE) = range(10)
"""Columns of :func:`walk`'s sums, per tied piece: over its pieces of positive finite rate,
the amount served, the resolution of their times (rate, at most ``top``, times the float
spacing at start and end), the amount served before ``cut_lo`` and after ``cut_hi``, the
first start, the last end and the largest ``|end|``; over all its pieces (rate not 0),
their number and how many have a rate that is not finite or is negative."""
COLUMNS = 10


@njit
def _lo(x, y):  # type: ignore[no-untyped-def]
    """The smaller of two levels (nan if either is, as ``np.minimum``)."""
    if x != x or y != y:
        return np.nan
    return x if x < y else y


@njit
def _last_change(lp, lt, g, t):  # type: ignore[no-untyped-def]
    """Index of series ``g``'s last change at or before ``t`` (``lp[g] - 1``: none)."""
    lo = lp[g]
    return lo + np.searchsorted(lt[lo:lp[g + 1]], t, side="right") - 1


@njit
def walk(flow, start, end, weight, sa, sb, lp, lt, lv, lsp, top, cut_lo, cut_hi, sums,  # type: ignore[no-untyped-def]
         off, of, ot0, ot1, orate, emit):
    """Walk each tied piece's constant-rate pieces, from its start to its end.

    A piece ends where the minimum of the two levels changes (a change to the same
    minimum is no change); pieces of rate 0 are left out. ``sums`` (tied pieces x
    :data:`COLUMNS`) receives the sums; with ``emit``, tied piece ``m``'s pieces are
    written to ``of, ot0, ot1, orate`` from ``off[m]`` on (its ``COUNT`` of them).
    ``lsp``: ``np.spacing(abs(lt))``, the float spacing at each change (taken once).
    """
    inf = np.inf
    for m in range(flow.size):
        s = start[m]
        e = end[m]
        w = weight[m]
        a = sa[m]
        b = sb[m]
        lo = cut_lo[m]
        hi = cut_hi[m]
        amount = res = early = late = maxend = 0.0
        first = inf
        last = -inf
        count = nonfinite = negative = 0
        if e > s:
            ia = _last_change(lp, lt, a, s)
            xa = lv[ia] if ia >= lp[a] else inf
            ib = _last_change(lp, lt, b, s) if b >= 0 else 0
            xb = lv[ib] if b >= 0 and ib >= lp[b] else inf
            ea = lp[a + 1]
            eb = lp[b + 1] if b >= 0 else 0
            lev = _lo(xa, xb)
            new = lev
            t0 = s
            sp0 = np.spacing(abs(s))
            sp_end = np.spacing(abs(e))
            done = False
            while not done:
                # on to the next change of the minimum, or the end
                while True:
                    ta = lt[ia + 1] if ia + 1 < ea else inf
                    tb = lt[ib + 1] if ib + 1 < eb else inf
                    t1 = ta if ta < tb else tb
                    if not t1 < e:
                        t1 = e
                        sp1 = sp_end
                        done = True
                        break
                    if ta == t1:
                        ia += 1
                        xa = lv[ia]
                        sp1 = lsp[ia]
                    if tb == t1:
                        ib += 1
                        xb = lv[ib]
                        sp1 = lsp[ib]
                    new = _lo(xa, xb)
                    if new != lev:
                        break
                r = w * lev
                if r != 0.0:
                    if emit:
                        q = off[m] + count
                        of[q] = flow[m]
                        ot0[q] = t0
                        ot1[q] = t1
                        orate[q] = r
                    count += 1
                    if not (r > -inf and r < inf):
                        nonfinite += 1
                    elif r < 0.0:
                        negative += 1
                    else:
                        amount += r * (t1 - t0)
                        res += min(r, top) * (sp0 + sp1)
                        if t0 < lo:
                            early += ((t1 if t1 < lo else lo) - t0) * r
                        if t1 > hi:
                            late += (t1 - (t0 if t0 > hi else hi)) * r
                        if t0 < first:
                            first = t0
                        if t1 > last:
                            last = t1
                        if abs(t1) > maxend:
                            maxend = abs(t1)
                t0 = t1
                sp0 = sp1
                lev = new
        sums[m, AMOUNT] = amount
        sums[m, RESOLUTION] = res
        sums[m, EARLY] = early
        sums[m, LATE] = late
        sums[m, FIRST] = first
        sums[m, LAST] = last
        sums[m, MAXEND] = maxend
        sums[m, COUNT] = count
        sums[m, NONFINITE] = nonfinite
        sums[m, NEGATIVE] = negative


@njit
def _rate(level, a, b):  # type: ignore[no-untyped-def]
    """The rate per unit of weight of a bundle on series ``a`` and ``b`` (``-1``: none), as
    the capacity check counts it: 0 where it is not finite or is negative (such pieces
    are violations of their own and carry nothing)."""
    x = _lo(level[a], level[b] if b >= 0 else np.inf)
    return x if 0.0 <= x < np.inf else 0.0


@njit
def sweep(cap, tol, rounding, bptr, blink, bmult, ba, bb, sptr, sbund,  # type: ignore[no-untyped-def]
          lv_t, lv_g, lv_x, on_t, on_b, on_w, off_t, off_b, off_w, pr_t, pr_l, pr_d, keep):
    """Every link's load over time, from tied pieces grouped into bundles and plain pieces.

    A *bundle* is a set of tied pieces on the same two series and the same route:
    bundle ``i`` crosses links ``blink[bptr[i]:bptr[i + 1]]`` (multiplicities
    ``bmult``) and runs on series ``ba[i]`` and ``bb[i]``; series ``g`` is used by the
    bundles ``sbund[sptr[g]:sptr[g + 1]]``. Events, each list sorted by time: level
    changes (time, series, level), tied pieces starting and ending (time, bundle,
    weight; pieces of length 0 left out), and plain pieces' rows (time, link, change of
    the link's rate). A link's rate changes at a time where a piece crossing it starts or
    ends, or where the rate of a tied piece on it changes; each span between two such
    times is a segment, checked as :func:`coflowopt.schedule.check_feasible` checks
    them: longer than ``rounding`` of ``max(|end|, 1)``, at most ``cap * (1 + tol)``.

    Returns the peak ratio of rate to capacity, the number of segments over capacity and
    the ``keep`` worst of them (link, start, end, rate), worst first.
    """
    L = cap.size
    nb = ba.size
    S = sptr.size - 1
    level = np.full(S, np.inf)
    W = np.zeros(nb)  # weight of the running tied pieces of each bundle
    n = np.zeros(nb, np.int64)
    r = np.zeros(nb)  # rate per unit of weight (kept while pieces run; else set at a start)
    load = np.zeros(L)
    since = np.full(L, np.nan)  # start of each link's current segment
    stamp = np.full(L, -1, np.int64)
    peak = 0.0
    over = 0
    w_link = np.full(keep, -1, np.int64)
    w_t = np.zeros((keep, 3))  # start, end, rate
    w_ex = np.full(keep, -np.inf)
    i_lv = i_on = i_off = i_pr = 0
    step = 0
    inf = np.inf
    while True:
        tau = inf
        if i_lv < lv_t.size and lv_t[i_lv] < tau:
            tau = lv_t[i_lv]
        if i_on < on_t.size and on_t[i_on] < tau:
            tau = on_t[i_on]
        if i_off < off_t.size and off_t[i_off] < tau:
            tau = off_t[i_off]
        if i_pr < pr_t.size and pr_t[i_pr] < tau:
            tau = pr_t[i_pr]
        if tau == inf:
            break
        step += 1
        # (the loop over a bundle's links is written out at each of its three uses: as a
        # function it made the trace's 136 million bundle changes 3-6 times slower, measured,
        # in-lined or not)
        # pieces ending now ran at the rates before this instant's level changes
        while i_off < off_t.size and off_t[i_off] == tau:
            i = off_b[i_off]
            x = off_w[i_off] * r[i]
            if x > 0.0:
                for q in range(bptr[i], bptr[i + 1]):
                    u = blink[q]
                    if stamp[u] != step:
                        peak, over = _close(u, tau, step, load, since, stamp, cap, tol,
                                            rounding, peak, over, w_link, w_t, w_ex)
                    load[u] -= bmult[q] * x
            n[i] -= 1
            W[i] = W[i] - off_w[i_off] if n[i] > 0 else 0.0
            i_off += 1
        first = i_lv
        while i_lv < lv_t.size and lv_t[i_lv] == tau:
            level[lv_g[i_lv]] = lv_x[i_lv]
            i_lv += 1
        for j in range(first, i_lv):
            g = lv_g[j]
            for p in range(sptr[g], sptr[g + 1]):
                i = sbund[p]
                if n[i] == 0:
                    continue
                x = _rate(level, ba[i], bb[i])
                if x != r[i]:
                    d = W[i] * (x - r[i])
                    for q in range(bptr[i], bptr[i + 1]):
                        u = blink[q]
                        if stamp[u] != step:
                            peak, over = _close(u, tau, step, load, since, stamp, cap, tol,
                                                rounding, peak, over, w_link, w_t, w_ex)
                        load[u] += bmult[q] * d
                    r[i] = x
        # pieces starting now run at the rates after them
        while i_on < on_t.size and on_t[i_on] == tau:
            i = on_b[i_on]
            if n[i] == 0:
                r[i] = _rate(level, ba[i], bb[i])
            x = on_w[i_on] * r[i]
            if x > 0.0:
                for q in range(bptr[i], bptr[i + 1]):
                    u = blink[q]
                    if stamp[u] != step:
                        peak, over = _close(u, tau, step, load, since, stamp, cap, tol,
                                            rounding, peak, over, w_link, w_t, w_ex)
                    load[u] += bmult[q] * x
            n[i] += 1
            W[i] += on_w[i_on]
            i_on += 1
        while i_pr < pr_t.size and pr_t[i_pr] == tau:
            u = pr_l[i_pr]
            if stamp[u] != step:
                peak, over = _close(u, tau, step, load, since, stamp, cap, tol, rounding, peak,
                                    over, w_link, w_t, w_ex)
            load[u] += pr_d[i_pr]
            i_pr += 1
    order = np.argsort(-w_ex, kind="mergesort")  # stable: the same order compiled or not
    k = 0
    for i in range(keep):
        if w_link[i] >= 0:
            k += 1
    order = order[:k]
    return peak, over, w_link[order], w_t[order]


@njit
def _close(u, tau, step, load, since, stamp, cap, tol, rounding, peak, over, w_link, w_t, w_ex):  # type: ignore[no-untyped-def]
    """Link ``u``'s rate changes at ``tau`` (its first change at this instant, ``step``):
    check the segment that ends there and start the next."""
    stamp[u] = step
    t0 = since[u]
    since[u] = tau
    if t0 != t0 or not tau - t0 > rounding * max(abs(tau), 1.0):
        return peak, over  # the link's first instant, or one instant told apart by rounding
    x = load[u]
    ratio = x / cap[u]
    if ratio > peak:
        peak = ratio
    if x > cap[u] * (1.0 + tol):
        over += 1
        ex = x - cap[u]
        i = np.argmin(w_ex)
        if ex > w_ex[i]:
            w_ex[i] = ex
            w_link[i] = u
            w_t[i, 0] = t0
            w_t[i, 1] = tau
            w_t[i, 2] = x
    return peak, over
