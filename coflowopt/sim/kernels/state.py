"""The engine's per-flow bookkeeping when a policy sets new rates, compiled.

:meth:`coflowopt.sim.engine._Engine.apply` runs at every decision of the
policies that return rates (the Varys family, ``fair``, ``sincronia``,
...), over every flow the policy lists, often tens of thousands. These
functions do that work in one pass: the same arithmetic, in the same
order, as the NumPy expressions they replace, so results are bitwise
those of the reference formulas documented on each.
"""

from __future__ import annotations

import numpy as np

from ..._jit import njit

__all__ = ["any_change", "refresh_finish", "remaining_now", "sent_now", "set_rates"]


@njit
def any_change(f, r, rate):  # type: ignore[no-untyped-def]
    """True when some ``r[i]`` differs from ``rate[f[i]]``."""
    for i in range(f.size):
        if r[i] != rate[f[i]]:
            return True
    return False


@njit
def set_rates(f, r, t, rate, sent, tsync, size, fco, cf_rate, start, fin_pad, bmin, bits, acc, mark):  # type: ignore[no-untyped-def]
    """Flows ``f`` get rates ``r`` at time ``t``; returns the coflows whose rates changed.

    For each flow whose rate changes: ``sent += rate * (t - tsync)``,
    ``tsync = t``, the new rate, its predicted completion
    ``t + max(size - sent, 0) / r`` (at rate 0: ``t`` if nothing is left, else ``inf``)
    in ``fin_pad`` with
    the per-block minima ``bmin`` (blocks of ``2**bits`` flows) kept exact,
    and its coflow's start time if it starts now. Coflow rates change by
    the sum of the flows' changes, summed in the order of ``f``
    (``np.bincount``). ``acc`` (zeros) and ``mark`` (False) are per-coflow
    scratch, returned clean.
    """
    n = f.size
    touched = np.empty(n, np.int64)
    nt = 0
    rise = np.empty(n, np.int64)
    nr = 0
    for i in range(n):
        j = f[i]
        cur = rate[j]
        x = r[i]
        if x == cur:
            continue
        sent[j] += cur * (t - tsync[j])
        tsync[j] = t
        k = fco[j]
        if not mark[k]:
            mark[k] = True
            touched[nt] = k
            nt += 1
        acc[k] += x - cur
        rate[j] = x
        if x > 0:
            left = size[j] - sent[j]
            if left < 0.0:
                left = 0.0
            new = t + left / x
            if start[k] == np.inf:
                start[k] = t
        elif size[j] - sent[j] <= 0.0:
            new = t  # nothing left (its last bytes ran at its last rate): done now
        else:
            new = np.inf
        old = fin_pad[j]
        b = j >> bits
        # a block's minimum can only rise if the flow holding it got later
        if new > old and old <= bmin[b]:
            rise[nr] = b
            nr += 1
        fin_pad[j] = new
        if new < bmin[b]:
            bmin[b] = new
    width = 1 << bits
    for q in range(nr):
        b = rise[q]
        lo = b << bits
        m = fin_pad[lo]
        for j in range(lo + 1, lo + width):
            if fin_pad[j] < m:
                m = fin_pad[j]
        bmin[b] = m
    for q in range(nt):
        k = touched[q]
        cf_rate[k] += acc[k]
        acc[k] = 0.0
        mark[k] = False
    return touched[:nt]


@njit
def refresh_finish(ks, ptr, status, fin, rate, cf_active, cf_left, cf_finish, cf_lastrun):  # type: ignore[no-untyped-def]
    """For each coflow in ``ks``: the last predicted completion among its running flows
    (``cf_lastrun``, ``-inf`` if none runs) and its own predicted completion
    (``cf_finish``: that maximum when every flow is admitted and runs, else ``inf``).
    """
    for q in range(ks.size):
        k = ks[q]
        last = -np.inf
        top = -np.inf
        act = False
        every = True
        for j in range(ptr[k], ptr[k + 1]):
            if status[j] != 1:
                continue
            act = True
            v = fin[j]
            if v > top:
                top = v
            if rate[j] > 0 or v != np.inf:  # running, or done now with nothing left
                if v > last:
                    last = v
            else:
                every = False
        if not act:
            cf_finish[k] = np.inf
            cf_lastrun[k] = -np.inf
            continue
        cf_lastrun[k] = last
        cf_finish[k] = top if cf_active[k] == cf_left[k] and every else np.inf


@njit
def sent_now(f, t, sent, rate, tsync):  # type: ignore[no-untyped-def]
    """Bytes flows ``f`` have received by time ``t``: ``sent + rate * (t - tsync)``."""
    out = np.empty(f.size)
    for i in range(f.size):
        j = f[i]
        out[i] = sent[j] + rate[j] * (t - tsync[j])
    return out


@njit
def remaining_now(f, t, size, sent, rate, tsync):  # type: ignore[no-untyped-def]
    """Bytes flows ``f`` still have to receive at time ``t``: ``max(size - sent_now, 0)``."""
    out = np.empty(f.size)
    for i in range(f.size):
        j = f[i]
        v = size[j] - (sent[j] + rate[j] * (t - tsync[j]))
        out[i] = v if v > 0.0 else 0.0
    return out
