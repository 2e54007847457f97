"""Per-flow weighted max-min over time, kept per pair of links (``fair``, ``wss``).

On a two-sided fabric (every flow from a left link to a right link: the big
switch) weighted max-min gives a flow of weight ``w`` on links ``(i, j)``
the rate ``w * min(lam_i, lam_j)``: every flow of a pair runs at the same
*level* times its weight. So the kernel keeps, per pair ``p``:

- the total weight ``W[p]`` of its flows (the water-filling input),
- its level and a *virtual service* counter ``S[p]``, the integral of the
  level over time (brought up to date only when the level changes),
- a min-heap of its flows' *keys* ``S at admission + size / w`` (minus
  what a flow had received before it joined): a flow completes when
  ``S[p]`` reaches its key,
- its predicted next completion ``T[p]``.

At each event (flow completions; everything within the engine's time
tolerance together) the kernel recomputes the water levels
(:func:`.maxmin.waterfill` on ``W``) and re-levels the pairs on links
whose level changed by more than ``change_tol`` relative. This mirrors the
reference ``fair`` policy, which re-rates only the flows on such links (and
new flows), so that flows elsewhere keep their rates; ``wss`` recomputes
every rate, which is ``change_tol = 0``. A pair that only lost flows keeps
its level; a pair that gets its first flows takes its links' level. An
event costs ``O(s R)`` for the water-filling plus ``O(pairs with flows)``;
idle flows cost nothing, and per-flow pieces are written only when
recording.

The state persists across calls: the policy admits new flows with
:func:`pair_join` and hands the same state to every stretch. The kernel
keeps the rates itself and leaves ``rate_out`` at zero, so the engine holds
no rate for these flows between calls; ``sent`` is exact at return.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ..._jit import njit
from .maxmin import waterfill

__all__ = ["new_pair_state", "pair_join", "pair_stretch"]

_BLK = 64
"""Pairs per block of predicted completion times."""

_DIRTY, _NFRESH, _NTOUCH = 0, 1, 2
"""Slots of the ``meta`` array: levels stale; fresh flows; touched pairs."""

_LEVEL, _S, _TS, _TOP = 0, 1, 2, 3
"""Columns of the per-pair record ``pd``: level, virtual service ``S`` at time
``tS``, smallest key of the pair's heap (``inf`` when empty), kept together so
that re-levelling a pair touches one cache line."""


def new_pair_state(
    la: npt.NDArray[np.int64], lb: npt.NDArray[np.int64], split: int, cap: npt.NDArray[np.float64],
    weight: npt.NDArray[np.float64], change_tol: float, stop_at: npt.NDArray[np.bool_],
) -> tuple[object, ...]:
    """The kernel state for a fabric split at ``split`` (the ``*args`` of both functions).

    ``weight``: each flow's weight (1 for per-flow fairness); ``stop_at``:
    the coflows whose completion must return control to the engine.
    """
    s = int(split)
    L = cap.size
    R = L - s
    P = s * R
    F = la.size
    pair = la.astype(np.int64) * R + (lb.astype(np.int64) - s)
    hs = np.zeros(P + 1, np.int64)
    np.cumsum(np.bincount(pair, minlength=P), out=hs[1:])
    nblk = (P + _BLK - 1) // _BLK
    return (
        np.int64(s),
        np.ascontiguousarray(cap[:s], dtype=np.float64),
        np.ascontiguousarray(cap[s:], dtype=np.float64),
        np.ascontiguousarray(weight, dtype=np.float64),  # fw: per flow
        float(change_tol),
        np.ascontiguousarray(stop_at, dtype=np.bool_),
        np.zeros((s, R)),  # W: weight per pair
        np.zeros((R, s)),  # WT
        np.zeros((R, s)),  # levT: the pairs' levels, by right link (read contiguously)
        np.zeros(s),  # dem_l: weight per left link
        np.zeros(R),  # dem_r
        np.zeros(s, np.int64),  # nf_l: flows per left link
        np.zeros(R, np.int64),  # nf_r
        np.zeros(P, np.int64),  # cnt: flows per pair
        _new_pd(P),  # pd: level, virtual service S, time tS of S, smallest key
        np.full(nblk * _BLK, np.inf),  # T: predicted next completion per pair
        np.full(nblk, np.inf),  # bmin: minimum of T per block (a lower bound while stale)
        np.zeros(nblk, np.bool_),  # stale: blocks whose minimum must be recomputed
        hs,  # heap segment of each pair
        np.zeros(P, np.int64),  # hn: heap sizes
        np.zeros(max(F, 1)),  # hk: heap keys
        np.zeros(max(F, 1), np.int64),  # hf: heap flows
        np.full(max(F, 1), np.nan),  # fkey: key per flow (nan: not held)
        np.zeros(max(F, 1)),  # pstart: start of each flow's current piece
        np.full(s, np.inf),  # lam_l: levels last computed
        np.full(R, np.inf),  # lam_r
        np.zeros(P, np.int64),  # touched: pairs whose flows changed since the last levels
        np.zeros(P, np.bool_),  # is_t
        np.zeros(max(F, 1), np.int64),  # fresh: flows joined since the last call
        np.zeros(3, np.int64),  # meta
    )


def _new_pd(P: int) -> npt.NDArray[np.float64]:
    pd = np.zeros((P, 4))
    pd[:, _TOP] = np.inf
    return pd


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
def _set_T(T, bmin, stale, p, val):  # type: ignore[no-untyped-def]
    """Set ``T[p]``; a block whose minimum may have risen is recomputed when next read."""
    old = T[p]
    T[p] = val
    b = p // _BLK
    if val < bmin[b]:
        bmin[b] = val
    elif val > old and old <= bmin[b]:
        stale[b] = True


@njit
def _touch(p, touched, is_t, meta):  # type: ignore[no-untyped-def]
    if not is_t[p]:
        is_t[p] = True
        touched[meta[_NTOUCH]] = p
        meta[_NTOUCH] += 1


@njit
def pair_join(  # type: ignore[no-untyped-def]
    flows, t, la, lb, sent,
    s, cap_l, cap_r, fw, change_tol, stop_at, W, WT, levT, dem_l, dem_r, nf_l, nf_r, cnt, pd, T, bmin,
    stale, hs, hn, hk, hf, fkey, pstart, lam_l, lam_r, touched, is_t, fresh, meta,
):
    """Admit ``flows`` at time ``t`` (``sent[q]``: bytes flow ``flows[q]`` received so far).

    Rates follow at the next call. Sizes are not needed here (non-clairvoyant
    policies call it): the next kernel call completes each flow's key.
    """
    R = cap_r.size
    for q in range(flows.size):
        f = flows[q]
        a = la[f]
        b = lb[f] - s
        p = a * R + b
        lev = pd[p, _LEVEL]
        if lev > 0.0:
            pd[p, _S] += lev * (t - pd[p, _TS])
        pd[p, _TS] = t
        fkey[f] = pd[p, _S] - sent[q] / fw[f]
        cnt[p] += 1
        W[a, b] += fw[f]
        WT[b, a] += fw[f]
        dem_l[a] += fw[f]
        dem_r[b] += fw[f]
        nf_l[a] += 1
        nf_r[b] += 1
        pstart[f] = t
        _touch(p, touched, is_t, meta)
        fresh[meta[_NFRESH]] = f
        meta[_NFRESH] += 1
    meta[_DIRTY] = 1


@njit
def _level(lam_i, lam_j):  # type: ignore[no-untyped-def]
    """A pair's level from its links' levels (0 for none)."""
    new = min(lam_i, lam_j)
    return new if new < np.inf and new > 0.0 else 0.0


@njit
def _relevel(  # type: ignore[no-untyped-def]
    p, i, j, new, levT, t, record, pc_f, pc_t0, pc_t1, pc_r, npc, fw, fco, start, pd, hs, hn, hf, pstart,
):
    """Set pair ``p``'s level to ``new`` at ``t`` (pieces at the old one). Returns ``npc``."""
    old = pd[p, _LEVEL]
    if new == old:
        return npc
    base = hs[p]
    if record:
        for q in range(base, base + hn[p]):
            f = hf[q]
            if old > 0.0 and t > pstart[f]:
                pc_f[npc] = f
                pc_t0[npc] = pstart[f]
                pc_t1[npc] = t
                pc_r[npc] = fw[f] * old
                npc += 1
            pstart[f] = t
    if old == 0.0:
        for q in range(base, base + hn[p]):
            k = fco[hf[q]]
            if t < start[k]:
                start[k] = t
    else:
        pd[p, _S] += old * (t - pd[p, _TS])
    pd[p, _TS] = t
    pd[p, _LEVEL] = new
    levT[j, i] = new
    return npc


@njit
def _predict(p, pd, T, bmin, stale):  # type: ignore[no-untyped-def]
    """Predicted completion of pair ``p``'s next flow (its heap's smallest key)."""
    lev = pd[p, _LEVEL]
    if lev > 0.0:
        _set_T(T, bmin, stale, p, pd[p, _TS] + (pd[p, _TOP] - pd[p, _S]) / lev)
    else:
        _set_T(T, bmin, stale, p, np.inf)


@njit
def _changed(new, old, tol):  # type: ignore[no-untyped-def]
    """The reference ``fair`` policy's test for a link whose level changed."""
    if new < np.inf and old < np.inf:
        return abs(new - old) > tol * max(abs(old), 1e-300)
    return (new < np.inf) != (old < np.inf)


@njit
def _recompute(  # type: ignore[no-untyped-def]
    t, record, pc_f, pc_t0, pc_t1, pc_r, npc, fco, start,
    s, cap_l, cap_r, fw, change_tol, W, WT, levT, dem_l, dem_r, cnt, pd, T, bmin, stale, hs, hn,
    hk, hf, pstart, lam_l, lam_r, touched, is_t, meta,
):
    """Water levels for the current pair weights; re-level the pairs whose level changes."""
    R = cap_r.size
    new_l = np.empty(s)
    new_r = np.empty(R)
    e = np.zeros(0, np.int64)
    ef = np.zeros(0)
    zl = np.zeros(s, np.int64)
    zr = np.zeros(R, np.int64)
    waterfill(cap_l, cap_r, W, WT, dem_l, dem_r, e, e, ef, ef, zl, zl, e, zr, zr, e, e, e, 1,
              new_l, new_r)
    ch_l = np.zeros(s, np.bool_)
    for i in range(s):
        ch_l[i] = _changed(new_l[i], lam_l[i], change_tol)
    ch_r = np.zeros(R, np.bool_)
    for j in range(R):
        ch_r[j] = _changed(new_r[j], lam_r[j], change_tol)
    lam_l[:] = new_l
    lam_r[:] = new_r
    # pairs on links whose level changed take the new level (as the reference re-rates
    # every flow on such links)
    for i in range(s):
        if ch_l[i]:
            li = lam_l[i]
            for j in range(R):
                p = i * R + j
                if cnt[p] > 0 and _level(li, lam_r[j]) != pd[p, _LEVEL]:
                    npc = _relevel(p, i, j, _level(li, lam_r[j]), levT, t, record, pc_f, pc_t0, pc_t1, pc_r,
                                   npc, fw, fco, start, pd, hs, hn, hf, pstart)
                    _predict(p, pd, T, bmin, stale)
                    is_t[p] = False
    for j in range(R):
        if ch_r[j]:
            lj = lam_r[j]
            Wj = WT[j]
            for i in range(s):
                if Wj[i] > 0.0 and not ch_l[i]:
                    p = i * R + j
                    new = _level(lam_l[i], lj)
                    if new != levT[j, i]:
                        npc = _relevel(p, i, j, new, levT, t, record, pc_f, pc_t0, pc_t1, pc_r, npc, fw, fco,
                                       start, pd, hs, hn, hf, pstart)
                        _predict(p, pd, T, bmin, stale)
                        is_t[p] = False
    # pairs whose flows changed on links whose level did not: a pair that gets its first
    # flows takes its links' level; the others keep theirs (as the reference keeps the
    # rates of such flows)
    for q in range(meta[_NTOUCH]):
        p = touched[q]
        if is_t[p]:
            is_t[p] = False
            if cnt[p] > 0:
                if pd[p, _LEVEL] == 0.0:
                    i = p // R
                    j = p - i * R
                    npc = _relevel(p, i, j, _level(lam_l[i], lam_r[j]), levT, t, record, pc_f, pc_t0, pc_t1,
                                   pc_r, npc, fw, fco, start, pd, hs, hn, hf, pstart)
                _predict(p, pd, T, bmin, stale)
    meta[_NTOUCH] = 0
    meta[_DIRTY] = 0
    return npc


@njit
def _earliest(T, bmin, stale):  # type: ignore[no-untyped-def]
    """The earliest predicted completion (refreshes the stale block minima)."""
    t_fin = np.inf
    for b in range(bmin.size):
        if stale[b]:
            m = np.inf
            for p in range(b * _BLK, (b + 1) * _BLK):
                if T[p] < m:
                    m = T[p]
            bmin[b] = m
            stale[b] = False
        if bmin[b] < t_fin:
            t_fin = bmin[b]
    return t_fin


@njit
def pair_stretch(  # type: ignore[no-untyped-def]
    t0, t_stop, tol, flows, la, lb, L, cap, size, sent, fco, cf_left, start,
    record, max_pieces, rate_out, done_f, done_t, pc_f, pc_t0, pc_t1, pc_r,
    s, cap_l, cap_r, fw, change_tol, stop_at, W, WT, levT, dem_l, dem_r, nf_l, nf_r, cnt, pd, T, bmin,
    stale, hs, hn, hk, hf, fkey, pstart, lam_l, lam_r, touched, is_t, fresh, meta,
):
    """Advance per-flow weighted max-min from ``t0`` (see :mod:`coflowopt.sim.kernels`).

    ``flows`` must be the flows joined to the state and not completed.
    Returns ``(t, n_done, n_pieces, n_events, reason)``; ``rate_out`` stays
    zero.
    """
    R = cap_r.size
    n = flows.size
    t = t0
    nd = 0
    npc = 0
    nev = 0
    # flows joined since the last call enter their pairs' heaps; a flow that joins a
    # running pair starts now
    for q in range(meta[_NFRESH]):
        f = fresh[q]
        p = la[f] * R + lb[f] - s
        key = fkey[f] + size[f] / fw[f]
        fkey[f] = key
        _heap_push(hk, hf, hs[p], hn[p], key, f)
        hn[p] += 1
        if key < pd[p, _TOP]:
            pd[p, _TOP] = key
        if pd[p, _LEVEL] > 0.0:
            k = fco[f]
            if t < start[k]:
                start[k] = t
    meta[_NFRESH] = 0
    if meta[_DIRTY]:
        npc = _recompute(t, record, pc_f, pc_t0, pc_t1, pc_r, npc, fco, start, s, cap_l, cap_r,
                         fw, change_tol, W, WT, levT, dem_l, dem_r, cnt, pd, T, bmin, stale, hs, hn,
                         hk, hf, pstart, lam_l, lam_r, touched, is_t, meta)
    reason = 0
    while True:
        t_fin = _earliest(T, bmin, stale)
        t_next = min(t_fin, t_stop)
        if t_next == np.inf:
            reason = 3
            break
        thr = t_next + tol * max(1.0, abs(t_next))
        if t_fin > thr:
            t = t_next
            reason = 0
            break
        # every completion at this event, together
        nev += 1
        t_new = t_next
        stop = False
        for b in range(bmin.size):
            if bmin[b] > thr:
                continue
            for p in range(b * _BLK, (b + 1) * _BLK):
                if T[p] > thr:
                    continue
                lev = pd[p, _LEVEL]
                S = pd[p, _S]
                tS = pd[p, _TS]
                base = hs[p]
                a = p // R
                j = p - a * R
                while hn[p] > 0:
                    tf = tS + (hk[base] - S) / lev
                    if tf > thr:
                        break
                    f = hf[base]
                    _heap_pop(hk, hf, base, hn[p])
                    hn[p] -= 1
                    if record and tf > pstart[f]:
                        pc_f[npc] = f
                        pc_t0[npc] = pstart[f]
                        pc_t1[npc] = tf
                        pc_r[npc] = fw[f] * lev
                        npc += 1
                    sent[f] = size[f]
                    fkey[f] = np.nan
                    done_f[nd] = f
                    done_t[nd] = tf
                    nd += 1
                    if tf > t_new:
                        t_new = tf
                    w = fw[f]
                    cnt[p] -= 1
                    W[a, j] -= w
                    WT[j, a] -= w
                    dem_l[a] -= w
                    dem_r[j] -= w
                    nf_l[a] -= 1
                    nf_r[j] -= 1
                    # an empty link forgets the rounding in its sums
                    if nf_l[a] == 0:
                        dem_l[a] = 0.0
                    if nf_r[j] == 0:
                        dem_r[j] = 0.0
                    k = fco[f]
                    cf_left[k] -= 1
                    if cf_left[k] == 0 and stop_at[k]:
                        stop = True
                if cnt[p] == 0:
                    # an empty pair forgets its history (and the rounding in W)
                    W[a, j] = 0.0
                    WT[j, a] = 0.0
                    pd[p, _S] = 0.0
                    pd[p, _LEVEL] = 0.0
                    levT[j, a] = 0.0
                    pd[p, _TOP] = np.inf
                else:
                    pd[p, _TOP] = hk[base]
                _set_T(T, bmin, stale, p, np.inf)  # predicted again with the new levels
                _touch(p, touched, is_t, meta)
        t = t_new
        meta[_DIRTY] = 1
        if t_stop <= thr or stop or (record and npc > max_pieces - 2 * n - 4):
            # the engine decides (or admits) now; the levels are recomputed at the next call
            reason = 0 if t_stop <= thr else (1 if stop else 2)
            break
        npc = _recompute(t, record, pc_f, pc_t0, pc_t1, pc_r, npc, fco, start, s, cap_l, cap_r,
                         fw, change_tol, W, WT, levT, dem_l, dem_r, cnt, pd, T, bmin, stale, hs, hn,
                         hk, hf, pstart, lam_l, lam_r, touched, is_t, meta)
    # data sent so far, for the engine
    for f in flows:
        key = fkey[f]
        if key == key:
            p = la[f] * R + lb[f] - s
            done = pd[p, _S] + pd[p, _LEVEL] * (t - pd[p, _TS])
            sent[f] = min(max(size[f] - fw[f] * (key - done), 0.0), size[f])
    return t, nd, npc, nev, reason
