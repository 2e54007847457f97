"""Permutation schedules on a uniform big switch, by per-port free-time lists (compiled).

When every flow uses two links (its ingress and egress port) with coefficient 1 and
every link has the same capacity ``c``, the greedy order-preserving allocation
(:func:`coflowopt.alloc.greedy` at every instant, coflows in order, flows of a coflow
by index) gives each flow either ``c`` or nothing: by induction along the order, every
link's residual capacity is ``c`` or 0 at every instant, and a flow gets the smaller of
its two links' residuals. Strict priority makes the flows independent of the ones after
them, so the schedule is built by inserting the flows one at a time, in priority order,
into each link's list of *free intervals*: a flow released at ``r`` runs at ``c`` in
the time from ``r`` on where both its links are free, until it has sent its size, and
that time is then taken out of both lists. This is the residual-profile evaluator of
:func:`coflowopt.exact.permutation.order_completion` specialised to 0/``c`` residuals,
where a profile is a sorted list of disjoint intervals; the tests compare its
completion times with the simulator's ``static-order`` policy.

The state after a prefix of an order (the free lists) depends on that prefix only, so a
search that changes an order from position ``p`` on can start from a copy of the state
after the first ``p`` coflows (:class:`FreeLists` keeps such copies).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from .._jit import njit
from ..instance import Instance

__all__ = ["uniform_two_link"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

_TOL = 2e-12
"""Time resolution, relative to the time (at least 1): a flow whose rest would take less
is done, and a free gap shorter than that is no gap (the simulator merges events within
``1e-12 * max(1, |t|)`` of each other; a crumb of rounding otherwise finished a flow 1.5 s
late, in the next free gap of its links)."""


def uniform_two_link(inst: Instance) -> tuple[IntArray, IntArray, float] | None:
    """Each flow's two links and the common capacity, or ``None`` if the instance is not
    a uniform two-link one (then the free lists do not apply)."""
    routes = inst.routes
    cap = np.asarray(inst.fabric.capacity, dtype=np.float64)
    if inst.num_flows == 0 or cap.size == 0 or not np.all(cap == cap[0]):
        return None
    if not np.all(np.diff(routes.indptr) == 2) or not np.all(routes.data == 1.0):
        return None
    starts = routes.indptr[:-1]
    la = np.ascontiguousarray(routes.indices[starts], dtype=np.int64)
    lb = np.ascontiguousarray(routes.indices[starts + 1], dtype=np.int64)
    if np.any(la == lb):
        return None
    return la, lb, float(cap[0])


@njit
def _first_after(E, row, n, t):
    """Index of the first interval of ``row`` (``n`` intervals) that ends after ``t``."""
    return _bisect_end(E[row], 0, n, t)


@njit
def _bisect_end(ends, lo, hi, t):
    """First index in ``[lo, hi)`` of the sorted ``ends`` whose value exceeds ``t``."""
    return lo + np.searchsorted(ends[lo:hi], t, side="right")


@njit
def _grow(S, E, need):
    """The lists with room for ``need`` intervals per link."""
    m = S.shape[1]
    while m < need:
        m *= 2
    S2 = np.empty((S.shape[0], m))
    E2 = np.empty((S.shape[0], m))
    S2[:, : S.shape[1]] = S
    E2[:, : S.shape[1]] = E
    return S2, E2


@njit
def _take(S, E, cnt, row, i0, i1, ps, pe, npc, buf_s, buf_e):
    """Remove the pieces ``ps[:npc], pe[:npc]`` (inside intervals ``i0..i1`` of ``row``)
    from that row's free list; returns the lists (grown if they had to be)."""
    nb = np.int64(0)
    j = 0
    for i in range(i0, i1 + 1):
        s = S[row, i]
        e = E[row, i]
        while j < npc and ps[j] < e:
            if ps[j] - s > _TOL * max(1.0, abs(s)):
                buf_s[nb] = s
                buf_e[nb] = ps[j]
                nb += 1
            if pe[j] > s:
                s = pe[j]
            j += 1
        if e - s > _TOL * max(1.0, abs(s)):
            buf_s[nb] = s
            buf_e[nb] = e
            nb += 1
    n = cnt[row]
    old = i1 - i0 + 1
    new_n = n - old + nb
    if new_n > S.shape[1]:
        S, E = _grow(S, E, new_n)
    if nb != old:  # shift the tail
        if nb > old:
            for i in range(n - 1, i1, -1):
                S[row, i + nb - old] = S[row, i]
                E[row, i + nb - old] = E[row, i]
        else:
            for i in range(i1 + 1, n):
                S[row, i + nb - old] = S[row, i]
                E[row, i + nb - old] = E[row, i]
    for q in range(nb):
        S[row, i0 + q] = buf_s[q]
        E[row, i0 + q] = buf_e[q]
    cnt[row] = new_n
    return S, E


@njit
def _insert(S, E, cnt, a, b, rel, dur, ps, pe, buf_s, buf_e):
    """Serve a flow on links ``a`` and ``b`` for ``dur`` seconds of both-free time from
    ``rel`` on; returns ``(end, pieces, S, E)`` with the pieces in ``ps``, ``pe``."""
    na = cnt[a]
    nb = cnt[b]
    ia0 = _first_after(E, a, na, rel)
    ib0 = _first_after(E, b, nb, rel)
    ia = ia0
    ib = ib0
    rem = dur
    npc = np.int64(0)
    end = rel
    # the last interval of each list ends at infinity: the loop ends there at the latest
    while rem > 0.0:
        s = max(S[a, ia], S[b, ib], rel)
        e = min(E[a, ia], E[b, ib])
        tol = _TOL * max(1.0, abs(s))
        if e - s >= rem - tol:  # done here (a rest below the time resolution included)
            ps[npc] = s
            end = min(s + rem, e)
            pe[npc] = end
            npc += 1
            rem = 0.0
        elif e - s > tol:  # a common gap (a sliver of rounding is none)
            ps[npc] = s
            pe[npc] = e
            npc += 1
            rem -= e - s
        if rem > 0.0:
            if E[a, ia] <= E[b, ib]:
                ia += 1
            else:
                ib += 1
    if npc > 0:
        S, E = _take(S, E, cnt, a, ia0, ia, ps, pe, npc, buf_s, buf_e)
        S, E = _take(S, E, cnt, b, ib0, ib, ps, pe, npc, buf_s, buf_e)
    return end, npc, S, E


@njit
def run_order(
    S, E, cnt, order, pos0, pos1, ptr, la, lb, frel, dur, w, lb_k, comp, limit, record,
    rec_f, rec_s, rec_e,
):
    """Insert the coflows ``order[pos0:pos1]`` into the free lists ``S, E, cnt`` (changed in
    place, grown when needed) and write their completion times into ``comp``.

    Stops early once ``sum w C`` of the coflows inserted so far plus ``lb_k`` (a lower
    bound on each coflow's completion) of those of ``order[pos0:pos1]`` still to come
    reaches ``limit``.
    With ``record``, every piece is appended to ``rec_*`` (grown when needed).
    Returns ``(complete, partial sum w C, S, E, rec_f, rec_s, rec_e, pieces)``.
    """
    rest = 0.0
    for q in range(pos0, pos1):
        rest += w[order[q]] * lb_k[order[q]]
    total = 0.0
    ps = np.empty(16)
    pe = np.empty(16)
    buf_s = np.empty(32)
    buf_e = np.empty(32)
    nrec = np.int64(0)
    for q in range(pos0, pos1):
        k = order[q]
        ck = 0.0
        for f in range(ptr[k], ptr[k + 1]):
            # pieces: at most one per interval looked at; the rewritten range of a list:
            # its old intervals plus one per piece
            need = cnt[la[f]] + cnt[lb[f]] + 2
            if ps.size < need:
                ps = np.empty(2 * need)
                pe = np.empty(2 * need)
                buf_s = np.empty(4 * need)
                buf_e = np.empty(4 * need)
            end, npc, S, E = _insert(S, E, cnt, la[f], lb[f], frel[f], dur[f], ps, pe,
                                     buf_s, buf_e)
            if record:
                if nrec + npc > rec_f.size:
                    m = 2 * (nrec + npc)
                    rf = np.empty(m, np.int64)
                    rs = np.empty(m)
                    re = np.empty(m)
                    rf[:nrec] = rec_f[:nrec]
                    rs[:nrec] = rec_s[:nrec]
                    re[:nrec] = rec_e[:nrec]
                    rec_f, rec_s, rec_e = rf, rs, re
                for j in range(npc):
                    rec_f[nrec] = f
                    rec_s[nrec] = ps[j]
                    rec_e[nrec] = pe[j]
                    nrec += 1
            if end > ck:
                ck = end
        comp[k] = ck
        total += w[k] * ck
        rest -= w[k] * lb_k[k]
        if total + rest >= limit:
            return False, total, S, E, rec_f, rec_s, rec_e, nrec
    return True, total, S, E, rec_f, rec_s, rec_e, nrec


@njit
def pack(S, E, cnt):
    """The free lists as two flat arrays (link by link) and a copy of the counts."""
    n = 0
    for row in range(cnt.size):
        n += cnt[row]
    fs = np.empty(n)
    fe = np.empty(n)
    q = 0
    for row in range(cnt.size):
        for i in range(cnt[row]):
            fs[q] = S[row, i]
            fe[q] = E[row, i]
            q += 1
    return fs, fe, cnt.copy()


@njit
def unpack(fs, fe, cnt):
    """Free lists (fresh arrays) from :func:`pack`'s output."""
    m = 8
    for row in range(cnt.size):
        while m < cnt[row] + 1:
            m *= 2
    S = np.empty((cnt.size, m))
    E = np.empty((cnt.size, m))
    q = 0
    for row in range(cnt.size):
        for i in range(cnt[row]):
            S[row, i] = fs[q]
            E[row, i] = fe[q]
            q += 1
    return S, E, cnt.copy()


@njit
def same(S, E, cnt, fs, fe, cnt2, tmin):
    """Whether the free lists equal packed ones from time ``tmin`` on, up to the time
    resolution (what lies before ``tmin`` no flow released from then on can use)."""
    off = 0
    for row in range(cnt.size):
        n2 = cnt2[row]
        lo = _bisect_end(fe, off, off + n2, tmin)  # the packed row, from tmin on
        i = _first_after(E, row, cnt[row], tmin)
        if cnt[row] - i != off + n2 - lo:
            return False
        q = lo
        while i < cnt[row]:
            a = max(S[row, i], tmin)
            b = max(fs[q], tmin)
            if abs(a - b) > _TOL * max(1.0, abs(a)):
                return False
            a = E[row, i]
            b = fe[q]
            if a != b and abs(a - b) > _TOL * max(1.0, abs(a)):
                return False
            i += 1
            q += 1
        off += n2
    return True
