"""Per-flow weighted max-min over time on any route incidence (``fair`` on multi-hop fabrics).

Flows that cross the same links with the same coefficients form a *route class*
(:class:`coflowopt.sim.policies._common.RouteClasses`); weighted max-min gives every
flow of a class its weight times the class's *level*, the level at which the first
of its links saturates in progressive filling. So the kernel keeps, as
:mod:`.pairs` does per pair of links on the big switch,

- per class ``c``: the level ``rho[c]`` in effect and a *clock* ``V[c]``, the
  integral of that level over time (brought up to date when the level changes);
  a min-heap of its flows' keys ``service at admission + size / w`` (minus what a
  flow had received before); the class's next completion is when its clock
  reaches its smallest key, and an indexed heap over classes gives the earliest;
- the progressive filling of the last event as a record: its *steps* (the link
  that saturated and the level), the order in which classes froze and, for each
  link each class froze on, the link's state before (what frozen classes use of
  it, its open weight and open class count), chained per link.

**Incremental max-min.** Progressive filling is a sequence of steps at
non-decreasing levels. When some classes' weights change (flows arrive or
complete), the run with the new weights makes the same steps as the recorded one
up to the first step ``J`` at which it would differ, and from there the kernel
rolls the record back (restoring the links' states) and continues. ``J`` is at
most the step at which each changed class froze (a lighter class saturates its
links later, a heavier one sooner; either way its freezing level moves), and for a
link whose open weight grows by ``d``, at most the first step ``j`` whose level
reaches the link's saturation level with ``d`` added to its state at step ``j``
(walking the link's chain of states). Before ``J`` no link's saturation level
falls below the step's level and the changed classes are all open, so every
freeze before ``J`` is as in a run from scratch. The recorded states before ``J``
of the links the changed classes cross get the weight change added, so that the
record stays the one of the current weights. A completion in a class at a high
level redoes only the steps above it.

The arithmetic is :func:`coflowopt.kernels.maxmin.progressive_filling`'s (the
same freeze order and updates); the open weights of the links a change touches are
summed afresh at the restart, the earlier recorded ones are changed by addition,
so levels agree with a run from scratch to rounding. A class's flows are re-rated
only when its level moves by more than ``change_tol`` relative; a level recomputed
from a restart moves by rounding at most.

**Recording.** As :mod:`.pairs` does on the big switch, the kernel logs the classes'
level changes ``(class, time, level)`` and, as each flow completes, one *tied piece*
(:class:`coflowopt.schedule.TiedPieces`, the class as the flow's level series: the
flow at its weight times its class's level, from when it joined to when it
completed), not every flow's piece at every change of its class's level (the policy
hands the engine each flow's class as its series).

The state persists across calls: the policy admits new flows with
:func:`route_join` and hands the same state to every stretch. The kernel keeps the
rates itself and leaves ``rate_out`` at zero; ``sent`` is exact at return.
"""

from __future__ import annotations

import heapq

import numpy as np
import numpy.typing as npt

from ..._jit import njit
from ...kernels.maxmin import REFRESH
from ._common import EVENT, gate_slots, next_event, tied_completed
from .pairs import _enlist, _heap_pop, _heap_push, move_candidate

__all__ = ["STATE", "new_route_state", "route_gate_admit", "route_join", "route_stretch"]

STATE = (
    "fcls", "cptr", "clink", "ccoef", "lptr", "lcls", "lcoef", "lcap", "fw", "change_tol",
    "stop_at", "cn", "cw", "cnf", "cwf", "cstep", "cx", "copen", "cchg", "chl", "rho", "V", "tV",
    "hs", "hn", "hk", "hf", "gk", "gh", "gpos", "fkey", "pstart", "fresh", "lfro", "ldem",
    "lfresh", "lcnt", "llev", "llast", "ldel", "ldc", "lmark", "ltl", "luse", "lg_k", "lg_prev",
    "lg_step", "lg_fro", "lg_dem", "lg_fresh", "lg_cnt", "fz_c", "st_lev", "st_fz", "st_lg",
    "meta", "bth", "bmeta", "fsptr", "fsl", "sptr", "sflow", "scoef", "slink", "cslot", "spres",
    "sdone", "sheavy", "spos", "qptr", "qfifo", "qn", "qcand", "qmark", "qpend", "qT", "qdm",
    "qdl", "fjn", "fent", "fbase",
)
"""Names of the state's entries, in order (:func:`new_route_state`)."""

_S, _NFZ, _NLG, _NCHG, _DIRTY, _NFRESH, _GN, _NACT, _NUSE, _NRR = 0, 1, 2, 3, 4, 5, 6, 7, 8, 9
"""Slots of the ``meta`` array: steps recorded, classes frozen, link states logged,
classes whose weight changed since the last filling, levels stale, fresh flows, size
of the class heap, classes with flows, links crossed by any, classes whose level moved
at the last filling (listed in ``chl`` until the next completion)."""


def new_route_state(
    fcls: npt.NDArray[np.int64], cptr: npt.NDArray[np.int64], clink: npt.NDArray[np.int64],
    ccoef: npt.NDArray[np.float64], cap: npt.NDArray[np.float64], weight: npt.NDArray[np.float64],
    change_tol: float, stop_at: npt.NDArray[np.bool_],
    gate: tuple[npt.NDArray[np.int64], int, float, float] | None = None,
) -> tuple[object, ...]:
    """The kernel state (the ``*args`` of the functions here).

    ``fcls``: each flow's class; ``cptr``, ``clink``, ``ccoef``: the classes' routes
    (CSR, positive coefficients); ``cap``: every link's capacity (positive);
    ``weight``: each flow's weight; ``change_tol``: relative change of a class's
    level below which its flows keep their rates; ``stop_at``: the coflows whose
    completion returns control to the engine. ``gate = (flow_coflow, num_coflows,
    threshold, reach)``: FIFO gates per link (``baraat``): a flow joins only once its
    coflow may send on every link of its route (:func:`route_gate_admit`); a coflow
    within ``reach`` (relative) below the threshold is at it.
    """
    C = cptr.size - 1
    L = cap.size
    F = fcls.size
    nnz = clink.size
    # the links' classes, by class (the order progressive_filling sums and freezes in)
    order = np.argsort(clink, kind="stable")
    lptr = np.zeros(L + 1, np.int64)
    np.cumsum(np.bincount(clink, minlength=L), out=lptr[1:])
    rows = np.repeat(np.arange(C, dtype=np.int64), np.diff(cptr))
    hs = np.zeros(C + 1, np.int64)
    np.cumsum(np.bincount(fcls, minlength=C), out=hs[1:])
    n = max(F, 1)
    return (
        np.ascontiguousarray(fcls, np.int64),
        np.ascontiguousarray(cptr, np.int64),
        np.ascontiguousarray(clink, np.int64),
        np.ascontiguousarray(ccoef, np.float64),
        lptr,
        np.ascontiguousarray(rows[order], np.int64),  # lcls
        np.ascontiguousarray(ccoef[order], np.float64),  # lcoef
        np.array(cap, dtype=np.float64),  # lcap
        np.ascontiguousarray(weight, dtype=np.float64),  # fw
        float(change_tol),
        np.ascontiguousarray(stop_at, dtype=np.bool_),
        # classes
        np.zeros(C, np.int64),  # cn: flows
        np.zeros(C),  # cw: weight
        np.zeros(C, np.int64),  # cnf: flows in the recorded filling
        np.zeros(C),  # cwf: weight in the recorded filling
        np.full(C, -1, np.int64),  # cstep: the step at which it froze (-1: open or empty)
        np.zeros(C),  # cx: its level in the recorded filling
        np.zeros(C, np.bool_),  # copen: open in the filling
        np.zeros(C, np.bool_),  # cchg: weight changed since the filling
        np.zeros(max(C, 1), np.int64),  # chl: those classes
        np.full(C, np.inf),  # rho: level in effect (inf: none yet)
        np.zeros(C),  # V: clock at tV
        np.zeros(C),  # tV
        hs,  # heap segment of each class
        np.zeros(C, np.int64),  # hn: heap sizes
        np.zeros(n),  # hk: heap keys
        np.zeros(n, np.int64),  # hf: heap flows
        np.full(max(C, 1), np.inf),  # gk: class heap keys (next completions)
        np.zeros(max(C, 1), np.int64),  # gh: class heap entries
        np.full(max(C, 1), -1, np.int64),  # gpos: each class's position in it
        # flows
        np.full(n, np.nan),  # fkey (nan: not held)
        np.zeros(n),  # pstart: when it joined (its tied piece's start)
        np.zeros(n, np.int64),  # fresh: joined since the last call
        # links
        np.zeros(L),  # lfro: use by frozen classes
        np.zeros(L),  # ldem: open weight
        np.zeros(L),  # lfresh: open weight when last summed afresh
        np.zeros(L, np.int64),  # lcnt: open classes
        np.full(L, np.inf),  # llev: saturation level
        np.full(L, -1, np.int64),  # llast: last logged state
        np.zeros(L),  # ldel: weight change (scratch)
        np.zeros(L, np.int64),  # ldc: class count change (scratch)
        np.zeros(L, np.bool_),  # lmark: touched (scratch)
        np.zeros(L, np.int64),  # ltl: touched links (scratch)
        # luse: per link, the classes with flows that cross it; its position in the list
        # of links crossed by any (-1: none); that list
        np.stack([np.zeros(L, np.int64), np.full(L, -1, np.int64), np.zeros(L, np.int64)]),
        # the record
        np.zeros(nnz + 1, np.int64),  # lg_k
        np.zeros(nnz + 1, np.int64),  # lg_prev
        np.zeros(nnz + 1, np.int64),  # lg_step
        np.zeros(nnz + 1),  # lg_fro
        np.zeros(nnz + 1),  # lg_dem
        np.zeros(nnz + 1),  # lg_fresh
        np.zeros(nnz + 1, np.int64),  # lg_cnt
        np.zeros(max(C, 1), np.int64),  # fz_c: classes in freeze order
        np.zeros(L + 1),  # st_lev: level of each step
        np.zeros(L + 1, np.int64),  # st_fz: classes frozen before it
        np.zeros(L + 1, np.int64),  # st_lg: link states logged before it
        np.zeros(10, np.int64),  # meta
        *_gate_state(gate, fcls, cptr, clink, ccoef, L, F),
    )


def _gate_state(
    gate: tuple[npt.NDArray[np.int64], int, float, float] | None, fcls: npt.NDArray[np.int64],
    cptr: npt.NDArray[np.int64], clink: npt.NDArray[np.int64], ccoef: npt.NDArray[np.float64],
    L: int, F: int,
) -> tuple[object, ...]:
    """The FIFO gates' arrays of the state (see :func:`new_route_state`)."""
    n = max(F, 1)
    if gate is None:
        fco, K, threshold, reach, on = np.zeros(F, np.int64), 0, 0.0, 0.0, 0
        flen = np.zeros(F, np.int64)
    else:
        fco, K = np.asarray(gate[0], np.int64), int(gate[1])
        threshold, reach, on = float(gate[2]), float(gate[3]), 1
        flen = np.diff(cptr)[fcls]
    # the incidence entries flow by flow, each flow's in its class's link order
    fsptr = np.zeros(F + 1, np.int64)
    np.cumsum(flen, out=fsptr[1:])
    ef = np.repeat(np.arange(F, dtype=np.int64), flen)
    at = np.arange(ef.size, dtype=np.int64) - fsptr[ef] + np.asarray(cptr, np.int64)[fcls][ef]
    inv, sptr, order, slink, cslot, qptr = gate_slots(fco, ef, clink[at], L, K)
    S = sptr.size - 1
    return (
        np.array([threshold, 1.0 - reach], np.float64),  # bth: threshold, its "at" factor
        np.array([on, 0, 0, -1], np.int64),  # bmeta: on, pending links, links to re-predict, the
        # link predicted earliest (-1: not known)
        fsptr,  # each flow's entries in fsl
        inv if on else np.zeros(1, np.int64),  # fsl: the slot of each entry
        sptr,
        ef[order] if on else np.zeros(1, np.int64),  # sflow: flows of each slot
        np.ascontiguousarray(ccoef[at][order], np.float64) if on else np.zeros(1),  # scoef
        slink if on else np.zeros(1, np.int64),
        cslot,
        np.zeros(max(S, 1), np.int64),  # spres: unfinished flows of each slot
        np.zeros(max(S, 1)),  # sdone: bytes of its finished flows through its link
        np.zeros(max(S, 1), np.bool_),  # sheavy
        np.full(max(S, 1), -1, np.int64),  # spos: position in its link's FIFO (-1: not yet)
        qptr,
        np.zeros(max(S, 1), np.int64),  # qfifo: each link's slots, first in first out
        np.zeros(L, np.int64),  # qn: slots queued per link
        np.zeros(L, np.int64),  # qcand: position of each link's first light slot (qn: none)
        np.zeros(L, np.bool_),  # qmark: listed in qpend
        np.zeros(L, np.int64),  # qpend: links whose candidate may move
        np.full(L, np.inf),  # qT: when each link's candidate turns heavy at current rates
        np.zeros(L, np.bool_),  # qdm: listed in qdl
        np.zeros(L, np.int64),  # qdl: links whose candidate's rate or bytes may have changed
        np.zeros(n, np.bool_),  # fjn: flows joined
        np.zeros(n, np.bool_),  # fent: joined flows whose key holds their size
        np.zeros(n),  # fbase: each entered flow's key without its size (service at zero bytes)
    )


# --- the heap of classes by next completion ----------------------------------------------


@njit
def _g_up(i, gk, gh, gpos):  # type: ignore[no-untyped-def]
    key = gk[i]
    c = gh[i]
    while i > 0:
        parent = (i - 1) >> 1
        if gk[parent] <= key:
            break
        gk[i] = gk[parent]
        gh[i] = gh[parent]
        gpos[gh[i]] = i
        i = parent
    gk[i] = key
    gh[i] = c
    gpos[c] = i


@njit
def _g_down(i, n, gk, gh, gpos):  # type: ignore[no-untyped-def]
    key = gk[i]
    c = gh[i]
    while True:
        ch = 2 * i + 1
        if ch >= n:
            break
        if ch + 1 < n and gk[ch + 1] < gk[ch]:
            ch += 1
        if gk[ch] >= key:
            break
        gk[i] = gk[ch]
        gh[i] = gh[ch]
        gpos[gh[i]] = i
        i = ch
    gk[i] = key
    gh[i] = c
    gpos[c] = i


@njit
def _g_set(c, key, gk, gh, gpos, meta):  # type: ignore[no-untyped-def]
    """Class ``c``'s next completion is ``key`` (``inf``: none, out of the heap)."""
    i = gpos[c]
    n = meta[_GN]
    if key == np.inf:
        if i < 0:
            return
        gpos[c] = -1
        n -= 1
        meta[_GN] = n
        if i == n:
            return
        gk[i] = gk[n]
        gh[i] = gh[n]
        gpos[gh[i]] = i
        if i > 0 and gk[i] < gk[(i - 1) >> 1]:
            _g_up(i, gk, gh, gpos)
        else:
            _g_down(i, n, gk, gh, gpos)
        return
    if i < 0:
        i = n
        meta[_GN] = n + 1
        gk[i] = key
        gh[i] = c
        _g_up(i, gk, gh, gpos)
        return
    old = gk[i]
    gk[i] = key
    if key < old:
        _g_up(i, gk, gh, gpos)
    else:
        _g_down(i, n, gk, gh, gpos)


@njit
def _g_many(cls, m, cn, rho, V, tV, hs, hn, hk, gk, gh, gpos, meta):  # type: ignore[no-untyped-def]
    """Classes ``cls[:m]`` have new next completions: put them in the heap one by one, or
    when they are many, all at once (the heap rebuilt bottom-up)."""
    n = meta[_GN]
    if 4 * m < n:
        for q in range(m):
            c = cls[q]
            _g_set(c, _next_fin(c, cn, rho, V, tV, hs, hn, hk), gk, gh, gpos, meta)
        return
    for q in range(m):
        c = cls[q]
        r = rho[c]
        key = tV[c] + (hk[hs[c]] - V[c]) / r if hn[c] > 0 and 0.0 < r < np.inf else np.inf
        i = gpos[c]
        if i >= 0:
            gk[i] = key
        elif key < np.inf:
            gk[n] = key
            gh[n] = c
            gpos[c] = n
            n += 1
    j = 0
    for i in range(n):
        if gk[i] < np.inf:
            gk[j] = gk[i]
            gh[j] = gh[i]
            gpos[gh[j]] = j
            j += 1
        else:
            gpos[gh[i]] = -1
    n = j
    meta[_GN] = n
    for i in range(n // 2 - 1, -1, -1):
        _g_down(i, n, gk, gh, gpos)


# --- flows and classes -------------------------------------------------------------------


@njit
def _clock(c, t, rho, V, tV):  # type: ignore[no-untyped-def]
    dt = t - tV[c]
    return V[c] if dt == 0.0 else V[c] + rho[c] * dt


@njit
def _next_fin(c, cn, rho, V, tV, hs, hn, hk):  # type: ignore[no-untyped-def]
    """When class ``c``'s first flow completes at its level in effect."""
    r = rho[c]
    if hn[c] == 0 or not (0.0 < r < np.inf):
        return np.inf
    return tV[c] + (hk[hs[c]] - V[c]) / r


@njit
def _changed(new, old, tol):  # type: ignore[no-untyped-def]
    """The test of the reference ``fair`` policy for a level that changed."""
    if new < np.inf and old < np.inf:
        return abs(new - old) > tol * max(abs(old), 1e-300)
    return (new < np.inf) != (old < np.inf)


@njit
def _mark(c, cchg, chl, meta):  # type: ignore[no-untyped-def]
    if not cchg[c]:
        cchg[c] = True
        chl[meta[_NCHG]] = c
        meta[_NCHG] += 1


@njit
def _join(f, t, got, fcls, fw, cn, cw, cchg, chl, rho, V, tV, fkey, pstart, fresh, meta):  # type: ignore[no-untyped-def]
    """Flow ``f`` joins its class at ``t`` having received ``got`` bytes; its key is
    completed by its size when it enters its class's heap."""
    c = fcls[f]
    S = _clock(c, t, rho, V, tV) if rho[c] < np.inf else 0.0
    fkey[f] = S - got / fw[f]
    cn[c] += 1
    cw[c] += fw[f]
    _mark(c, cchg, chl, meta)
    pstart[f] = t
    fresh[meta[_NFRESH]] = f
    meta[_NFRESH] += 1
    meta[_DIRTY] = 1


@njit
def route_join(  # type: ignore[no-untyped-def]
    flows, t, sent,
    fcls, cptr, clink, ccoef, lptr, lcls, lcoef, lcap, fw, change_tol, stop_at,
    cn, cw, cnf, cwf, cstep, cx, copen, cchg, chl, rho, V, tV, hs, hn, hk, hf, gk, gh, gpos,
    fkey, pstart, fresh, lfro, ldem, lfresh, lcnt, llev, llast, ldel, ldc, lmark, ltl, luse,
    lg_k, lg_prev, lg_step, lg_fro, lg_dem, lg_fresh, lg_cnt, fz_c, st_lev, st_fz, st_lg, meta,
    bth, bmeta, fsptr, fsl, sptr, sflow, scoef, slink, cslot, spres, sdone, sheavy, spos, qptr,
    qfifo, qn, qcand, qmark, qpend, qT, qdm, qdl, fjn, fent, fbase,
):
    """Admit ``flows`` at time ``t`` (``sent[q]``: bytes flow ``flows[q]`` received so far).

    Rates follow at the next call, which completes each flow's key by its size; a flow's
    tied piece starts at ``t``.
    """
    for q in range(flows.size):
        _join(flows[q], t, sent[q], fcls, fw, cn, cw, cchg, chl, rho, V, tV, fkey, pstart, fresh,
              meta)


# --- FIFO gates (baraat) ------------------------------------------------------------------
#
# As the pair kernel's gates (:mod:`.pairs`), over routes. A slot is a (coflow, link) that
# a flow of the coflow crosses; each link queues its coflows' slots first in first out.
# Its *candidate* is its first slot that is present (has unfinished flows) and light (sent
# less than the threshold through the link, finished flows included, each flow's bytes
# times its coefficient on the link); the slots up to and including it may send there
# (all of them when there is none). A flow joins once its coflow may send on every link
# of its route. The allowed prefix of a link only grows while a coflow's flows all arrive
# together, so a joined flow never leaves.


@njit
def _allowed(sl, spos, slink, qcand):  # type: ignore[no-untyped-def]
    """Slot ``sl``'s coflow may send on its link."""
    return spos[sl] >= 0 and spos[sl] <= qcand[slink[sl]]


@njit
def _redo(u, bmeta, qdm, qdl):  # type: ignore[no-untyped-def]
    """List link ``u`` for a new prediction of its candidate's crossing."""
    if not qdm[u]:
        qdm[u] = True
        qdl[bmeta[2]] = u
        bmeta[2] += 1


@njit
def _touch(f, bmeta, fsptr, fsl, slink, spos, qcand, qdm, qdl):  # type: ignore[no-untyped-def]
    """Flow ``f``'s rate changes: the links where its coflow is the candidate predict
    its crossing anew."""
    for e in range(fsptr[f], fsptr[f + 1]):
        sl = fsl[e]
        if spos[sl] == qcand[slink[sl]]:
            _redo(slink[sl], bmeta, qdm, qdl)


@njit
def _open_slot(  # type: ignore[no-untyped-def]
    sl, t, fcls, fw, cn, cw, cchg, chl, rho, V, tV, fkey, pstart, fresh, meta, bmeta, fsptr, fsl,
    sptr, sflow, slink, spos, qcand, qdm, qdl, fjn,
):
    """The waiting flows of slot ``sl`` (allowed on its link) whose coflow may send on
    every link of their routes join at ``t`` (as fresh flows, with nothing received)."""
    for q in range(sptr[sl], sptr[sl + 1]):
        f = sflow[q]
        if fjn[f]:
            continue
        ok = True
        for e in range(fsptr[f], fsptr[f + 1]):
            if not _allowed(fsl[e], spos, slink, qcand):
                ok = False
                break
        if ok:
            fjn[f] = True
            _join(f, t, 0.0, fcls, fw, cn, cw, cchg, chl, rho, V, tV, fkey, pstart, fresh, meta)
            _touch(f, bmeta, fsptr, fsl, slink, spos, qcand, qdm, qdl)


@njit
def route_gate_admit(  # type: ignore[no-untyped-def]
    coflows, t,
    fcls, cptr, clink, ccoef, lptr, lcls, lcoef, lcap, fw, change_tol, stop_at,
    cn, cw, cnf, cwf, cstep, cx, copen, cchg, chl, rho, V, tV, hs, hn, hk, hf, gk, gh, gpos,
    fkey, pstart, fresh, lfro, ldem, lfresh, lcnt, llev, llast, ldel, ldc, lmark, ltl, luse,
    lg_k, lg_prev, lg_step, lg_fro, lg_dem, lg_fresh, lg_cnt, fz_c, st_lev, st_fz, st_lg, meta,
    bth, bmeta, fsptr, fsl, sptr, sflow, scoef, slink, cslot, spres, sdone, sheavy, spos, qptr,
    qfifo, qn, qcand, qmark, qpend, qT, qdm, qdl, fjn, fent, fbase,
):
    """Admit whole ``coflows`` (first in first out, in this order) at ``t`` under FIFO gates:
    each queues behind the coflows on each link of its flows' routes; its flows whose
    coflow may send on every link of their routes join at once, the others wait (with
    nothing received)."""
    for i in range(coflows.size):
        k = coflows[i]
        for sl in range(cslot[k], cslot[k + 1]):
            u = slink[sl]
            spos[sl] = qn[u]
            qfifo[qptr[u] + qn[u]] = sl
            qn[u] += 1
            spres[sl] = sptr[sl + 1] - sptr[sl]
    for i in range(coflows.size):
        k = coflows[i]
        for sl in range(cslot[k], cslot[k + 1]):
            if _allowed(sl, spos, slink, qcand):
                _open_slot(sl, t, fcls, fw, cn, cw, cchg, chl, rho, V, tV, fkey, pstart, fresh,
                           meta, bmeta, fsptr, fsl, sptr, sflow, slink, spos, qcand, qdm, qdl, fjn)
    meta[_DIRTY] = 1


@njit
def _advance_gates(  # type: ignore[no-untyped-def]
    t, fcls, fw, cn, cw, cchg, chl, rho, V, tV, fkey, pstart, fresh, meta, bmeta, fsptr, fsl,
    sptr, sflow, slink, spres, sheavy, spos, qptr, qfifo, qn, qcand, qmark, qpend, qdm, qdl, fjn,
):
    """Each listed link's candidate moves past the slots that are gone or heavy; the slots it
    passes, and the new candidate, open."""
    for q in range(bmeta[1]):
        u = qpend[q]
        old = move_candidate(u, spres, sheavy, qptr, qfifo, qn, qcand, qmark)
        _redo(u, bmeta, qdm, qdl)
        base = qptr[u]
        for i in range(old + 1, min(qcand[u], qn[u] - 1) + 1):
            _open_slot(qfifo[base + i], t, fcls, fw, cn, cw, cchg, chl, rho, V, tV, fkey, pstart,
                       fresh, meta, bmeta, fsptr, fsl, sptr, sflow, slink, spos, qcand, qdm, qdl,
                       fjn)
    bmeta[1] = 0


@njit
def _slot_state(sl, t, size, fw, fcls, rho, V, tV, fkey, sptr, sflow, scoef, sdone, fent, fbase):  # type: ignore[no-untyped-def]
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
        c = fcls[f]
        if rho[c] == np.inf:
            continue  # a class that takes its level at the next filling: nothing yet
        got = fw[f] * (_clock(c, t, rho, V, tV) - fbase[f])
        x += scoef[q] * min(max(got, 0.0), size[f])
        if rho[c] > 0.0:
            r += scoef[q] * fw[f] * rho[c]
    return x, r


@njit
def _heavy_now(  # type: ignore[no-untyped-def]
    t, due, size, fw, fcls, rho, V, tV, fkey, bth, bmeta, sptr, sflow, scoef, sdone, sheavy, qptr,
    qfifo, qn, qcand, qmark, qpend, qT, qdm, qdl, fent, fbase,
):
    """Candidates that have sent the threshold by ``t`` turn heavy (only links whose
    predicted crossing is at most ``due``; those predict anew)."""
    for u in range(qn.size):
        if qcand[u] >= qn[u] or qT[u] > due:
            continue
        _redo(u, bmeta, qdm, qdl)
        sl = qfifo[qptr[u] + qcand[u]]
        x, _ = _slot_state(sl, t, size, fw, fcls, rho, V, tV, fkey, sptr, sflow, scoef, sdone,
                           fent, fbase)
        if x >= bth[0] * bth[1]:
            sheavy[sl] = True
            _enlist(u, bmeta, qpend, qmark)


@njit
def _crossings(  # type: ignore[no-untyped-def]
    t, tol, every, size, fw, fcls, rho, V, tV, fkey, bth, bmeta, sptr, sflow, scoef, sdone, qptr,
    qfifo, qn, qcand, qT, qdm, qdl, fent, fbase,
):
    """When each link's candidate reaches the threshold at the current rates; the earliest.

    Predicted anew for every link (``every``) or only for the listed ones, whose
    candidate changed, was due, or has a flow whose rate changed: elsewhere the
    candidate's bytes grow at the rate of the last prediction, which stays right.
    Never sooner than the engine's time resolution after ``t`` (two tolerances, as the
    engine moves a policy's wake-up), as in the pair kernel.
    """
    floor = t + 2.0 * tol * max(1.0, abs(t))
    n = qn.size if every else bmeta[2]
    a = bmeta[3]
    # the earliest is found by a pass over every link when its link predicts anew, else
    # among the listed links and it
    scan = every or a < 0 or qdm[a]
    for i in range(n):
        u = i if every else qdl[i]
        qdm[u] = False
        qT[u] = np.inf
        if qcand[u] >= qn[u]:
            continue
        sl = qfifo[qptr[u] + qcand[u]]
        x, r = _slot_state(sl, t, size, fw, fcls, rho, V, tV, fkey, sptr, sflow, scoef, sdone,
                           fent, fbase)
        if r > 0.0:
            qT[u] = max(t + max(bth[0] - x, 0.0) / r, floor)
            if not scan and qT[u] < qT[a]:
                a = u
    bmeta[2] = 0
    if qT.size == 0:
        return np.inf
    if scan:
        a = np.argmin(qT)
    bmeta[3] = a
    return qT[a]


@njit
def _gate_done(f, size, fcls, cptr, ccoef, bmeta, fsptr, fsl, slink, spres, sdone, spos, qcand,  # type: ignore[no-untyped-def]
               qmark, qpend, qdm, qdl):
    """Flow ``f`` completed: its slots lose a flow and gain its bytes through their links;
    a candidate left without flows on its link lets the next slot in, one left with
    others predicts its crossing anew."""
    a = cptr[fcls[f]] - fsptr[f]
    for e in range(fsptr[f], fsptr[f + 1]):
        sl = fsl[e]
        spres[sl] -= 1
        sdone[sl] += ccoef[a + e] * size[f]
        if spos[sl] == qcand[slink[sl]]:
            _redo(slink[sl], bmeta, qdm, qdl)
            if spres[sl] == 0:
                _enlist(slink[sl], bmeta, qpend, qmark)


# --- the incremental progressive filling -------------------------------------------------


@njit
def _diverge(k, d, top, lcap, lfro, ldem, lcnt, llast, lg_prev, lg_step, lg_fro, lg_dem, lg_cnt,  # type: ignore[no-untyped-def]
             st_lev, S):
    """The first step (below ``top``) at which link ``k``, with ``d`` more open weight,
    would saturate at or below the step's level (``top``: none)."""
    best = top
    hi = S - 1
    e = llast[k]
    fro = lfro[k]
    dem = ldem[k] if lcnt[k] > 0 else 0.0
    while True:
        lo = lg_step[e] + 1 if e >= 0 else 0
        if lo <= hi and lo < best:
            lv = (lcap[k] - fro) / (dem + d)
            # the first step in [lo, hi] whose level reaches lv
            h = min(hi, best - 1)
            if st_lev[h] >= lv:
                a = lo
                b = h
                while a < b:
                    m = (a + b) >> 1
                    if st_lev[m] >= lv:
                        b = m
                    else:
                        a = m + 1
                best = a
        if e < 0:
            break
        fro = lg_fro[e]
        dem = lg_dem[e] if lg_cnt[e] > 0 else 0.0
        hi = lg_step[e]
        e = lg_prev[e]
    return best


@njit
def _open_sum(k, lptr, lcls, lcoef, cw, cn, copen, ldem, lfresh, lcnt):  # type: ignore[no-untyped-def]
    """Link ``k``'s open weight and open classes, summed afresh in class order."""
    d = 0.0
    m = 0
    for q in range(lptr[k], lptr[k + 1]):
        c = lcls[q]
        if copen[c] and cn[c] > 0:
            d += lcoef[q] * cw[c]
            m += 1
    ldem[k] = d
    lfresh[k] = d
    lcnt[k] = m


@njit
def _refill(  # type: ignore[no-untyped-def]
    fcls, cptr, clink, ccoef, lptr, lcls, lcoef, lcap, cn, cw, cnf, cwf, cstep, cx, copen, cchg, chl,
    lfro, ldem, lfresh, lcnt, llev, llast, ldel, ldc, lmark, ltl, luse,
    lg_k, lg_prev, lg_step, lg_fro, lg_dem, lg_fresh, lg_cnt, fz_c, st_lev, st_fz, st_lg, meta,
):
    """Max-min levels for the current class weights from the recorded filling (see the
    module docstring). Returns the position in ``fz_c`` from which classes froze anew."""
    S = meta[_S]
    J = S
    nt = 0
    for q in range(meta[_NCHG]):
        c = chl[q]
        if cnf[c] > 0 and cstep[c] >= 0 and cstep[c] < J:
            J = cstep[c]
        d = cw[c] - cwf[c]
        dc = (1 if cn[c] > 0 else 0) - (1 if cnf[c] > 0 else 0)
        for e in range(cptr[c], cptr[c + 1]):
            k = clink[e]
            if not lmark[k]:
                lmark[k] = True
                ltl[nt] = k
                nt += 1
                ldel[k] = 0.0
                ldc[k] = 0
            ldel[k] += ccoef[e] * d
            ldc[k] += dc
    for q in range(nt):
        k = ltl[q]
        if ldel[k] > 0.0:
            J = _diverge(k, ldel[k], J, lcap, lfro, ldem, lcnt, llast, lg_prev, lg_step, lg_fro,
                         lg_dem, lg_cnt, st_lev, S)
    # roll the record back to step J
    if J < S:
        for g in range(meta[_NLG] - 1, st_lg[J] - 1, -1):
            k = lg_k[g]
            lfro[k] = lg_fro[g]
            ldem[k] = lg_dem[g]
            lfresh[k] = lg_fresh[g]
            lcnt[k] = lg_cnt[g]
            llast[k] = lg_prev[g]
        for q in range(meta[_NFZ] - 1, st_fz[J] - 1, -1):
            c = fz_c[q]
            copen[c] = True
            cstep[c] = -1
        meta[_NLG] = st_lg[J]
        meta[_NFZ] = st_fz[J]
        meta[_S] = J
    # the changed classes take their new weights, in the record too
    for q in range(meta[_NCHG]):
        c = chl[q]
        cchg[c] = False
        if cn[c] > 0 and cnf[c] == 0:
            meta[_NACT] += 1
        elif cn[c] == 0 and cnf[c] > 0:
            meta[_NACT] -= 1
        cnf[c] = cn[c]
        cwf[c] = cw[c]
        copen[c] = cn[c] > 0
        cstep[c] = -1
    meta[_NCHG] = 0
    for q in range(nt):
        k = ltl[q]
        lmark[k] = False
        d = ldel[k]
        dc = ldc[k]
        g = llast[k]
        while g >= 0:
            lg_cnt[g] += dc
            if lg_cnt[g] > 0:
                lg_dem[g] += d
                lg_fresh[g] += d
            else:
                lg_dem[g] = 0.0
            g = lg_prev[g]
        _open_sum(k, lptr, lcls, lcoef, cw, cn, copen, ldem, lfresh, lcnt)
        # the list of links crossed by classes with flows (only they can saturate)
        was = luse[0, k]
        luse[0, k] += dc
        if was == 0 and luse[0, k] > 0:
            luse[1, k] = meta[_NUSE]
            luse[2, meta[_NUSE]] = k
            meta[_NUSE] += 1
        elif was > 0 and luse[0, k] == 0:
            i = luse[1, k]
            meta[_NUSE] -= 1
            last = luse[2, meta[_NUSE]]
            luse[2, i] = last
            luse[1, last] = i
            luse[1, k] = -1
    # continue the filling from step J
    level = st_lev[J - 1] if J > 0 else 0.0
    heap = [(np.inf, np.int64(-1))]
    heap.pop()
    for i in range(meta[_NUSE]):
        k = luse[2, i]
        if lcnt[k] > 0:
            v = (lcap[k] - lfro[k]) / ldem[k]
            llev[k] = v if v > level else level
            heap.append((llev[k], np.int64(k)))
        else:
            llev[k] = np.inf
    heapq.heapify(heap)
    first = meta[_NFZ]
    nopen = meta[_NACT] - meta[_NFZ]
    while nopen > 0:
        while len(heap) > 0 and (lcnt[heap[0][1]] == 0 or heap[0][0] != llev[heap[0][1]]):
            k = heap[0][1]
            if lcnt[k] == 0:
                heapq.heappop(heap)
            else:
                heapq.heapreplace(heap, (llev[k], k))
        if len(heap) == 0:
            break  # not on the fabrics the policy hands the kernel (every class has a link)
        lk, k = heapq.heappop(heap)
        if lk > level:
            level = lk
        S = meta[_S]
        st_lev[S] = level
        st_fz[S] = meta[_NFZ]
        st_lg[S] = meta[_NLG]
        meta[_S] = S + 1
        nfz = meta[_NFZ]
        g = meta[_NLG]
        for q in range(lptr[k], lptr[k + 1]):
            c = lcls[q]
            if not (copen[c] and cn[c] > 0):
                continue
            # class c freezes at the level: its links' states are logged, then follow
            # (progressive_filling's _freeze; written out here, as a call per class costs
            # more than its work)
            nopen -= 1
            cx[c] = level
            copen[c] = False
            cstep[c] = S
            fz_c[nfz] = c
            nfz += 1
            wc = cw[c]
            xp = wc * level
            for e in range(cptr[c], cptr[c + 1]):
                u = clink[e]
                co = ccoef[e]
                lg_k[g] = u
                lg_prev[g] = llast[u]
                lg_step[g] = S
                lg_fro[g] = lfro[u]
                lg_dem[g] = ldem[u]
                lg_fresh[g] = lfresh[u]
                lg_cnt[g] = lcnt[u]
                llast[u] = g
                g += 1
                lfro[u] += co * xp
                lcnt[u] -= 1
                if lcnt[u] == 0:
                    ldem[u] = 0.0
                    llev[u] = np.inf
                    continue
                ldem[u] -= co * wc
                if ldem[u] <= REFRESH * lfresh[u]:
                    _open_sum(u, lptr, lcls, lcoef, cw, cn, copen, ldem, lfresh, lcnt)
                v = (lcap[u] - lfro[u]) / ldem[u]
                if v > llev[u]:
                    llev[u] = v
        meta[_NFZ] = nfz
        meta[_NLG] = g
    return first


# --- the stretch -------------------------------------------------------------------------


@njit
def _relevel(  # type: ignore[no-untyped-def]
    t, record, lv_u, lv_t, lv_x, nlv, fco, start,
    fcls, cptr, clink, ccoef, lptr, lcls, lcoef, lcap, fw, change_tol, stop_at,
    cn, cw, cnf, cwf, cstep, cx, copen, cchg, chl, rho, V, tV, hs, hn, hk, hf, gk, gh, gpos,
    fkey, pstart, fresh, lfro, ldem, lfresh, lcnt, llev, llast, ldel, ldc, lmark, ltl, luse,
    lg_k, lg_prev, lg_step, lg_fro, lg_dem, lg_fresh, lg_cnt, fz_c, st_lev, st_fz, st_lg, meta,
):
    """Levels for the current weights; the classes whose level moved take it at ``t``
    (logged in ``lv_*`` when recording: at most one entry per class with flows). Returns
    the new length of the log."""
    first = _refill(fcls, cptr, clink, ccoef, lptr, lcls, lcoef, lcap, cn, cw, cnf, cwf, cstep,
                    cx, copen, cchg, chl, lfro, ldem, lfresh, lcnt, llev, llast, ldel, ldc,
                    lmark, ltl, luse, lg_k, lg_prev, lg_step, lg_fro, lg_dem, lg_fresh, lg_cnt, fz_c,
                    st_lev, st_fz, st_lg, meta)
    m = 0
    for q in range(first, meta[_NFZ]):
        # class c takes its new level at t if it moved; written out here, as a call per
        # class costs more than its work
        c = fz_c[q]
        new = cx[c]
        old = rho[c]
        if old == np.inf:
            # a class that just got flows: its clock starts now
            rho[c] = new
            V[c] = 0.0
            tV[c] = t
            if new > 0.0:
                for p in range(hs[c], hs[c] + hn[c]):
                    f = hf[p]
                    if t < start[fco[f]]:
                        start[fco[f]] = t
        elif _changed(new, old, change_tol):
            if old == 0.0 and new > 0.0:
                for p in range(hs[c], hs[c] + hn[c]):
                    f = hf[p]
                    if t < start[fco[f]]:
                        start[fco[f]] = t
            dt = t - tV[c]
            if dt != 0.0:
                V[c] += old * dt
            tV[c] = t
            rho[c] = new
        else:
            continue
        if record:
            lv_u[nlv] = c
            lv_t[nlv] = t
            lv_x[nlv] = new
            nlv += 1
        chl[m] = c  # (free until the next completion)
        m += 1
    _g_many(chl, m, cn, rho, V, tV, hs, hn, hk, gk, gh, gpos, meta)
    meta[_DIRTY] = 0
    meta[_NRR] = m
    return nlv


@njit
def _enter_fresh(t, size, fco, start, fcls, fw, cn, rho, V, tV, hs, hn, hk, hf, gk, gh, gpos,  # type: ignore[no-untyped-def]
                 fkey, fresh, meta, fent, fbase):
    """The flows joined since they last entered enter their classes' heaps, keys completed
    by their sizes."""
    for q in range(meta[_NFRESH]):
        f = fresh[q]
        c = fcls[f]
        fbase[f] = fkey[f]
        fent[f] = True
        key = fkey[f] + size[f] / fw[f]
        fkey[f] = key
        _heap_push(hk, hf, hs[c], hn[c], key, f)
        hn[c] += 1
        if rho[c] < np.inf:
            # a flow that joins a running class starts now
            _g_set(c, _next_fin(c, cn, rho, V, tV, hs, hn, hk), gk, gh, gpos, meta)
            if rho[c] > 0.0 and t < start[fco[f]]:
                start[fco[f]] = t
    meta[_NFRESH] = 0


@njit
def route_stretch(  # type: ignore[no-untyped-def]
    t0, t_stop, tol, flows, la, lb, L, cap, size, sent, fco, cf_left, start,
    record, max_pieces, rate_out, done_f, done_t, pc_f, pc_t0, pc_t1, pc_r, lv_u, lv_t, lv_x,
    fcls, cptr, clink, ccoef, lptr, lcls, lcoef, lcap, fw, change_tol, stop_at,
    cn, cw, cnf, cwf, cstep, cx, copen, cchg, chl, rho, V, tV, hs, hn, hk, hf, gk, gh, gpos,
    fkey, pstart, fresh, lfro, ldem, lfresh, lcnt, llev, llast, ldel, ldc, lmark, ltl, luse,
    lg_k, lg_prev, lg_step, lg_fro, lg_dem, lg_fresh, lg_cnt, fz_c, st_lev, st_fz, st_lg, meta,
    bth, bmeta, fsptr, fsl, sptr, sflow, scoef, slink, cslot, spres, sdone, sheavy, spos, qptr,
    qfifo, qn, qcand, qmark, qpend, qT, qdm, qdl, fjn, fent, fbase,
):
    """Advance per-flow weighted max-min from ``t0`` (see :mod:`coflowopt.sim.kernels`).

    ``flows`` must be the flows joined to the state and not completed. Returns ``(t, thr,
    n_done, n_pieces, n_levels, n_events, reason)``; ``rate_out`` stays zero. When
    recording, a flow's piece is tied (see the module docstring): ``(flow, joined,
    completed, weight)`` in ``pc_*``, its class's level changes in ``lv_u, lv_t, lv_x``
    (class, time, level); the log needs room for ``flows.size`` entries, one event's
    changes at most.
    """
    n = flows.size
    t = t0
    nd = 0
    npc = 0
    nlv = np.int64(0)  # not the literal 0: its callees compile once, for int64
    nev = 0
    gates = bmeta[0] > 0
    if gates:
        # a decision: every candidate that has sent the threshold is heavy (as the reference
        # tests at each decision); then the links listed since the last event move on
        _heavy_now(t, np.inf, size, fw, fcls, rho, V, tV, fkey, bth, bmeta, sptr, sflow, scoef,
                   sdone, sheavy, qptr, qfifo, qn, qcand, qmark, qpend, qT, qdm, qdl, fent, fbase)
        _advance_gates(t, fcls, fw, cn, cw, cchg, chl, rho, V, tV, fkey, pstart, fresh, meta, bmeta,
                       fsptr, fsl, sptr, sflow, slink, spres, sheavy, spos, qptr, qfifo, qn, qcand,
                       qmark, qpend, qdm, qdl, fjn)
    _enter_fresh(t, size, fco, start, fcls, fw, cn, rho, V, tV, hs, hn, hk, hf, gk, gh, gpos,
                 fkey, fresh, meta, fent, fbase)
    if meta[_DIRTY]:
        nlv = _relevel(t, record, lv_u, lv_t, lv_x, nlv, fco, start,
                       fcls, cptr, clink, ccoef, lptr, lcls, lcoef, lcap, fw, change_tol, stop_at,
                       cn, cw, cnf, cwf, cstep, cx, copen, cchg, chl, rho, V, tV, hs, hn, hk, hf,
                       gk, gh, gpos, fkey, pstart, fresh, lfro, ldem, lfresh, lcnt, llev, llast,
                       ldel, ldc, lmark, ltl, luse, lg_k, lg_prev, lg_step, lg_fro, lg_dem, lg_fresh,
                       lg_cnt, fz_c, st_lev, st_fz, st_lg, meta)
    t_gate = np.inf
    if gates:
        t_gate = _crossings(t, tol, True, size, fw, fcls, rho, V, tV, fkey, bth, bmeta, sptr, sflow,
                            scoef, sdone, qptr, qfifo, qn, qcand, qT, qdm, qdl, fent, fbase)
    reason = 0
    while True:
        t_fin = min(gk[0] if meta[_GN] > 0 else np.inf, t_gate)
        t_next, thr, why, t, nev = next_event(t_fin, t_stop, tol, t, nev)
        if why != EVENT:
            reason = why
            break
        # every completion at this event, together
        t_new = t_next
        stop = False
        while meta[_GN] > 0 and gk[0] <= thr:
            c = gh[0]
            r = rho[c]
            Vc = V[c]
            tVc = tV[c]
            base = hs[c]
            took = False
            while hn[c] > 0:
                tf = tVc + (hk[base] - Vc) / r
                if took and tf > thr:
                    break
                took = True  # the class's first flow is due (its heap entry says so)
                f = hf[base]
                _heap_pop(hk, hf, base, hn[c])
                hn[c] -= 1
                npc, nd = tied_completed(f, tf, record, npc, pstart, fw, pc_f, pc_t0, pc_t1, pc_r,
                                         sent, size, fkey, done_f, done_t, nd)
                if tf > t_new:
                    t_new = tf
                cn[c] -= 1
                cw[c] -= fw[f]
                _mark(c, cchg, chl, meta)
                k = fco[f]
                cf_left[k] -= 1
                if cf_left[k] == 0 and stop_at[k]:
                    stop = True
                if gates:
                    _gate_done(f, size, fcls, cptr, ccoef, bmeta, fsptr, fsl, slink, spres, sdone,
                               spos, qcand, qmark, qpend, qdm, qdl)
            if cn[c] == 0:
                # an empty class forgets its clock (and the rounding in its weight)
                cw[c] = 0.0
                rho[c] = np.inf
                V[c] = 0.0
                tV[c] = 0.0
                _g_set(c, np.inf, gk, gh, gpos, meta)
            else:
                _g_set(c, _next_fin(c, cn, rho, V, tV, hs, hn, hk), gk, gh, gpos, meta)
        t = t_new
        meta[_DIRTY] = 1
        # (a flow completes once: its tied piece always fits; a relevel logs at most one
        # change per class with flows, at most n)
        full = record and nlv > lv_u.size - n
        if t_stop <= thr or stop or full:
            # the engine decides (or admits) now; the levels are recomputed at the next call
            reason = 0 if t_stop <= thr else (1 if stop else 2)
            break
        if gates:
            # candidates whose crossing is due at this event turn heavy; the listed links
            # move on and the flows they let in join
            if t_gate <= thr:
                _heavy_now(t, thr, size, fw, fcls, rho, V, tV, fkey, bth, bmeta, sptr, sflow,
                           scoef, sdone, sheavy, qptr, qfifo, qn, qcand, qmark, qpend, qT, qdm, qdl,
                           fent, fbase)
            if bmeta[1]:
                _advance_gates(t, fcls, fw, cn, cw, cchg, chl, rho, V, tV, fkey, pstart, fresh,
                               meta, bmeta, fsptr, fsl, sptr, sflow, slink, spres, sheavy, spos,
                               qptr, qfifo, qn, qcand, qmark, qpend, qdm, qdl, fjn)
            _enter_fresh(t, size, fco, start, fcls, fw, cn, rho, V, tV, hs, hn, hk, hf, gk, gh,
                         gpos, fkey, fresh, meta, fent, fbase)
        nlv = _relevel(t, record, lv_u, lv_t, lv_x, nlv, fco, start,
                       fcls, cptr, clink, ccoef, lptr, lcls, lcoef, lcap, fw, change_tol, stop_at,
                       cn, cw, cnf, cwf, cstep, cx, copen, cchg, chl, rho, V, tV, hs, hn, hk, hf,
                       gk, gh, gpos, fkey, pstart, fresh, lfro, ldem, lfresh, lcnt, llev, llast,
                       ldel, ldc, lmark, ltl, luse, lg_k, lg_prev, lg_step, lg_fro, lg_dem, lg_fresh,
                       lg_cnt, fz_c, st_lev, st_fz, st_lg, meta)
        if gates:
            # the flows of the classes whose level moved change rate
            for q in range(meta[_NRR]):
                c = chl[q]
                for i in range(hs[c], hs[c] + hn[c]):
                    _touch(hf[i], bmeta, fsptr, fsl, slink, spos, qcand, qdm, qdl)
            t_gate = _crossings(t, tol, False, size, fw, fcls, rho, V, tV, fkey, bth, bmeta, sptr,
                                sflow, scoef, sdone, qptr, qfifo, qn, qcand, qT, qdm, qdl, fent,
                                fbase)
    # data sent so far, for the engine
    for f in flows:
        key = fkey[f]
        if key == key:
            c = fcls[f]
            if rho[c] < np.inf:
                got = _clock(c, t, rho, V, tV)
                sent[f] = min(max(size[f] - fw[f] * (key - got), 0.0), size[f])
    return t, thr, nd, npc, nlv, nev, reason
