"""Per-flow weighted max-min over time, kept per pair of links (``fair``, ``wss``).

On a two-sided fabric (every flow from a left link to a right link: the big
switch) weighted max-min gives a flow of weight ``w`` on links ``(i, j)``
the rate ``w * min(lam_i, lam_j)``: every flow of a pair runs at the same
*level* times its weight, the level of the pair's *bottleneck* link. So the
kernel keeps

- per link ``u``: the level ``rho[u]`` in effect and a *clock* ``V[u]``,
  the integral of that level over time (brought up to date when it
  changes);
- per pair ``p``: the total weight of its flows (the water-filling input),
  the link it is attached to (its bottleneck: the link of smaller level)
  and an offset ``c[p]``: the pair's *virtual service* (what a flow of
  weight 1 received since the pair got flows) is ``V[att] - c[p]``;
- per pair, a min-heap of its flows' keys ``service at admission + size /
  w`` (minus what a flow had received before): a flow completes when the
  pair's service reaches its key; ``K[p]``, the smallest key in its link's
  clock, and per link the smallest ``K`` of its pairs.

At each event (flow completions; everything within the engine's time
tolerance together) the kernel recomputes the water levels
(:func:`.maxmin.waterfill`) and puts into effect the levels of the links
whose level changed by more than ``change_tol`` relative: the reference
``fair`` policy re-rates only the flows on such links (and new flows), so
that flows elsewhere keep their rates; ``wss`` recomputes every rate, which
is ``change_tol = 0``. A changed link costs ``O(1)`` plus a scan of its
pairs for those whose bottleneck side flips (only those move), so an event
costs the water-filling plus ``O(R)`` per changed link; idle flows cost
nothing. When recording, the kernel logs the links' level changes and, as
each flow completes, one *tied piece* (:class:`coflowopt.schedule.TiedPieces`:
the flow at its weight times the smaller level of its two links, from when it
joined to when it completed), not every flow's piece at every level change
(232 million pieces on the Facebook trace, against 1.5 million level
changes).

A flow's rate is the smaller level in effect of its two links. Where the
reference re-rates a flow because one of its links changed, it takes the
other link's latest computed level, which differs from the one in effect by
less than ``change_tol`` relative (rounding): the results agree to rounding
(``tests/sim/test_kernels_fair.py``: completions and starts to 1e-12 on random
instances and Facebook prefixes; 2e-15 on the whole trace).

Two variants hold flows back until they may join (the same water-filling
then runs over the joined flows): a limit per group (``fair``'s receiver
limit: a group's waiting flows take the places its completions free, in
flow order, :func:`pair_admit`) and FIFO gates per link (``baraat``: a flow
joins once its coflow may send on both its links; the kernel moves each
link's gate when its first light coflow turns heavy, predicted from that
coflow's rate through the link, or completes its flows there,
:func:`pair_gate_admit`). Gate events cost a pass over the flows of each
link's first light coflow.

The state persists across calls: the policy admits new flows with
:func:`pair_join` and hands the same state to every stretch. The kernel
keeps the rates itself and leaves ``rate_out`` at zero, so the engine holds
no rate for these flows between calls; ``sent`` is exact at return.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ..._jit import njit
from ...kernels.maxmin import waterfill
from ._common import EVENT, gate_slots, next_event, tied_completed

__all__ = ["new_pair_state", "pair_admit", "pair_gate_admit", "pair_join", "pair_stretch"]

CANCEL = 1e-6
"""A link whose weight falls below this fraction of the weight just removed sums its pairs'
weights afresh (see :func:`pair_stretch`)."""

_DIRTY, _NFRESH, _NNEW, _ONEPASS = 0, 1, 2, 3
"""Slots of the ``meta`` array: levels stale; fresh flows; pairs waiting to attach; levels
are each link's capacity over its weight instead of the water-filling's (``one_pass``)."""

_C, _TOP = 0, 1
"""Columns of the per-pair record ``pd``: offset of the pair's service from its link's
clock, smallest key of its heap (``inf`` when empty)."""


def new_pair_state(
    la: npt.NDArray[np.int64], lb: npt.NDArray[np.int64], split: int, cap: npt.NDArray[np.float64],
    weight: npt.NDArray[np.float64], change_tol: float, stop_at: npt.NDArray[np.bool_],
    group: npt.NDArray[np.int64] | None = None, limit: int = 0,
    gate: tuple[npt.NDArray[np.int64], int, float, float] | None = None, one_pass: bool = False,
) -> tuple[object, ...]:
    """The kernel state for a fabric split at ``split`` (the ``*args`` of both functions).

    ``weight``: each flow's weight (1 for per-flow fairness); ``stop_at``:
    the coflows whose completion must return control to the engine.
    ``group``, ``limit``: at most ``limit`` flows of each group (ids ``0..G-1``
    per flow) hold a place at once; the others wait, and take a place in
    flow order when one frees up (``fair``'s receiver limit; see
    :func:`pair_admit`). ``limit = 0``: no limit. ``gate = (flow_coflow,
    num_coflows, threshold, reach)``: FIFO gates per link (``baraat``): a flow
    joins only once its coflow may send on both its links
    (:func:`pair_gate_admit`); a coflow within ``reach`` (relative) below the
    threshold is at it. ``one_pass``: a link's level is its capacity over the weight of its
    flows, with no water-filling (coflowsim's per-flow fair share, a flow of weight ``w``
    on links ``(i, j)`` getting ``w * min(cap_i / W_i, cap_j / W_j)``; not work-conserving).
    """
    s = int(split)
    L = cap.size
    R = L - s
    P = s * R
    F = la.size
    pair = la.astype(np.int64) * R + (lb.astype(np.int64) - s)
    hs = np.zeros(P + 1, np.int64)
    np.cumsum(np.bincount(pair, minlength=P), out=hs[1:])
    pd = np.zeros((P, 4))
    pd[:, _TOP] = np.inf
    meta = np.zeros(4, np.int64)
    meta[_ONEPASS] = bool(one_pass)
    return (
        np.int64(s),
        # copies, writeable as the other callers' capacities (read-only ones would have
        # maxmin.waterfill compiled a second time)
        np.array(cap[:s], dtype=np.float64),
        np.array(cap[s:], dtype=np.float64),
        np.ascontiguousarray(weight, dtype=np.float64),  # fw: per flow
        float(change_tol),
        np.ascontiguousarray(stop_at, dtype=np.bool_),
        np.zeros((s, R)),  # W: weight per pair
        np.zeros((R, s)),  # WT
        np.zeros(s),  # dem_l: weight per left link
        np.zeros(R),  # dem_r
        np.zeros(s, np.int64),  # nf_l: flows per left link
        np.zeros(R, np.int64),  # nf_r
        np.zeros(P, np.int64),  # cnt: flows per pair
        np.full(P, -1, np.int8),  # side: 0 attached to its left link, 1 right, -1 none (no flows)
        pd,  # pd: per pair, see _C, _TOP
        np.full(P, np.inf),  # K: smallest key of each pair in its link's clock
        np.full(L, np.inf),  # lam: levels last computed (left links, then right)
        np.full(L, np.inf),  # rho: levels in effect (inf: limits no flow)
        np.zeros(L),  # V: clock of each link at time tV
        np.zeros(L),  # tV
        np.full(L, np.inf),  # Tl: each link's next completion
        np.ones(L, np.bool_),  # lstale: links whose Tl must be recomputed
        hs,  # heap segment of each pair
        np.zeros(P, np.int64),  # hn: heap sizes
        np.zeros(max(F, 1)),  # hk: heap keys
        np.zeros(max(F, 1), np.int64),  # hf: heap flows
        np.full(max(F, 1), np.nan),  # fkey: key per flow (nan: not held)
        np.zeros(max(F, 1)),  # pstart: when each flow joined (its tied piece's start)
        np.zeros(P, np.int64),  # newp: pairs that got their first flows
        np.zeros(max(F, 1), np.int64),  # fresh: flows joined since the last call
        meta,
        *_group_state(group, limit, F),
        *_gate_state(gate, la, lb, L, F),
    )


def _gate_state(
    gate: tuple[npt.NDArray[np.int64], int, float, float] | None, la: npt.NDArray[np.int64],
    lb: npt.NDArray[np.int64], L: int, F: int,
) -> tuple[object, ...]:
    """The FIFO gates' arrays of the state (see :func:`new_pair_state`)."""
    n = max(F, 1)
    if gate is None:
        fco, K, threshold, reach = np.zeros(F, np.int64), 0, 0.0, 0.0
        on = 0
    else:
        fco, K = np.asarray(gate[0], np.int64), int(gate[1])
        threshold, reach = float(gate[2]), float(gate[3])
        on = 1
    # a slot per (coflow, link) that a flow uses: its flows, FIFO position and counters
    ef = np.concatenate([np.arange(F), np.arange(F)]) if on else np.zeros(0, np.int64)
    el = np.concatenate([la, lb]) if on else np.zeros(0, np.int64)
    inv, sptr, order, slink, cslot, lptr = gate_slots(fco, ef, el, L, K)
    S = sptr.size - 1
    sflow = ef[order] if on else np.zeros(1, np.int64)
    if not on:
        slink = np.zeros(1, np.int64)
    return (
        np.array([threshold, 1.0 - reach], np.float64),  # bth: threshold, its "at" factor
        np.array([on, 0], np.int64),  # bmeta: on, pending links
        inv[:F] if on else np.zeros(n, np.int64),  # sa: each flow's slot on its first link
        inv[F:] if on else np.zeros(n, np.int64),  # sb: on its second link
        sptr,
        sflow.astype(np.int64),  # flows of each slot
        slink,
        cslot,
        np.zeros(max(S, 1), np.int64),  # spres: unfinished flows of each slot
        np.zeros(max(S, 1)),  # sdone: bytes of its finished flows
        np.zeros(max(S, 1), np.bool_),  # sheavy
        np.full(max(S, 1), -1, np.int64),  # spos: position in its link's FIFO (-1: not yet)
        lptr,
        np.zeros(max(S, 1), np.int64),  # lfifo: each link's slots, first in first out
        np.zeros(L, np.int64),  # lnf: slots queued per link
        np.zeros(L, np.int64),  # lcand: position of each link's first light slot (lnf: none)
        np.zeros(L, np.bool_),  # lmark: listed in lpend
        np.zeros(L, np.int64),  # lpend: links whose candidate may move
        np.full(L, np.inf),  # lT: when each link's candidate turns heavy at current rates
        np.zeros(n, np.bool_),  # fjn: flows joined to their pairs
        np.zeros(n, np.bool_),  # fent: joined flows whose key holds their size
        np.zeros(n),  # fbase: each joined flow's key without its size (its service at zero bytes)
    )


def _group_state(group: npt.NDArray[np.int64] | None, limit: int, F: int) -> tuple[object, ...]:
    """The receiver-limit arrays of the state (see :func:`new_pair_state`)."""
    if group is None or limit <= 0:
        g = np.full(max(F, 1), -1, np.int64)
        G = 0
    else:
        g = np.ascontiguousarray(group, dtype=np.int64)
        G = int(g.max()) + 1 if g.size else 0
    ws = np.zeros(G + 1, np.int64)
    if G:
        np.cumsum(np.bincount(g, minlength=G), out=ws[1:])
    n = max(F, 1) if G else 1
    return (
        g,  # grp: each flow's group (-1: no limit)
        np.array([max(int(limit), 0) if G else 0, 0], np.int64),  # gmeta: limit, pending groups
        np.zeros(G, np.int64),  # grun: flows of each group that hold a place
        ws,  # gws: heap segment of each group's waiting flows
        np.zeros(G, np.int64),  # gwn: waiting flows per group
        np.zeros(n),  # gwk: heap keys (the flow's index)
        np.zeros(n, np.int64),  # gwf: heap flows
        np.zeros(max(G, 1), np.int64),  # gpend: groups that may take a waiting flow
        np.zeros(max(G, 1), np.bool_),  # gmark: listed in gpend
    )


@njit
def _heap_push(hk, hf, base, n, key, f):  # type: ignore[no-untyped-def]
    i = n
    while i > 0:
        parent = (i - 1) >> 1
        if hk[base + parent] <= key:
            break
        hk[base + i] = hk[base + parent]
        hf[base + i] = hf[base + parent]
        i = parent
    hk[base + i] = key
    hf[base + i] = f


@njit
def _heap_pop(hk, hf, base, n):  # type: ignore[no-untyped-def]
    """Drop the root of the heap of size ``n`` (the caller decrements the size)."""
    n -= 1
    key = hk[base + n]
    f = hf[base + n]
    i = 0
    while True:
        c = 2 * i + 1
        if c >= n:
            break
        if c + 1 < n and hk[base + c + 1] < hk[base + c]:
            c += 1
        if hk[base + c] >= key:
            break
        hk[base + i] = hk[base + c]
        hf[base + i] = hf[base + c]
        i = c
    if n > 0:
        hk[base + i] = key
        hf[base + i] = f


@njit
def _clock(u, t, rho, V, tV):  # type: ignore[no-untyped-def]
    """Link ``u``'s clock at time ``t`` (links of level ``inf`` carry no pairs)."""
    dt = t - tV[u]
    return V[u] if dt == 0.0 else V[u] + rho[u] * dt


@njit
def _att(p, s, R, side):  # type: ignore[no-untyped-def]
    """The link pair ``p`` is attached to."""
    i = p // R
    return i if side[p] == 0 else s + (p - i * R)


@njit
def _join(  # type: ignore[no-untyped-def]
    f, t, sent_f, la, lb, s, R, fw, W, WT, dem_l, dem_r, nf_l, nf_r, cnt, side, pd, rho, V, tV,
    fkey, pstart, newp, fresh, meta,
):
    """Flow ``f`` joins its pair at ``t`` having received ``sent_f``, as a fresh flow: its
    key lacks its size until it enters its pair's heap (:func:`_enter_fresh`)."""
    a = la[f]
    b = lb[f] - s
    p = a * R + b
    if cnt[p] == 0:
        # a new pair's service starts at 0 now (it attaches at the next recomputation)
        newp[meta[_NNEW]] = p
        meta[_NNEW] += 1
        S = 0.0
    elif side[p] < 0:
        S = 0.0
    else:
        S = _clock(_att(p, s, R, side), t, rho, V, tV) - pd[p, _C]
    fkey[f] = S - sent_f / fw[f]
    cnt[p] += 1
    W[a, b] += fw[f]
    WT[b, a] += fw[f]
    dem_l[a] += fw[f]
    dem_r[b] += fw[f]
    nf_l[a] += 1
    nf_r[b] += 1
    pstart[f] = t
    fresh[meta[_NFRESH]] = f
    meta[_NFRESH] += 1
    meta[_DIRTY] = 1


@njit
def _enter(f, t, la, lb, s, R, size, fw, fco, start, pd, side, K, rho, lstale, hs, hn, hk, hf, fkey):  # type: ignore[no-untyped-def]
    """A joined flow enters its pair's heap, its key completed by its size."""
    p = la[f] * R + lb[f] - s
    key = fkey[f] + size[f] / fw[f]
    fkey[f] = key
    _heap_push(hk, hf, hs[p], hn[p], key, f)
    hn[p] += 1
    if key < pd[p, _TOP]:
        pd[p, _TOP] = key
    if side[p] >= 0:
        # a flow that joins a running pair starts now
        u = _att(p, s, R, side)
        K[p] = pd[p, _TOP] + pd[p, _C]
        lstale[u] = True
        if rho[u] > 0.0:
            k = fco[f]
            if t < start[k]:
                start[k] = t


@njit
def pair_join(  # type: ignore[no-untyped-def]
    flows, t, la, lb, sent,
    s, cap_l, cap_r, fw, change_tol, stop_at, W, WT, dem_l, dem_r, nf_l, nf_r, cnt, side, pd,
    K, lam, rho, V, tV, Tl, lstale, hs, hn, hk, hf, fkey, pstart, newp, fresh, meta,
    grp, gmeta, grun, gws, gwn, gwk, gwf, gpend, gmark,
    bth, bmeta, sa, sb, sptr, sflow, slink, cslot, spres, sdone, sheavy, spos,
    lptr, lfifo, lnf, lcand, lmark, lpend, lT, fjn, fent, fbase,
):
    """Admit ``flows`` at time ``t`` (``sent[q]``: bytes flow ``flows[q]`` received so far).

    Rates follow at the next call. Sizes are not needed here (non-clairvoyant
    policies call it): the next kernel call completes each flow's key. With a
    limit (:func:`new_pair_state`) use :func:`pair_admit`.
    """
    R = cap_r.size
    for q in range(flows.size):
        f = flows[q]
        _join(f, t, sent[q], la, lb, s, R, fw, W, WT, dem_l, dem_r, nf_l, nf_r, cnt, side, pd,
              rho, V, tV, fkey, pstart, newp, fresh, meta)


@njit
def _take_place(g, gmeta, grun, gws, gwn, gwk, gwf):  # type: ignore[no-untyped-def]
    """The next waiting flow of group ``g`` if the group has a free place (else -1)."""
    if grun[g] >= gmeta[0] or gwn[g] == 0:
        return -1
    base = gws[g]
    f = gwf[base]
    _heap_pop(gwk, gwf, base, gwn[g])
    gwn[g] -= 1
    grun[g] += 1
    return f


@njit
def _enlist(i, meta, lst, mark):  # type: ignore[no-untyped-def]
    """Append ``i`` to ``lst`` (its length in ``meta[1]``) unless ``mark[i]`` says it is
    there: groups that may have a free place, links whose candidate may move."""
    if not mark[i]:
        mark[i] = True
        lst[meta[1]] = i
        meta[1] += 1


@njit
def pair_admit(  # type: ignore[no-untyped-def]
    flows, t, la, lb,
    s, cap_l, cap_r, fw, change_tol, stop_at, W, WT, dem_l, dem_r, nf_l, nf_r, cnt, side, pd,
    K, lam, rho, V, tV, Tl, lstale, hs, hn, hk, hf, fkey, pstart, newp, fresh, meta,
    grp, gmeta, grun, gws, gwn, gwk, gwf, gpend, gmark,
    bth, bmeta, sa, sb, sptr, sflow, slink, cslot, spres, sdone, sheavy, spos,
    lptr, lfifo, lnf, lcand, lmark, lpend, lT, fjn, fent, fbase,
):
    """:func:`pair_join` under a limit per group: ``flows`` (which have received nothing)
    wait in their groups, then every group with a free place (theirs, and those a flow
    completion freed at the end of the last call) takes its waiting flows in flow order.
    Flows that hold a place keep it until they complete."""
    R = cap_r.size
    for q in range(flows.size):
        f = flows[q]
        g = grp[f]
        _heap_push(gwk, gwf, gws[g], gwn[g], float(f), f)
        gwn[g] += 1
        _enlist(g, gmeta, gpend, gmark)
    _fill(t, la, lb, s, R, fw, W, WT, dem_l, dem_r, nf_l, nf_r, cnt, side, pd, rho, V, tV,
          fkey, pstart, newp, fresh, meta, gmeta, grun, gws, gwn, gwk, gwf, gpend, gmark)


@njit
def pair_gate_admit(  # type: ignore[no-untyped-def]
    coflows, t, la, lb,
    s, cap_l, cap_r, fw, change_tol, stop_at, W, WT, dem_l, dem_r, nf_l, nf_r, cnt, side, pd,
    K, lam, rho, V, tV, Tl, lstale, hs, hn, hk, hf, fkey, pstart, newp, fresh, meta,
    grp, gmeta, grun, gws, gwn, gwk, gwf, gpend, gmark,
    bth, bmeta, sa, sb, sptr, sflow, slink, cslot, spres, sdone, sheavy, spos,
    lptr, lfifo, lnf, lcand, lmark, lpend, lT, fjn, fent, fbase,
):
    """Admit whole ``coflows`` (first in first out, in this order) at ``t`` under FIFO gates:
    each queues behind the coflows on each of its links; its flows that may send on both
    their links join at once, the others wait (with nothing received)."""
    R = cap_r.size
    for i in range(coflows.size):
        k = coflows[i]
        for sl in range(cslot[k], cslot[k + 1]):
            u = slink[sl]
            spos[sl] = lnf[u]
            lfifo[lptr[u] + lnf[u]] = sl
            lnf[u] += 1
            spres[sl] = sptr[sl + 1] - sptr[sl]
    for i in range(coflows.size):
        k = coflows[i]
        for sl in range(cslot[k], cslot[k + 1]):
            if _allowed(sl, spos, slink, lcand):
                _open_slot(sl, t, la, lb, s, R, fw, W, WT, dem_l, dem_r, nf_l, nf_r, cnt, side, pd,
                           rho, V, tV, fkey, pstart, newp, fresh, meta, sa, sb, sptr, sflow, slink,
                           spos, lcand, fjn)
    meta[_DIRTY] = 1


@njit
def _fill(  # type: ignore[no-untyped-def]
    t, la, lb, s, R, fw, W, WT, dem_l, dem_r, nf_l, nf_r, cnt, side, pd, rho, V, tV, fkey,
    pstart, newp, fresh, meta, gmeta, grun, gws, gwn, gwk, gwf, gpend, gmark,
):
    """The listed groups' waiting flows take their free places, in flow order; they join
    their pairs at ``t`` (as fresh flows) with nothing received (a flow waits only until
    its first place)."""
    for q in range(gmeta[1]):
        g = gpend[q]
        gmark[g] = False
        while True:
            f = _take_place(g, gmeta, grun, gws, gwn, gwk, gwf)
            if f < 0:
                break
            _join(f, t, 0.0, la, lb, s, R, fw, W, WT, dem_l, dem_r, nf_l, nf_r, cnt, side, pd,
                  rho, V, tV, fkey, pstart, newp, fresh, meta)
    gmeta[1] = 0


@njit
def _enter_fresh(t, la, lb, s, R, size, fw, fco, start, pd, side, K, rho, lstale, hs, hn, hk, hf,  # type: ignore[no-untyped-def]
                 fkey, fresh, meta, fent, fbase):
    """The flows joined since the last call enter their pairs' heaps."""
    for q in range(meta[_NFRESH]):
        f = fresh[q]
        fbase[f] = fkey[f]
        _enter(f, t, la, lb, s, R, size, fw, fco, start, pd, side, K, rho, lstale, hs, hn, hk, hf,
               fkey)
        fent[f] = True
    meta[_NFRESH] = 0


# --- FIFO gates (baraat) ------------------------------------------------------------------
#
# A slot is a (coflow, link) with flows; each link queues its coflows' slots first in first
# out. Its *candidate* is its first slot that is present (has unfinished flows) and light
# (sent less than the threshold through the link, finished flows included); the slots up to
# and including it may send there (all of them when there is none). A flow joins its pair
# once its coflow may send on both its links. The allowed prefix of a link only grows while
# a coflow's flows all arrive together (candidates move on when they turn heavy or their
# last flow on the link completes; arrivals queue behind), so a joined flow never leaves.


@njit
def _allowed(sl, spos, slink, lcand):  # type: ignore[no-untyped-def]
    """Slot ``sl``'s coflow may send on its link."""
    return spos[sl] >= 0 and spos[sl] <= lcand[slink[sl]]


@njit
def _open_slot(  # type: ignore[no-untyped-def]
    sl, t, la, lb, s, R, fw, W, WT, dem_l, dem_r, nf_l, nf_r, cnt, side, pd, rho, V, tV, fkey,
    pstart, newp, fresh, meta, sa, sb, sptr, sflow, slink, spos, lcand, fjn,
):
    """The waiting flows of slot ``sl`` (just allowed on its link) whose other link allows
    their coflow too join their pairs at ``t`` (as fresh flows, with nothing received)."""
    for q in range(sptr[sl], sptr[sl + 1]):
        f = sflow[q]
        if fjn[f]:
            continue
        other = sb[f] if sa[f] == sl else sa[f]
        if _allowed(other, spos, slink, lcand):
            fjn[f] = True
            _join(f, t, 0.0, la, lb, s, R, fw, W, WT, dem_l, dem_r, nf_l, nf_r, cnt, side, pd, rho,
                  V, tV, fkey, pstart, newp, fresh, meta)


@njit
def move_candidate(u, spres, sheavy, lptr, lfifo, lnf, lcand, lmark):  # type: ignore[no-untyped-def]
    """Link ``u`` (listed) moves its candidate past the slots that are gone or heavy;
    returns the old candidate's position."""
    lmark[u] = False
    base = lptr[u]
    c = lcand[u]
    old = c
    while c < lnf[u]:
        sl = lfifo[base + c]
        if spres[sl] > 0 and not sheavy[sl]:
            break
        c += 1
    lcand[u] = c
    return old


@njit
def _advance_gates(  # type: ignore[no-untyped-def]
    t, la, lb, s, R, fw, W, WT, dem_l, dem_r, nf_l, nf_r, cnt, side, pd, rho, V, tV, fkey, pstart,
    newp, fresh, meta, bmeta, sa, sb, sptr, sflow, slink, spres, sheavy, spos, lptr, lfifo, lnf,
    lcand, lmark, lpend, fjn,
):
    """Each listed link's candidate moves past the slots that are gone or heavy; the slots it
    passes, and the new candidate, open."""
    for q in range(bmeta[1]):
        u = lpend[q]
        old = move_candidate(u, spres, sheavy, lptr, lfifo, lnf, lcand, lmark)
        base = lptr[u]
        for i in range(old + 1, min(lcand[u], lnf[u] - 1) + 1):
            _open_slot(lfifo[base + i], t, la, lb, s, R, fw, W, WT, dem_l, dem_r, nf_l, nf_r, cnt,
                       side, pd, rho, V, tV, fkey, pstart, newp, fresh, meta, sa, sb, sptr, sflow,
                       slink, spos, lcand, fjn)
    bmeta[1] = 0


@njit
def _slot_state(sl, t, la, lb, s, R, size, fw, side, pd, rho, V, tV, fkey, sptr, sflow, sdone, fent,  # type: ignore[no-untyped-def]
                fbase):
    """Bytes slot ``sl``'s coflow has sent through its link by ``t`` (finished flows
    included) and the rate at which that grows.

    A flow's bytes are its service since it joined (``fbase``), not its size less what
    it lacks: a threshold far below a flow's size would vanish in that difference."""
    x = sdone[sl]
    r = 0.0
    for q in range(sptr[sl], sptr[sl + 1]):
        f = sflow[q]
        key = fkey[f]
        if not fent[f] or key != key:
            continue  # waiting (or joined this instant), or finished (in sdone)
        p = la[f] * R + lb[f] - s
        if side[p] < 0:
            continue  # a pair that attaches at the next recomputation: nothing yet
        u = _att(p, s, R, side)
        got = fw[f] * (_clock(u, t, rho, V, tV) - pd[p, _C] - fbase[f])
        x += min(max(got, 0.0), size[f])
        if 0.0 < rho[u] < np.inf:
            r += fw[f] * rho[u]
    return x, r


@njit
def _heavy_now(  # type: ignore[no-untyped-def]
    t, due, la, lb, s, R, size, fw, side, pd, rho, V, tV, fkey, bth, bmeta, sptr, sflow, sdone,
    sheavy, lptr, lfifo, lnf, lcand, lmark, lpend, lT, fent, fbase,
):
    """Candidates that have sent the threshold by ``t`` turn heavy (only links whose
    predicted crossing is at most ``due``)."""
    for u in range(lnf.size):
        if lcand[u] >= lnf[u] or lT[u] > due:
            continue
        sl = lfifo[lptr[u] + lcand[u]]
        x, _ = _slot_state(sl, t, la, lb, s, R, size, fw, side, pd, rho, V, tV, fkey, sptr, sflow,
                           sdone, fent, fbase)
        if x >= bth[0] * bth[1]:
            sheavy[sl] = True
            _enlist(u, bmeta, lpend, lmark)


@njit
def _crossings(  # type: ignore[no-untyped-def]
    t, tol, la, lb, s, R, size, fw, side, pd, rho, V, tV, fkey, bth, sptr, sflow, sdone, lptr,
    lfifo, lnf, lcand, lT, fent, fbase,
):
    """When each link's candidate reaches the threshold at the current rates; the earliest.

    Never sooner than the engine's time resolution after ``t`` (two tolerances, as the
    engine moves a policy's wake-up): a crossing that close, whose bytes still fall short
    of the threshold's "at", is taken up there, as the reference's wake-up would be.
    """
    floor = t + 2.0 * tol * max(1.0, abs(t))
    first = np.inf
    for u in range(lnf.size):
        lT[u] = np.inf
        if lcand[u] >= lnf[u]:
            continue
        sl = lfifo[lptr[u] + lcand[u]]
        x, r = _slot_state(sl, t, la, lb, s, R, size, fw, side, pd, rho, V, tV, fkey, sptr, sflow,
                           sdone, fent, fbase)
        if r > 0.0:
            lT[u] = max(t + max(bth[0] - x, 0.0) / r, floor)
            if lT[u] < first:
                first = lT[u]
    return first


@njit
def _gate_done(f, size, bmeta, sa, sb, slink, spres, sdone, spos, lcand, lmark, lpend):  # type: ignore[no-untyped-def]
    """Flow ``f`` completed: its slots lose a flow and gain its bytes; a candidate left
    without flows on its link lets the next slot in."""
    for sl in (sa[f], sb[f]):
        spres[sl] -= 1
        sdone[sl] += size[f]
        if spres[sl] == 0 and spos[sl] == lcand[slink[sl]]:
            _enlist(slink[sl], bmeta, lpend, lmark)


@njit
def _changed(new, old, tol):  # type: ignore[no-untyped-def]
    """The reference ``fair`` policy's test for a link whose level changed."""
    if new < np.inf and old < np.inf:
        return abs(new - old) > tol * max(abs(old), 1e-300)
    return (new < np.inf) != (old < np.inf)


@njit
def _flip(p, a, b, t, side, new_side, pd, K, rho, V, tV, lstale):  # type: ignore[no-untyped-def]
    """Move pair ``p`` from link ``a`` to link ``b`` at ``t`` (its service unchanged)."""
    S = _clock(a, t, rho, V, tV) - pd[p, _C]
    c = _clock(b, t, rho, V, tV) - S
    pd[p, _C] = c
    K[p] = pd[p, _TOP] + c
    side[p] = new_side
    lstale[a] = True
    lstale[b] = True


@njit
def _live_sum(row, cnt, p0, step):  # type: ignore[no-untyped-def]
    """Sum of ``row[u]`` over pairs ``p0 + u * step`` that still have flows (``cnt > 0``)."""
    x = 0.0
    for u in range(row.size):
        if cnt[p0 + u * step] > 0:
            x += row[u]
    return x


@njit
def _recompute(  # type: ignore[no-untyped-def]
    t, record, lv_u, lv_t, lv_x, nlv, fco, start,
    s, cap_l, cap_r, fw, change_tol, W, WT, dem_l, dem_r, cnt, side, pd, K, lam, rho, V, tV,
    lstale, hs, hn, hf, newp, meta,
):
    """Water levels for the current pair weights (or the one-pass levels, see
    :func:`new_pair_state`); levels of the changed links in effect (logged in ``lv_*``
    when recording). Returns the new length of the log."""
    R = cap_r.size
    L = s + R
    new_l = np.empty(s)
    new_r = np.empty(R)
    e = np.zeros(0, np.int64)
    ef = np.zeros(0)
    zl = np.zeros(s, np.int64)
    zr = np.zeros(R, np.int64)
    if meta[_ONEPASS]:
        for i in range(s):
            new_l[i] = cap_l[i] / dem_l[i] if dem_l[i] > 0.0 else np.inf
        for j in range(R):
            new_r[j] = cap_r[j] / dem_r[j] if dem_r[j] > 0.0 else np.inf
    else:
        waterfill(cap_l, cap_r, W, WT, dem_l, dem_r, e, e, ef, ef, zl, zl, e, zr, zr, e, e, e, 1,
                  new_l, new_r, False, True)
    ch = np.zeros(L, np.bool_)
    for u in range(L):
        x = new_l[u] if u < s else new_r[u - s]
        if _changed(x, lam[u], change_tol):
            ch[u] = True
            # the clock runs at the old level up to now, at the new one from now; a link
            # of level inf (no flows, or none it limits) carries no pairs, and its clock
            # restarts when it gets a level
            if rho[u] < np.inf:
                V[u] = _clock(u, t, rho, V, tV)
            else:
                V[u] = 0.0
            tV[u] = t
            rho[u] = max(x, 0.0)
            lstale[u] = True
            if record:
                lv_u[nlv] = u
                lv_t[nlv] = t
                lv_x[nlv] = rho[u]
                nlv += 1
        lam[u] = x
    # pairs on changed links whose bottleneck side flips move to the other link (ties
    # stay); every other pair on them follows its link's new level by itself
    for i in range(s):
        if ch[i]:
            ri = rho[i]
            for j in range(R):
                p = i * R + j
                sd = side[p]
                if sd < 0:
                    continue  # no flows
                rj = rho[s + j]
                if sd == 0 and rj < ri:
                    _flip(p, i, s + j, t, side, 1, pd, K, rho, V, tV, lstale)
                elif sd == 1 and ri < rj:
                    _flip(p, s + j, i, t, side, 0, pd, K, rho, V, tV, lstale)
    for j in range(R):
        if ch[s + j]:
            rj = rho[s + j]
            for i in range(s):
                p = i * R + j
                sd = side[p]
                if sd < 0 or ch[i]:
                    continue  # no flows / done with its left link
                ri = rho[i]
                if sd == 0 and rj < ri:
                    _flip(p, i, s + j, t, side, 1, pd, K, rho, V, tV, lstale)
                elif sd == 1 and ri < rj:
                    _flip(p, s + j, i, t, side, 0, pd, K, rho, V, tV, lstale)
    # new pairs attach to their bottleneck with service 0
    for q in range(meta[_NNEW]):
        p = newp[q]
        if cnt[p] == 0 or side[p] >= 0:
            continue
        i = p // R
        j = p - i * R
        u = i if rho[i] <= rho[s + j] else s + j
        side[p] = 0 if u == i else 1
        c = _clock(u, t, rho, V, tV)
        pd[p, _C] = c
        K[p] = pd[p, _TOP] + c
        lstale[u] = True
        if rho[u] > 0.0:
            for qq in range(hs[p], hs[p] + hn[p]):
                k = fco[hf[qq]]
                if t < start[k]:
                    start[k] = t
    meta[_NNEW] = 0
    meta[_DIRTY] = 0
    return nlv


@njit
def _link_min(u, s, R, side, K):  # type: ignore[no-untyped-def]
    """Smallest ``K`` among the pairs attached to link ``u``."""
    m = np.inf
    if u < s:
        for p in range(u * R, u * R + R):
            if side[p] == 0 and K[p] < m:
                m = K[p]
    else:
        for p in range(u - s, s * R, R):
            if side[p] == 1 and K[p] < m:
                m = K[p]
    return m


@njit
def _earliest(s, R, side, K, rho, V, tV, Tl, lstale):  # type: ignore[no-untyped-def]
    """The earliest predicted completion (recomputes the stale links' predictions)."""
    t_fin = np.inf
    for u in range(s + R):
        if lstale[u]:
            lstale[u] = False
            m = _link_min(u, s, R, side, K)
            r = rho[u]
            Tl[u] = tV[u] + (m - V[u]) / r if m < np.inf and 0.0 < r < np.inf else np.inf
        if Tl[u] < t_fin:
            t_fin = Tl[u]
    return t_fin


@njit
def pair_stretch(  # type: ignore[no-untyped-def]
    t0, t_stop, tol, flows, la, lb, L, cap, size, sent, fco, cf_left, start,
    record, max_pieces, rate_out, done_f, done_t, pc_f, pc_t0, pc_t1, pc_r, lv_u, lv_t, lv_x,
    s, cap_l, cap_r, fw, change_tol, stop_at, W, WT, dem_l, dem_r, nf_l, nf_r, cnt, side, pd,
    K, lam, rho, V, tV, Tl, lstale, hs, hn, hk, hf, fkey, pstart, newp, fresh, meta,
    grp, gmeta, grun, gws, gwn, gwk, gwf, gpend, gmark,
    bth, bmeta, sa, sb, sptr, sflow, slink, cslot, spres, sdone, sheavy, spos,
    lptr, lfifo, lnf, lcand, lmark, lpend, lT, fjn, fent, fbase,
):
    """Advance per-flow weighted max-min from ``t0`` (see :mod:`coflowopt.sim.kernels`).

    ``flows`` must be the flows joined to the state and not completed.
    Returns ``(t, thr, n_done, n_pieces, n_levels, n_events, reason)``; ``rate_out``
    stays zero. When recording, a flow's piece is *tied* (:class:`coflowopt.schedule.
    TiedPieces`): ``(flow, joined, completed, weight)``, written when it completes,
    served at its weight times the smaller level of its two links, whose changes go to
    ``lv_u, lv_t, lv_x`` (link, time, level).
    """
    R = cap_r.size
    n = flows.size
    t = t0
    nd = 0
    npc = np.int64(0)  # not the literal 0: its callees compile once, for int64
    nlv = 0
    nev = 0
    # flows joined since the last call enter their pairs' heaps; a flow that joins a
    # running pair starts now
    # places freed where the last call stopped without a decision (a full record buffer)
    _fill(t, la, lb, s, R, fw, W, WT, dem_l, dem_r, nf_l, nf_r, cnt, side, pd, rho, V, tV, fkey,
          pstart, newp, fresh, meta, gmeta, grun, gws, gwn, gwk, gwf, gpend, gmark)
    gates = bmeta[0] > 0
    if gates:
        # a decision: every candidate that has sent the threshold is heavy (as the reference
        # tests at each decision); then the links listed since the last event move on
        _heavy_now(t, np.inf, la, lb, s, R, size, fw, side, pd, rho, V, tV, fkey, bth, bmeta, sptr,
                   sflow, sdone, sheavy, lptr, lfifo, lnf, lcand, lmark, lpend, lT, fent, fbase)
        _advance_gates(t, la, lb, s, R, fw, W, WT, dem_l, dem_r, nf_l, nf_r, cnt, side, pd, rho, V,
                       tV, fkey, pstart, newp, fresh, meta, bmeta, sa, sb, sptr, sflow, slink,
                       spres, sheavy, spos, lptr, lfifo, lnf, lcand, lmark, lpend, fjn)
    _enter_fresh(t, la, lb, s, R, size, fw, fco, start, pd, side, K, rho, lstale, hs, hn, hk, hf,
                 fkey, fresh, meta, fent, fbase)
    limit = gmeta[0] > 0
    if meta[_DIRTY]:
        nlv = _recompute(t, record, lv_u, lv_t, lv_x, nlv, fco, start, s, cap_l, cap_r,
                         fw, change_tol, W, WT, dem_l, dem_r, cnt, side, pd, K, lam, rho, V, tV,
                         lstale, hs, hn, hf, newp, meta)
    t_gate = np.inf
    if gates:
        t_gate = _crossings(t, tol, la, lb, s, R, size, fw, side, pd, rho, V, tV, fkey, bth, sptr,
                            sflow, sdone, lptr, lfifo, lnf, lcand, lT, fent, fbase)
    reason = 0
    while True:
        t_fin = min(_earliest(s, R, side, K, rho, V, tV, Tl, lstale), t_gate)
        t_next, thr, why, t, nev = next_event(t_fin, t_stop, tol, t, nev)
        if why != EVENT:
            reason = why
            break
        # every completion at this event, together
        t_new = t_next
        stop = False
        for u in range(s + R):
            if Tl[u] > thr:
                continue
            lstale[u] = True
            lev = rho[u]
            Vu = V[u]
            tVu = tV[u]
            if u < s:
                p0, p1, step, sd = u * R, u * R + R, 1, 0
            else:
                p0, p1, step, sd = u - s, s * R, R, 1
            for p in range(p0, p1, step):
                if side[p] != sd or tVu + (K[p] - Vu) / lev > thr:
                    continue
                c = pd[p, _C]
                base = hs[p]
                a = p // R
                j = p - a * R
                while hn[p] > 0:
                    tf = tVu + (hk[base] + c - Vu) / lev
                    if tf > thr:
                        break
                    f = hf[base]
                    _heap_pop(hk, hf, base, hn[p])
                    hn[p] -= 1
                    npc, nd = tied_completed(f, tf, record, npc, pstart, fw, pc_f, pc_t0, pc_t1, pc_r,
                                             sent, size, fkey, done_f, done_t, nd)
                    if tf > t_new:
                        t_new = tf
                    w = fw[f]
                    cnt[p] -= 1
                    W[a, j] -= w
                    WT[j, a] -= w
                    if cnt[p] > 0 and W[a, j] < CANCEL * w:
                        # the pair kept far less weight than it lost: sum its flows afresh
                        # (all of them are in its heap during a stretch)
                        x = 0.0
                        for q in range(hs[p], hs[p] + hn[p]):
                            x += fw[hf[q]]
                        W[a, j] = x
                        WT[j, a] = x
                    dem_l[a] -= w
                    dem_r[j] -= w
                    nf_l[a] -= 1
                    nf_r[j] -= 1
                    # an empty link forgets the rounding in its sums; one left with far less
                    # weight than it lost sums its pairs afresh (cancellation: sizes as wss's
                    # weights can span 1e13, and 1e7 + 3e-7 - 1e7 is off by 0.6%)
                    if nf_l[a] == 0:
                        dem_l[a] = 0.0
                    elif dem_l[a] < CANCEL * w:
                        dem_l[a] = _live_sum(W[a], cnt, a * R, 1)
                    if nf_r[j] == 0:
                        dem_r[j] = 0.0
                    elif dem_r[j] < CANCEL * w:
                        dem_r[j] = _live_sum(WT[j], cnt, j, R)
                    k = fco[f]
                    cf_left[k] -= 1
                    if cf_left[k] == 0 and stop_at[k]:
                        stop = True
                    if limit:
                        g = grp[f]
                        grun[g] -= 1
                        if gwn[g] > 0:
                            _enlist(g, gmeta, gpend, gmark)
                    if gates:
                        _gate_done(f, size, bmeta, sa, sb, slink, spres, sdone, spos, lcand,
                                   lmark, lpend)
                if cnt[p] == 0:
                    # an empty pair forgets its history (and the rounding in W)
                    W[a, j] = 0.0
                    WT[j, a] = 0.0
                    side[p] = -1
                    pd[p, _TOP] = np.inf
                    K[p] = np.inf
                else:
                    pd[p, _TOP] = hk[base]
                    K[p] = hk[base] + c
        t = t_new
        meta[_DIRTY] = 1
        full = record and (npc > max_pieces - 2 * n - 4 or nlv > lv_u.size - s - R)
        if t_stop <= thr or stop or full:
            # the engine decides (or admits) now; the levels are recomputed at the next call
            reason = 0 if t_stop <= thr else (1 if stop else 2)
            break  # freed places are taken after the engine's admissions (pair_admit)
        if gmeta[1]:
            # waiting flows take the places freed at this event, in flow order
            _fill(t, la, lb, s, R, fw, W, WT, dem_l, dem_r, nf_l, nf_r, cnt, side, pd, rho, V,
                  tV, fkey, pstart, newp, fresh, meta, gmeta, grun, gws, gwn, gwk, gwf, gpend, gmark)
        if gates:
            # candidates whose crossing is due at this event turn heavy; the listed links
            # move on and the flows they let in join
            _heavy_now(t, thr, la, lb, s, R, size, fw, side, pd, rho, V, tV, fkey, bth, bmeta,
                       sptr, sflow, sdone, sheavy, lptr, lfifo, lnf, lcand, lmark, lpend, lT, fent, fbase)
            if bmeta[1]:
                _advance_gates(t, la, lb, s, R, fw, W, WT, dem_l, dem_r, nf_l, nf_r, cnt, side, pd,
                               rho, V, tV, fkey, pstart, newp, fresh, meta, bmeta, sa, sb, sptr,
                               sflow, slink, spres, sheavy, spos, lptr, lfifo, lnf, lcand, lmark,
                               lpend, fjn)
        _enter_fresh(t, la, lb, s, R, size, fw, fco, start, pd, side, K, rho, lstale, hs, hn, hk,
                     hf, fkey, fresh, meta, fent, fbase)
        nlv = _recompute(t, record, lv_u, lv_t, lv_x, nlv, fco, start, s, cap_l, cap_r,
                         fw, change_tol, W, WT, dem_l, dem_r, cnt, side, pd, K, lam, rho, V, tV,
                         lstale, hs, hn, hf, newp, meta)
        if gates:
            t_gate = _crossings(t, tol, la, lb, s, R, size, fw, side, pd, rho, V, tV, fkey, bth,
                                sptr, sflow, sdone, lptr, lfifo, lnf, lcand, lT, fent, fbase)
    # data sent so far, for the engine
    for f in flows:
        key = fkey[f]
        if key == key:
            p = la[f] * R + lb[f] - s
            if side[p] >= 0:
                done = _clock(_att(p, s, R, side), t, rho, V, tV) - pd[p, _C]
                sent[f] = min(max(size[f] - fw[f] * (key - done), 0.0), size[f])
    return t, thr, nd, npc, nlv, nev, reason
