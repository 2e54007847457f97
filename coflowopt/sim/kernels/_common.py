"""Steps every stretch kernel takes the same way (compiled helpers)."""

from __future__ import annotations

import heapq

import numpy as np
import numpy.typing as npt

from ..._jit import njit

__all__ = ["EVENT", "completed", "earliest", "gate_slots", "next_event", "served"]

EVENT = -1
"""``next_event``'s answer when the kernel must process completions now."""


def gate_slots(
    fco: npt.NDArray[np.int64], entry_flow: npt.NDArray[np.int64],
    entry_link: npt.NDArray[np.int64], L: int, K: int,
) -> tuple[npt.NDArray[np.int64], ...]:
    """The slots of FIFO gates per link (``baraat``): one per (coflow, link) that a flow
    of the coflow crosses, numbered coflow by coflow, then by link.

    ``fco``: each flow's coflow; ``entry_flow``, ``entry_link``: the incidence entries
    (a flow and a link it crosses); ``L`` links, ``K`` coflows. Returns ``(inv, sptr,
    order, slink, cslot, lptr)``: each entry's slot, the slots' entries as a CSR over
    ``order`` (the entries sorted by slot, stably), each slot's link, each coflow's
    first slot (``K + 1`` values) and each link's first place in a per-link array of its
    slots (``L + 1`` values).
    """
    keys = np.asarray(fco, np.int64)[entry_flow] * L + np.asarray(entry_link, np.int64)
    uniq, inv = np.unique(keys, return_inverse=True)
    inv = inv.reshape(-1).astype(np.int64)
    S = uniq.size
    sptr = np.zeros(S + 1, np.int64)
    np.cumsum(np.bincount(inv, minlength=S), out=sptr[1:])
    order = np.argsort(inv, kind="stable").astype(np.int64)
    slink = (uniq % L).astype(np.int64)
    cslot = np.searchsorted(uniq, np.arange(K + 1, dtype=np.int64) * L).astype(np.int64)
    lptr = np.zeros(L + 1, np.int64)
    np.cumsum(np.bincount(slink, minlength=L), out=lptr[1:])
    return inv, sptr, order, slink, cslot, lptr


@njit
def next_event(t_fin, t_stop, tol, t, nev):  # type: ignore[no-untyped-def]
    """Where a stretch at time ``t`` after ``nev`` events goes from here:
    ``(t_next, thr, reason, t, nev)``.

    ``t_fin`` is the earliest predicted flow completion. Everything up to
    ``thr`` (the engine's relative tolerance past ``t_next``) completes
    together at this event when ``reason`` is :data:`EVENT` (counted in
    ``nev``); otherwise the kernel stops: ``0`` at ``t_stop`` (before any
    further completion; the engine's event there, an admission or a wake-up,
    is counted and ``t`` moves to it), ``3`` when nothing will ever happen (no
    completion and no stop time).
    """
    t_next = min(t_fin, t_stop)
    if t_next == np.inf:
        return t_next, t_next, 3, t, nev
    thr = t_next + tol * max(1.0, abs(t_next))
    if t_fin > thr:
        return t_next, thr, 0, t_next, nev + 1
    return t_next, thr, EVENT, t, nev + 1


@njit
def served(f, t0, t1, r, fco, start, record, npc, pc_f, pc_t0, pc_t1, pc_r):  # type: ignore[no-untyped-def]
    """Flow ``f`` ran at rate ``r`` on ``[t0, t1)``: its coflow has started, and the piece is recorded.

    Nothing happens for an empty interval. Returns the new piece count.
    """
    if t1 > t0:
        if t0 < start[fco[f]]:
            start[fco[f]] = t0
        if record:
            pc_f[npc] = f
            pc_t0[npc] = t0
            pc_t1[npc] = t1
            pc_r[npc] = r
            npc += 1
    return npc


@njit
def earliest(heap, ok, fin):  # type: ignore[no-untyped-def]
    """The earliest predicted completion in ``heap`` (``(time, position)`` entries), after
    dropping stale entries: a position no longer ``ok`` or whose ``fin`` has moved."""
    while len(heap) > 0 and (not ok[heap[0][1]] or heap[0][0] != fin[heap[0][1]]):
        heapq.heappop(heap)
    return heap[0][0] if len(heap) > 0 else np.inf


@njit
def completed(f, t0, tf, r, fco, start, record, npc, pc_f, pc_t0, pc_t1, pc_r, sent, size,  # type: ignore[no-untyped-def]
              cf_left, done_f, done_t, nd):
    """Flow ``f``, run at ``r`` since ``t0``, completes at ``tf``: its last piece, its data,
    the completion list and its coflow's count. Returns ``(npc, nd, coflow_done)``."""
    npc = served(f, t0, tf, r, fco, start, record, npc, pc_f, pc_t0, pc_t1, pc_r)
    sent[f] = size[f]
    done_f[nd] = f
    done_t[nd] = tf
    k = fco[f]
    cf_left[k] -= 1
    return npc, nd + 1, cf_left[k] == 0


@njit
def tied_completed(f, tf, record, npc, pstart, fw, pc_f, pc_t0, pc_t1, pc_r, sent, size, fkey,  # type: ignore[no-untyped-def]
                   done_f, done_t, nd):
    """Flow ``f`` of a tied series (a level times its weight ``fw[f]``) completes at ``tf``:
    its one piece since ``pstart[f]``, its data, its key cleared (``nan``) and the
    completion list. Returns ``(npc, nd)``; the caller updates its series and coflow."""
    if record and tf > pstart[f]:
        pc_f[npc] = f
        pc_t0[npc] = pstart[f]
        pc_t1[npc] = tf
        pc_r[npc] = fw[f]
        npc += 1
    sent[f] = size[f]
    fkey[f] = np.nan
    done_f[nd] = f
    done_t[nd] = tf
    return npc, nd + 1
