"""Weighted max-min fairness, compiled: on any usage matrix (progressive filling) and on
two-sided links (water-filling).

:func:`progressive_filling` is the general method: rows of a CSR usage matrix, taken
by index (the simulator's policies pass flows or route classes of the route
incidence without building a submatrix), with weights, upper bounds and residual
capacities; :func:`coflowopt.alloc.max_min` runs it on usage that is not bipartite.
Its kernel :func:`fill_rows` works on scratch (:class:`FillScratch`) that a caller may
keep across calls: Varys's proportional backfilling fills many small groups per decision.
The rest of this module is the bipartite case.

Rows (flows, or groups of flows on the same pair of links) each cross one
*left* link ``i < s`` and one *right* link ``j < R`` with coefficient 1 (on
the big switch: an uplink and a downlink). Every row's rate is ``w * level``
with its weight ``w``; levels rise together and a row freezes when one of its
links saturates or at its own upper level ``u`` (its upper bound over its
weight). :func:`waterfill` returns the level at which every link saturates
(``inf`` for links that never do); a row's max-min rate is
``w * min(lam_left[i], lam_right[j], u)``. This is the one implementation of
bipartite max-min in coflowopt: :func:`coflowopt.alloc.max_min` and
:func:`coflowopt.alloc.max_min_bipartite_levels` call it, and so do the
stretch kernels.

Method. A left link whose fair share ``residual / demand`` is at most every
open right link's share (and every open row's upper level) saturates at
exactly that share whatever happens elsewhere: shares only grow as rows
freeze below them. So all such left links freeze at once; then the right
side; rows whose upper level lies below every open link's share freeze at
it. Each round costs ``O(links)`` plus the rows of the links it freezes, and
a few rounds suffice on real traffic. Rounds freeze levels in increasing
order.

Rows come in two forms, which may be mixed:

- *dense*: ``W[i, j]``, the total weight of uncapped rows on left link ``i``
  and right link ``j`` (and its transpose ``WT``, so that both sides are
  read contiguously), with its link sums ``dem_l``/``dem_r``; for problems
  where most pairs carry rows (the big switch under load);
- *listed*: rows ``r`` with links ``ra[r]``, ``rb[r]``, weight ``rw[r]`` and
  upper level ``ru[r]``, found from each link through adjacency lists (the
  rows of left link ``i`` are ``adj_l[start_l[i] : start_l[i] + cnt_l[i]]``;
  CSR is ``start = ptr[:-1]``, ``cnt = diff(ptr)``). A listed row is open
  while ``mark[r] != epoch``; callers pass a fresh ``epoch`` per call instead
  of clearing ``mark``. Only listed rows may have upper levels.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._jit import njit

__all__ = [
    "REFRESH", "REL", "REOPEN", "SLACK", "FillScratch", "bipartite_levels", "csr_lists",
    "fill_rows", "fill_scratch", "max_min_rows", "progressive_filling", "waterfill",
]

REL = 1e-12
"""Relative slack for deciding that a link carries no more open rows.

A link closes when its open demand falls to ``REL`` of its demand at the start. With
row weights spread over more than ``1 / REL`` on one link (``wss`` weighs flows by
their sizes: 1e7 and 3e-7 bytes on one downlink) an open row can lie below that, and
its rate was taken as if the link were free (11 on a link of 1.7). With
``exact_close`` the test is :data:`REOPEN` instead, and a link that meets it has its
demand summed afresh from its open rows: it closes only if it has none."""

REOPEN = 1e-6
"""``exact_close``: a link whose open demand falls to this fraction of its demand (at the
start, or when last summed afresh) is summed afresh. Below it, subtracting frozen rows
leaves a relative error of about ``1e-16 / REOPEN`` in what remains (a spread of 1e7 to
3e-5 on one link overloaded it by 3e-6 with the ``REL`` test)."""


@njit
def waterfill(  # type: ignore[no-untyped-def]
    cap_l, cap_r, W, WT, dem_l0, dem_r0, ra, rb, rw, ru, start_l, cnt_l, adj_l,
    start_r, cnt_r, adj_r, bounded, mark, epoch, lam_l, lam_r, listed_in_dem=False,
    exact_close=False,
):
    """Saturation levels ``lam_l``, ``lam_r`` (filled in) of weighted max-min.

    ``W``/``WT``/``dem_l0``/``dem_r0``: the dense rows (``W`` of shape
    ``(0, 0)`` for none; the ``dem`` arrays are then zero). ``ra``... ``adj_r``:
    the listed rows; ``bounded``: the listed rows with a finite upper level, by
    increasing level. ``listed_in_dem``: the ``dem`` arrays already hold the
    listed rows' weights too (callers that keep link demands up to date), so
    they are not summed again. Marks the listed rows it freezes with
    ``epoch`` (except in a last round that freezes every remaining row).
    ``exact_close``: a link whose demand falls to :data:`REOPEN` of its start
    has its demand summed afresh from its open rows, and closes only if it has
    none (weights spread widely on one link). Returns the number of rounds.
    """
    s = cap_l.size
    R = cap_r.size
    dense = W.shape[0] > 0
    res_l, dem_l = _open_side(cap_l, dem_l0, lam_l, start_l, cnt_l, adj_l, rw, listed_in_dem)
    res_r, dem_r = _open_side(cap_r, dem_r0, lam_r, start_r, cnt_r, adj_r, rw, listed_in_dem)
    rel = REOPEN if exact_close else REL
    eps_l = rel * dem_l
    eps_r = rel * dem_r
    open_l = dem_l > 0
    open_r = dem_r > 0
    t_l = np.empty(s)
    t_r = np.empty(R)
    nb = bounded.size
    bp = 0
    rounds = 0
    while True:
        m_l = _shares(open_l, res_l, dem_l, t_l)
        m_r = _shares(open_r, res_r, dem_r, t_r)
        while bp < nb and mark[bounded[bp]] == epoch:
            bp += 1
        m_u = ru[bounded[bp]] if bp < nb else np.inf
        m = min(m_l, m_r)
        if m == np.inf and m_u == np.inf:
            break
        rounds += 1
        if m_u <= m:
            # rows capped below every open link's share freeze at their caps
            while bp < nb:
                r = bounded[bp]
                if mark[r] != epoch:
                    if ru[r] > m:
                        break
                    mark[r] = epoch
                    x = rw[r] * ru[r]
                    i = ra[r]
                    j = rb[r]
                    res_l[i] -= x
                    dem_l[i] -= rw[r]
                    res_r[j] -= x
                    dem_r[j] -= rw[r]
                    if open_l[i] and not dem_l[i] > eps_l[i]:
                        open_l[i] = exact_close and _reopen(
                            i, dense, WT, open_r, start_l, cnt_l, adj_l, rw, mark, epoch,
                            dem_l, eps_l)
                    if open_r[j] and not dem_r[j] > eps_r[j]:
                        open_r[j] = exact_close and _reopen(
                            j, dense, W, open_l, start_r, cnt_r, adj_r, rw, mark, epoch,
                            dem_r, eps_r)
                bp += 1
        elif m_l <= m_r:
            # every row crosses a left link: if all open ones freeze now, so do all rows
            if _freeze_side(open_l, t_l, lam_l, min(m_r, m_u), dense, W, start_l, cnt_l, adj_l,
                            rb, rw, mark, epoch, open_r, res_r, dem_r, eps_r,
                            exact_close, start_r, cnt_r, adj_r):
                break
        elif _freeze_side(open_r, t_r, lam_r, min(m_l, m_u), dense, WT, start_r, cnt_r, adj_r,
                          ra, rw, mark, epoch, open_l, res_l, dem_l, eps_l,
                          exact_close, start_l, cnt_l, adj_l):
            break
    return rounds


@njit
def _reopen(j, dense, Wa, open_a, start_b, cnt_b, adj_b, rw, mark, epoch, dem_b, eps_b):  # type: ignore[no-untyped-def]
    """True (and link ``j`` of side ``b``'s demand summed afresh) if it still has open rows.

    Its open rows: dense ``Wa[i, j]`` towards open links ``i`` of side ``a``, and its
    listed rows not marked with ``epoch``. The new demand is exact, and the test
    (:data:`REOPEN`) is taken relative to it from now on.
    """
    d = 0.0
    n = 0
    if dense:
        for i in range(open_a.size):
            if open_a[i] and Wa[i, j] > 0.0:
                d += Wa[i, j]
                n += 1
    a0 = start_b[j]
    for q in range(a0, a0 + cnt_b[j]):
        r = adj_b[q]
        if mark[r] != epoch and rw[r] > 0.0:
            d += rw[r]
            n += 1
    if n == 0:
        return False
    dem_b[j] = d
    eps_b[j] = REOPEN * d
    return True


@njit
def _open_side(cap, dem0, lam, start, cnt, adj, rw, listed_in_dem):  # type: ignore[no-untyped-def]
    """One side's residual capacities and demands at the start (levels set to ``inf``).

    Demands are ``dem0`` plus, unless ``listed_in_dem``, the listed rows' weights.
    """
    res = np.empty(cap.size)
    dem = dem0.copy()
    for i in range(cap.size):
        res[i] = max(cap[i], 0.0)
        lam[i] = np.inf
        if not listed_in_dem:
            a0 = start[i]
            for q in range(a0, a0 + cnt[i]):
                dem[i] += rw[adj[q]]
    return res, dem


@njit
def _shares(open_, res, dem, t):  # type: ignore[no-untyped-def]
    """Fair share ``res / dem`` of each open link of one side (into ``t``); their minimum."""
    m = np.inf
    for i in range(t.size):
        if open_[i]:
            t[i] = res[i] / dem[i]
            if t[i] < m:
                m = t[i]
    return m


@njit
def _freeze_side(  # type: ignore[no-untyped-def]
    open_a, t_a, lam_a, top, dense, Wa, start_a, cnt_a, adj_a, other, rw, mark, epoch,
    open_b, res_b, dem_b, eps_b, exact_close, start_b, cnt_b, adj_b,
):
    """Freeze the open links of side ``a`` whose share is at most ``top``; True if that is all.

    A frozen link's rows (dense ``Wa[i]``, listed ``adj_a``, whose links on the
    other side are ``other[r]``) stop growing at its level: they leave the other
    side's demand and take their rate from its residual; links of side ``b``
    left without open rows close. If every open link of side ``a`` freezes,
    every row is frozen (each crosses one link of each side): the row updates
    would change nothing that is read, so they are skipped and True returned.
    ``exact_close``: see :func:`waterfill` (``start_b``... : side ``b``'s listed rows).
    """
    allin = True
    for i in range(t_a.size):
        if open_a[i] and not t_a[i] <= top:
            allin = False
            break
    if allin:
        for i in range(t_a.size):
            if open_a[i]:
                lam_a[i] = t_a[i]
                open_a[i] = False
        return True
    nb = open_b.size
    for i in range(t_a.size):
        if open_a[i] and t_a[i] <= top:
            lam = t_a[i]
            lam_a[i] = lam
            open_a[i] = False
            if dense:
                # rows towards links closed already change nothing that is read
                Wi = Wa[i]
                for j in range(nb):
                    res_b[j] -= lam * Wi[j]
                    dem_b[j] -= Wi[j]
            a0 = start_a[i]
            for q in range(a0, a0 + cnt_a[i]):
                r = adj_a[q]
                if mark[r] == epoch:
                    continue
                mark[r] = epoch
                j = other[r]
                res_b[j] -= lam * rw[r]
                dem_b[j] -= rw[r]
    for j in range(nb):
        if open_b[j] and not dem_b[j] > eps_b[j]:
            open_b[j] = exact_close and _reopen(j, dense, Wa, open_a, start_b, cnt_b, adj_b,
                                                rw, mark, epoch, dem_b, eps_b)
    return False


@njit
def csr_lists(links, n_links):  # type: ignore[no-untyped-def]
    """Rows ``0..n-1`` grouped by ``links[r]``: ``(start, cnt, adj)`` for :func:`waterfill`."""
    cnt = np.zeros(n_links, np.int64)
    for r in range(links.size):
        cnt[links[r]] += 1
    start = np.zeros(n_links, np.int64)
    acc = 0
    for i in range(n_links):
        start[i] = acc
        acc += cnt[i]
    fill = start.copy()
    adj = np.empty(links.size, np.int64)
    for r in range(links.size):
        adj[fill[links[r]]] = r
        fill[links[r]] += 1
    return start, cnt, adj


@njit
def bipartite_levels(W, ra, rb, rw, ru, cap_l, cap_r):  # type: ignore[no-untyped-def]
    """:func:`waterfill` for dense weights ``W`` (``(s, R)``, zeros for none) plus listed rows.

    Builds the transpose, link sums and adjacency lists. Returns ``(lam_l, lam_r)``.
    """
    s = cap_l.size
    R = cap_r.size
    n = ra.size
    start_l, cnt_l, adj_l = csr_lists(ra, s)
    start_r, cnt_r, adj_r = csr_lists(rb, R)
    nb = 0
    for r in range(n):
        if ru[r] < np.inf:
            nb += 1
    cand = np.empty(nb, np.int64)
    nb = 0
    for r in range(n):
        if ru[r] < np.inf:
            cand[nb] = r
            nb += 1
    bounded = cand[np.argsort(ru[cand], kind="mergesort")]
    mark = np.zeros(n, np.int64)
    lam_l = np.empty(s)
    lam_r = np.empty(R)
    WT = np.ascontiguousarray(W.T)
    dem_l = np.zeros(s)
    dem_r = np.zeros(R)
    for i in range(W.shape[0]):
        for j in range(W.shape[1]):
            dem_l[i] += W[i, j]
            dem_r[j] += W[i, j]
    waterfill(
        cap_l, cap_r, W, WT, dem_l, dem_r, ra, rb, rw, ru, start_l, cnt_l, adj_l,
        start_r, cnt_r, adj_r, bounded, mark, 1, lam_l, lam_r, False, True,
    )
    return lam_l, lam_r


SLACK = 1e-12
"""Progressive filling: a row whose upper level lies within ``SLACK`` (relative) of the
level at which one of its links saturates freezes at its bound."""


REFRESH = 1e-3
"""Progressive filling: a link's open weight, kept by subtraction, is summed afresh from
its open rows when it falls to this fraction of its last fresh sum, so that the
subtractions leave at most about ``1e-16 / REFRESH`` of relative error in a level;
a link is summed afresh only after its open weight has fallen a thousandfold."""


class FillScratch(NamedTuple):
    """Scratch of :func:`fill_rows` (its last arguments, in this order), which a caller may
    keep across calls (:func:`fill_scratch`).

    ``slot`` has one entry per link of the usage matrix, all ``-1`` between calls; the
    other arrays are overwritten by every call. Sizes bound a call: the links its rows
    use (``links``...), its rows (``state``, ``bl``, ``bu``) and their entries
    (``adj``, ``coef``).
    """

    slot: np.ndarray
    links: np.ndarray  # the links the rows use, in order of first appearance
    lstart: np.ndarray  # each link's rows in adj / coef (CSR pointers, one more entry)
    lcnt: np.ndarray  # each link's open rows with a positive coefficient
    num: np.ndarray  # each link's number among the links of every row (ties)
    kof: np.ndarray  # the link of each number
    stack: np.ndarray  # the heap entries left to look at for a tie
    hk: np.ndarray  # the heap's link numbers
    frozen: np.ndarray  # what frozen rows use of each link
    dem: np.ndarray  # open rows' weighted coefficients
    fresh: np.ndarray  # dem when last summed afresh
    lev: np.ndarray  # where each link saturates
    hval: np.ndarray  # the heap's levels
    state: np.ndarray  # 0 open, 1 frozen
    bl: np.ndarray  # the rows with an upper bound
    bu: np.ndarray  # the level at which each reaches it
    adj: np.ndarray  # each link's rows
    coef: np.ndarray  # and their coefficients on it


@njit
def fill_scratch(slot, n_links, n_rows, nnz):  # type: ignore[no-untyped-def]
    """:class:`FillScratch` around ``slot`` for calls whose rows use at most ``n_links``
    links, number at most ``n_rows`` and have at most ``nnz`` entries."""
    return FillScratch(
        slot, np.empty(n_links, np.int64), np.empty(n_links + 1, np.int64),
        np.empty(n_links, np.int64), np.empty(n_links, np.int64), np.empty(n_links, np.int64),
        np.empty(n_links, np.int64), np.empty(n_links, np.int64), np.empty(n_links),
        np.empty(n_links), np.empty(n_links), np.empty(n_links), np.empty(n_links),
        np.empty(n_rows, np.int8), np.empty(n_rows, np.int64), np.empty(n_rows),
        np.empty(nnz, np.int64), np.empty(nnz),
    )


@njit
def progressive_filling(indptr, indices, data, rows, cap, w, ub, slot):  # type: ignore[no-untyped-def]
    """Weighted max-min rates of rows ``rows`` of a CSR usage matrix (progressive filling).

    Row ``p`` of the problem is row ``rows[p]`` of the matrix ``(indptr, indices,
    data)`` (non-negative coefficients); ``cap`` holds every link's capacity, ``w[p]``
    and ``ub[p]`` the row's weight (positive) and upper bound (``inf``: none).
    ``slot``: one entry per link, all ``-1``, and so again on return (scratch).
    :func:`fill_rows` on scratch of this call's size.
    """
    n = rows.size
    nnz = 0
    for p in range(n):
        nnz += indptr[rows[p] + 1] - indptr[rows[p]]
    x = np.empty(n)
    (_, links, lstart, lcnt, num, kof, stack, hk, frozen, dem, fresh, lev, hval, state, bl, bu,
     adj, coef) = fill_scratch(slot, min(cap.size, nnz), n, nnz)
    fill_rows(indptr, indices, data, rows, cap, w, ub, x, rows, np.arange(n), slot, links,
              lstart, lcnt, num, kof, stack, hk, frozen, dem, fresh, lev, hval, state, bl, bu,
              adj, coef)
    return x


@njit
def fill_rows(  # type: ignore[no-untyped-def]
    indptr, indices, data, rows, cap, w, ub, x, every, at, slot, links, lstart, lcnt, num, kof,
    stack, hk, frozen, dem, fresh, lev, hval, state, bl, bu, adj, coef,
):
    """:func:`progressive_filling` into ``x[:rows.size]``, on the caller's scratch.

    ``slot``... ``coef``: the fields of a :class:`FillScratch`, one by one (Varys's
    backfilling calls this for every group: as one tuple they cost a sixth of its time).
    Returns how many links the rows use (they are ``links[:nl]``). ``every[at]``: the
    rows whose order breaks ties (below); ``rows`` are these in the same order, less
    some that progressive filling freezes at 0 from the start (``ub <= 0``, or on a
    link without capacity), which a caller may leave out unread. ``at.size ==
    rows.size``: none is left out (``at`` is not read).

    Every open row's rate is ``w * level``, the level rising from 0. Link ``k``
    saturates at the level ``(cap_k - frozen_k) / open_k`` (what the frozen rows leave
    of it over its open rows' weighted coefficients); the link that saturates first
    freezes its open rows there, which changes the levels of the other links those
    rows use (never below the current level). A heap keyed by these levels picks the
    next link, so a call costs ``O(nnz log links)`` rather than a pass over every
    open row and link per saturation level; rows freeze at their upper bounds as the
    level passes ``ub / w``. Rows on links without capacity, and rows with
    ``ub <= 0``, stay at 0; rows that use no link and have no bound get ``inf``.
    Among links that saturate at one level, the one that appears first in ``every[at]``
    goes first: links are numbered over ``rows`` and, when rows are left out, at the
    first such tie numbered afresh over ``every[at]`` (:func:`_number_all`).

    A link's open weight is kept by subtraction as rows freeze, and summed afresh from
    its open rows when it falls to :data:`REFRESH` of its last fresh sum (weights far
    apart on one link would otherwise leave a stale remainder); a link with no open row
    left drops out whatever its remainder.
    """
    n = rows.size
    # the links the rows use, numbered locally by first appearance; rows with no room
    nl = 0
    nopen = 0
    for p in range(n):
        x[p] = 0.0
        j = rows[p]
        s = 0 if ub[p] > 0.0 else 1
        for e in range(indptr[j], indptr[j + 1]):
            lk = indices[e]
            if slot[lk] < 0:
                slot[lk] = nl
                links[nl] = lk
                kof[nl] = nl
                nl += 1
            if data[e] > 0.0 and not cap[lk] > 0.0:
                s = 1
        state[p] = s
        nopen += 1 - s
    if n == 1 and nopen == 1 and ub[0] == np.inf and nl == indptr[rows[0] + 1] - indptr[rows[0]]:
        # one row, on distinct links: it stops at its smallest level, whichever link that is
        j = rows[0]
        v = np.inf
        for e in range(indptr[j], indptr[j + 1]):
            if data[e] > 0.0:
                t = cap[indices[e]] / (data[e] * w[0])
                if t < v:
                    v = t
        x[0] = w[0] * v  # inf if it uses no link
        for k in range(nl):
            slot[links[k]] = -1
        return nl
    # each link's rows in row order
    for k in range(nl + 1):
        lstart[k] = 0
    for p in range(n):
        j = rows[p]
        for e in range(indptr[j], indptr[j + 1]):
            lstart[slot[indices[e]] + 1] += 1
    for k in range(nl):
        lstart[k + 1] += lstart[k]
        lcnt[k] = lstart[k]  # the next place to fill
    for p in range(n):
        j = rows[p]
        for e in range(indptr[j], indptr[j + 1]):
            k = slot[indices[e]]
            adj[lcnt[k]] = p
            coef[lcnt[k]] = data[e]
            lcnt[k] += 1
    hn = 0
    for k in range(nl):
        frozen[k] = 0.0
        lcnt[k] = _open_demand(k, lstart, adj, coef, w, state, dem)
        fresh[k] = dem[k]
        lev[k] = np.inf
        if lcnt[k] > 0:
            lev[k] = cap[links[k]] / dem[k]
            hn = _heap_push(hval, hk, hn, lev[k], k)
    # rows with an upper bound, by the level at which they reach it
    nb = 0
    for p in range(n):
        if state[p] == 0 and ub[p] < np.inf:
            bl[nb] = p
            bu[nb] = ub[p] / w[p]
            nb += 1
    border = np.argsort(bu[:nb], kind="mergesort") if nb > 0 else bl[:0]
    bi = 0
    exact = at.size == n
    level = 0.0
    while nopen > 0:
        # a link's level only rises as rows freeze: a stale entry goes back in at the
        # link's level, an entry of a link without open rows goes
        while hn > 0:
            k = kof[hk[0]]
            if lcnt[k] == 0:
                hn = _heap_pop(hval, hk, hn)
            elif hval[0] != lev[k]:
                hval[0] = lev[k]
                _sift_down(hval, hk, hn, 0)
            else:
                break
        while bi < nb and state[bl[border[bi]]] != 0:
            bi += 1
        lk = hval[0] if hn > 0 else np.inf
        lb = bu[border[bi]] if bi < nb else np.inf
        if lb <= lk * (1 + SLACK):
            if lb == np.inf:
                break  # the open rows use no link with capacity left to share, and have no bound
            p = bl[border[bi]]
            bi += 1
            if lb > level:
                level = lb
            nopen -= _freeze(p, ub[p], x, state, rows, indptr, indices, data, w, slot, lstart,
                             adj, coef, cap, links, frozen, dem, fresh, lcnt, lev)
            continue
        if not exact and _tied(hval, hk, kof, hn, lcnt, lev, stack):
            _number_all(indptr, indices, every, at, slot, num, nl)
            exact = True
            hn = 0
            for k in range(nl):
                kof[num[k]] = k
                if lcnt[k] > 0:
                    hn = _heap_push(hval, hk, hn, lev[k], num[k])
            continue
        k = kof[hk[0]]
        hn = _heap_pop(hval, hk, hn)
        if lk > level:
            level = lk
        for q in range(lstart[k], lstart[k + 1]):
            p = adj[q]
            if state[p] == 0 and coef[q] > 0.0:
                nopen -= _freeze(p, w[p] * level, x, state, rows, indptr, indices, data, w, slot,
                                 lstart, adj, coef, cap, links, frozen, dem, fresh, lcnt, lev)
    for p in range(n):
        if state[p] == 0:
            x[p] = np.inf
    for k in range(nl):
        slot[links[k]] = -1
    return nl


@njit
def _freeze(p, xp, x, state, rows, indptr, indices, data, w, slot, start, adj, coef, cap,  # type: ignore[no-untyped-def]
            links, frozen, dem, fresh, cnt, lev):
    """Row ``p`` freezes at ``xp``: its links' open weight and saturation levels follow
    (a level never falls: rounding could take it below where it was).

    Returns 1 (the open rows it closes).
    """
    x[p] = xp
    state[p] = 1
    j = rows[p]
    for e in range(indptr[j], indptr[j + 1]):
        c = data[e]
        if not c > 0.0:
            continue
        k = slot[indices[e]]
        frozen[k] += c * xp
        cnt[k] -= 1
        if cnt[k] == 0:
            dem[k] = 0.0
            lev[k] = np.inf
            continue
        dem[k] -= c * w[p]
        if dem[k] <= REFRESH * fresh[k]:
            _open_demand(k, start, adj, coef, w, state, dem)
            fresh[k] = dem[k]
        v = (cap[links[k]] - frozen[k]) / dem[k]
        if v > lev[k]:
            lev[k] = v
    return 1


@njit
def _open_demand(k, start, adj, coef, w, state, dem):  # type: ignore[no-untyped-def]
    """Link ``k``'s open weight (its open rows' weighted coefficients, summed in row
    order) into ``dem[k]``; returns how many open rows it has."""
    d = 0.0
    c = 0
    for q in range(start[k], start[k + 1]):
        p = adj[q]
        if state[p] == 0 and coef[q] > 0.0:
            d += coef[q] * w[p]
            c += 1
    dem[k] = d
    return c


@njit
def _tied(hval, hk, kof, hn, lcnt, lev, stack):  # type: ignore[no-untyped-def]
    """Whether another link than the heap's first (a live entry) saturates at its level.

    Such a link's entry holds that level (entries never lie above their link's level,
    nor below the first), so it lies in the subtree of entries equal to the first.
    ``stack``: scratch of at least ``hn`` integers.
    """
    top = hval[0]
    ns = 0
    for i in (1, 2):
        if i < hn and hval[i] == top:
            stack[ns] = i
            ns += 1
    while ns > 0:
        ns -= 1
        i = stack[ns]
        k = kof[hk[i]]
        if lcnt[k] > 0 and lev[k] == top:
            return True
        for c in (2 * i + 1, 2 * i + 2):
            if c < hn and hval[c] == top:
                stack[ns] = c
                ns += 1
    return False


@njit
def _number_all(indptr, indices, every, at, slot, num, nl):  # type: ignore[no-untyped-def]
    """``num[k]``: the order in which link ``links[k]`` first appears in the rows
    ``every[at]`` (among the ``nl`` links numbered in ``slot``)."""
    for k in range(nl):
        num[k] = -1
    t = 0
    for g in range(at.size):
        j = every[at[g]]
        for e in range(indptr[j], indptr[j + 1]):
            k = slot[indices[e]]
            if k >= 0 and num[k] < 0:
                num[k] = t
                t += 1


@njit
def _before(hval, hk, a, b):  # type: ignore[no-untyped-def]
    """Heap entry ``a`` before ``b``: smaller level, then smaller link number."""
    return hval[a] < hval[b] or (hval[a] == hval[b] and hk[a] < hk[b])


@njit
def _heap_push(hval, hk, hn, v, k):  # type: ignore[no-untyped-def]
    """Add ``(v, k)`` to the heap of ``hn`` entries; returns the new size."""
    i = hn
    hval[i] = v
    hk[i] = k
    while i > 0:
        up = (i - 1) >> 1
        if not _before(hval, hk, i, up):
            break
        hval[i], hval[up] = hval[up], hval[i]
        hk[i], hk[up] = hk[up], hk[i]
        i = up
    return hn + 1


@njit
def _heap_pop(hval, hk, hn):  # type: ignore[no-untyped-def]
    """Drop the heap's first entry; returns the new size."""
    hn -= 1
    if hn > 0:
        hval[0] = hval[hn]
        hk[0] = hk[hn]
        _sift_down(hval, hk, hn, 0)
    return hn


@njit
def _sift_down(hval, hk, hn, i):  # type: ignore[no-untyped-def]
    """Move entry ``i`` down to its place in the heap of ``hn`` entries."""
    while True:
        a = 2 * i + 1
        if a >= hn:
            return
        b = a + 1
        if b < hn and _before(hval, hk, b, a):
            a = b
        if not _before(hval, hk, a, i):
            return
        hval[i], hval[a] = hval[a], hval[i]
        hk[i], hk[a] = hk[a], hk[i]
        i = a


@njit
def max_min_rows(indptr, indices, data, rows, cap, w, ub):  # type: ignore[no-untyped-def]
    """:func:`progressive_filling` with its own scratch."""
    return progressive_filling(indptr, indices, data, rows, cap, w, ub,
                               np.full(cap.size, -1, np.int64))
