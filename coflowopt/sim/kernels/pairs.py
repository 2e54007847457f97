"""Per-flow weighted max-min over time, kept per pair of links (``fair``, ``wss``).

On a two-sided fabric (every flow from a left link to a right link: the big
switch) weighted max-min gives a flow of weight ``w`` on links ``(i, j)``
the rate ``w * min(lam_i, lam_j)``: every flow of a pair runs at the same
*level* times its weight. So the kernel keeps, per pair ``p``:

- the total weight ``W[p]`` of its flows (the water-filling input),
- its level and a *virtual service* counter ``S[p]``, the integral of the
  level over time (brought up to date only when the level changes),
- a min-heap of its flows' *keys* ``S at admission + remaining / w``: a flow
  completes when ``S[p]`` reaches its key.

At each event (flow completions; everything within the engine's time
tolerance together) the kernel recomputes the water levels
(:func:`.maxmin.waterfill` on ``W``), re-levels the pairs on links whose
level changed by more than ``change_tol`` relative (what the reference
``fair`` policy does; ``wss`` uses 0), and finds the next completion as the
smallest predicted completion over pairs (kept in blocks of 64 pairs with
exact minima). An event costs ``O(links x rounds + pairs re-levelled)``,
not ``O(flows)``; per-flow pieces are written only when recording.

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

_DIRTY, _NTOUCH, _NFRESH = 0, 1, 2
"""Slots of the ``meta`` array: levels stale; touched pairs; fresh flows."""


def new_pair_state(
    la: npt.NDArray[np.int64], lb: npt.NDArray[np.int64], split: int, cap: npt.NDArray[np.float64],
    weight: npt.NDArray[np.float64], change_tol: float, stop_at: npt.NDArray[np.bool_],
) -> tuple[object, ...]:
    """The kernel state for a fabric split at ``split`` (the ``*args`` of both functions).

    ``weight``: each flow's weight (1 for per-flow fairness); ``stop_at``:
    the coflows whose completion must return control to the engine (those
    other coflows depend on).
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
        np.zeros(s),  # dem_l: weight per left link
        np.zeros(R),  # dem_r
        np.zeros(s, np.int64),  # nf_l: flows per left link
        np.zeros(R, np.int64),  # nf_r
        np.zeros(P, np.int64),  # cnt: flows per pair
        np.zeros(P),  # level
        np.zeros(P),  # S
        np.zeros(P),  # tS
        np.full(nblk * _BLK, np.inf),  # T: predicted completion per pair
        np.full(nblk, np.inf),  # bmin
        hs,  # heap segment of each pair
        np.zeros(P, np.int64),  # hn: heap sizes
        np.zeros(max(F, 1)),  # hk: heap keys
        np.zeros(max(F, 1), np.int64),  # hf: heap flows
        np.full(max(F, 1), np.nan),  # fkey: key per flow (nan: not held)
        np.zeros(max(F, 1)),  # pstart: start of each flow's current piece
        np.full(s, np.inf),  # lam_l: levels last computed
        np.full(R, np.inf),  # lam_r
        np.zeros(P, np.int64),  # touched pairs
        np.zeros(P, np.bool_),  # is_t
        np.zeros(max(F, 1), np.int64),  # fresh flows
        np.zeros(4, np.int64),  # meta
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
def _set_T(T, bmin, p, val):  # type: ignore[no-untyped-def]
    old = T[p]
    T[p] = val
    b = p // _BLK
    if val < bmin[b]:
        bmin[b] = val
    elif old == bmin[b] and val > old:
        m = np.inf
        for q in range(b * _BLK, (b + 1) * _BLK):
            if T[q] < m:
                m = T[q]
        bmin[b] = m


@njit
def _touch(p, touched, is_t, meta):  # type: ignore[no-untyped-def]
    if not is_t[p]:
        is_t[p] = True
        touched[meta[_NTOUCH]] = p
        meta[_NTOUCH] += 1


@njit
def pair_join(  # type: ignore[no-untyped-def]
    flows, t, la, lb, sent,
    s, cap_l, cap_r, fw, change_tol, stop_at, W, WT, dem_l, dem_r, nf_l, nf_r, cnt, level, S,
    tS, T, bmin, hs, hn, hk, hf, fkey, pstart, lam_l, lam_r, touched, is_t, fresh, meta,
):
    """Admit ``flows`` at time ``t`` (bytes ``sent`` so far); rates follow at the next call.

    Sizes are not needed here (non-clairvoyant policies call it): the next
    kernel call completes each flow's key with its size.
    """
    R = cap_r.size
    for f in flows:
        a = la[f]
        b = lb[f] - s
        p = a * R + b
        if level[p] > 0.0:
            S[p] += level[p] * (t - tS[p])
        tS[p] = t
        fkey[f] = S[p] - sent[f] / fw[f]
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
def _relevel(  # type: ignore[no-untyped-def]
    p, t, R, record, pc_f, pc_t0, pc_t1, pc_r, npc, fw, fco, start, level, S, tS, hs, hn, hf,
    pstart, lam_l, lam_r,
):
    """Set pair ``p``'s level at ``t`` from its links' levels (pieces at the old one)."""
    new = min(lam_l[p // R], lam_r[p % R])
    if not (new < np.inf and new > 0.0):
        new = 0.0
    old = level[p]
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
        S[p] += old * (t - tS[p])
    tS[p] = t
    level[p] = new
    return npc


@njit
def _predict(p, cnt, level, S, tS, T, bmin, hs, hk):  # type: ignore[no-untyped-def]
    if cnt[p] > 0 and level[p] > 0.0:
        _set_T(T, bmin, p, tS[p] + (hk[hs[p]] - S[p]) / level[p])
    else:
        _set_T(T, bmin, p, np.inf)


@njit
def _changed(new, old, tol):  # type: ignore[no-untyped-def]
    if new < np.inf and old < np.inf:
        return abs(new - old) > tol * max(abs(old), 1e-300)
    return (new < np.inf) != (old < np.inf)


@njit
def _recompute(  # type: ignore[no-untyped-def]
    t, record, pc_f, pc_t0, pc_t1, pc_r, npc, la, lb, fco, start,
    s, cap_l, cap_r, fw, change_tol, W, WT, dem_l, dem_r, cnt, level, S, tS, T, bmin, hs, hn,
    hk, hf, pstart, lam_l, lam_r, touched, is_t, fresh, meta,
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
    for i in range(s):
        if ch_l[i]:
            for j in range(R):
                p = i * R + j
                if cnt[p] > 0:
                    npc = _relevel(p, t, R, record, pc_f, pc_t0, pc_t1, pc_r, npc, fw, fco,
                                   start, level, S, tS, hs, hn, hf, pstart, lam_l, lam_r)
                    _predict(p, cnt, level, S, tS, T, bmin, hs, hk)
                    is_t[p] = False
    for j in range(R):
        if ch_r[j]:
            for i in range(s):
                p = i * R + j
                if cnt[p] > 0 and not ch_l[i]:
                    npc = _relevel(p, t, R, record, pc_f, pc_t0, pc_t1, pc_r, npc, fw, fco,
                                   start, level, S, tS, hs, hn, hf, pstart, lam_l, lam_r)
                    _predict(p, cnt, level, S, tS, T, bmin, hs, hk)
                    is_t[p] = False
    # pairs whose flows changed on links whose level did not: a new pair takes its
    # level; the others keep theirs (as the reference keeps the rates of such flows)
    for q in range(meta[_NTOUCH]):
        p = touched[q]
        if is_t[p]:
            if level[p] == 0.0 and cnt[p] > 0:
                npc = _relevel(p, t, R, record, pc_f, pc_t0, pc_t1, pc_r, npc, fw, fco, start,
                               level, S, tS, hs, hn, hf, pstart, lam_l, lam_r)
            _predict(p, cnt, level, S, tS, T, bmin, hs, hk)
            is_t[p] = False
    meta[_NTOUCH] = 0
    for q in range(meta[_NFRESH]):
        f = fresh[q]
        p = la[f] * R + lb[f] - s
        k = fco[f]
        if level[p] > 0.0 and t < start[k]:
            start[k] = t
    meta[_NFRESH] = 0
    meta[_DIRTY] = 0
    return npc


@njit
def pair_stretch(  # type: ignore[no-untyped-def]
    t0, t_stop, tol, act, la, lb, L, cap, size, sent, fco, cf_left, start,
    record, max_pieces, rate_out, done_f, done_t, pc_f, pc_t0, pc_t1, pc_r,
    s, cap_l, cap_r, fw, change_tol, stop_at, W, WT, dem_l, dem_r, nf_l, nf_r, cnt, level, S,
    tS, T, bmin, hs, hn, hk, hf, fkey, pstart, lam_l, lam_r, touched, is_t, fresh, meta,
):
    """Advance per-flow weighted max-min from ``t0`` (see :mod:`coflowopt.sim.kernels`).

    ``act`` must be the flows joined to the state and not completed. Returns
    ``(t, n_done, n_pieces, n_events, reason)``; ``rate_out`` stays zero.
    """
    R = cap_r.size
    n = act.size
    t = t0
    nd = 0
    npc = 0
    nev = 0
    # flows joined since the last call enter their pairs' heaps
    for q in range(meta[_NFRESH]):
        f = fresh[q]
        p = la[f] * R + lb[f] - s
        key = fkey[f] + size[f] / fw[f]
        fkey[f] = key
        _heap_push(hk, hf, hs[p], hn[p], key, f)
        hn[p] += 1
    if meta[_DIRTY]:
        npc = _recompute(t, record, pc_f, pc_t0, pc_t1, pc_r, npc, la, lb, fco, start, s, cap_l,
                         cap_r, fw, change_tol, W, WT, dem_l, dem_r, cnt, level, S, tS, T, bmin,
                         hs, hn, hk, hf, pstart, lam_l, lam_r, touched, is_t, fresh, meta)
    nblk = bmin.size
    reason = 0
    while True:
        t_fin = np.inf
        for b in range(nblk):
            if bmin[b] < t_fin:
                t_fin = bmin[b]
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
        for b in range(nblk):
            if bmin[b] > thr:
                continue
            for p in range(b * _BLK, (b + 1) * _BLK):
                if T[p] > thr:
                    continue
                lev = level[p]
                base = hs[p]
                a = p // R
                j = p % R
                while hn[p] > 0:
                    tf = tS[p] + (hk[base] - S[p]) / lev
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
                    if nf_l[a] == 0:
                        dem_l[a] = 0.0
                    if nf_r[j] == 0:
                        dem_r[j] = 0.0
                    k = fco[f]
                    cf_left[k] -= 1
                    if cf_left[k] == 0 and stop_at[k]:
                        stop = True
                if cnt[p] == 0:
                    # an empty pair forgets its history (and rounding in W)
                    W[a, j] = 0.0
                    WT[j, a] = 0.0
                    S[p] = 0.0
                    level[p] = 0.0
                _set_T(T, bmin, p, np.inf)
                _touch(p, touched, is_t, meta)
        t = t_new
        meta[_DIRTY] = 1
        if t_stop <= thr or stop or (record and npc > max_pieces - 2 * n - 4):
            # the engine decides (or admits) now; the levels are recomputed at the next call
            reason = 0 if t_stop <= thr else (1 if stop else 2)
            break
        npc = _recompute(t, record, pc_f, pc_t0, pc_t1, pc_r, npc, la, lb, fco, start, s, cap_l,
                         cap_r, fw, change_tol, W, WT, dem_l, dem_r, cnt, level, S, tS, T, bmin,
                         hs, hn, hk, hf, pstart, lam_l, lam_r, touched, is_t, fresh, meta)
    # data sent so far, for the engine
    for f in act:
        key = fkey[f]
        if key == key:
            p = la[f] * R + lb[f] - s
            done = S[p] + level[p] * (t - tS[p])
            sent[f] = min(max(size[f] - fw[f] * (key - done), 0.0), size[f])
    return t, nd, npc, nev, reason
