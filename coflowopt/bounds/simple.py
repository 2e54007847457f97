"""Closed-form lower bounds: isolation and single-machine bounds per link.

See ``models/bound-isolation.md`` and ``models/bound-port.md``.
"""

from __future__ import annotations

import heapq
import math

import numpy as np
import numpy.typing as npt

from .._budget import now
from ..errors import CoflowoptError
from ..instance import Instance
from ..result import Result, Status
from ._round import rounded_down

__all__ = [
    "check_objective_range",
    "completion_caps",
    "earliest_completion",
    "isolation_bound",
    "makespan_bound",
    "port_bound",
    "sequential_completion",
    "single_machine_bound",
]

FloatArray = npt.NDArray[np.float64]


def earliest_completion(inst: Instance) -> FloatArray:
    """``r_k + Gamma_k``, strengthened for per-flow delays.

    With delays, a coflow also cannot finish before ``rho + (load released
    at or after rho on a link) / capacity`` for every release threshold
    ``rho`` and link. This covers each flow alone too: with ``rho`` its own
    release, the load on each of its links is at least ``size A_fl``, so the
    coflow ends no earlier than ``release + max_l size A_fl / c_l``, the time
    the flow takes alone (under spray ``A_fl < 1``: the slowest link of the path
    need not be its bottleneck, so ``size / min_l c_l`` is no bound).
    """
    base = inst.release + inst.gamma
    if not inst.is_multi_wave:
        return base
    out = base.copy()
    cap = inst.fabric.capacity
    routes = inst.routes
    for k in range(inst.num_coflows):
        sl = inst.flows_of(k)
        rel = inst.flow_release[sl]
        size = inst.flow_size[sl]
        sub = routes[sl]
        for rho in np.unique(rel):
            late = rel >= rho
            load = sub[late].T @ size[late]
            out[k] = max(out[k], float(rho + (load / cap).max()))
    return out


def makespan_bound(inst: Instance) -> float:
    """A lower bound on the makespan: no schedule ends before ``rho + (load released at or
    after rho on a link) / capacity`` for any link and release time ``rho`` (flows cannot
    run before their release), nor before any coflow's earliest completion."""
    if inst.num_flows == 0:
        return 0.0
    A = inst.routes.tocoo()
    f, link = np.asarray(A.row, np.int64), np.asarray(A.col, np.int64)
    rel = inst.flow_release[f]
    time_on = inst.flow_size[f] * A.data / inst.fabric.capacity[link]
    order = np.lexsort((-rel, link))  # per link, latest release first
    link, rel, time_on = link[order], rel[order], time_on[order]
    total = np.cumsum(time_on)
    first = np.searchsorted(link, link, side="left")
    before = np.concatenate([[0.0], total])[first]
    # each entry: its release plus the work on its link released no earlier (ties: the last
    # of them counts all, and dominates the others)
    late = float((rel + (total - before)).max())
    return max(late, float(earliest_completion(inst).max()))


def sequential_completion(inst: Instance) -> FloatArray:
    """Completion times of a trivially feasible schedule: one coflow at a time.

    Coflows in release order; each waits for the previous one and for all
    its own flows, then runs alone at MADD rates for ``Gamma_k``. Its value
    bounds the optimum from above, which caps every completion time that an
    optimal schedule can have (used to give LP columns finite bounds).
    """
    order = np.argsort(inst.release, kind="stable")
    comp = np.zeros(inst.num_coflows)
    t = 0.0
    for k in order:
        sl = inst.flows_of(int(k))
        avail = float(inst.flow_release[sl].max())
        t = max(t, avail) + float(inst.gamma[k])
        comp[k] = t
    return comp


def completion_caps(inst: Instance) -> FloatArray:
    """No optimal schedule completes coflow ``k`` after ``caps[k]``.

    ``w_k C_k <= OPT - sum_{j != k} w_j e_j <= V - sum_{j != k} w_j e_j`` with
    ``V`` the value of :func:`sequential_completion` and ``e`` the earliest
    completion times.
    """
    w = inst.weight
    e = earliest_completion(inst)
    V = float(np.dot(w, sequential_completion(inst)))
    rest = float(np.dot(w, e)) - w * e
    with np.errstate(over="ignore"):  # a weight near 0 (1e-320): no cap, inf
        return np.maximum((V - rest) / w, e) * (1 + 1e-9) + 1e-12


def check_objective_range(inst: Instance, what: str) -> None:
    """Raise when ``sum_k w_k C_k`` overflows float64 even at its least (``C_k = e_k``)."""
    with np.errstate(over="ignore", invalid="ignore"):
        least = float(np.dot(inst.weight, earliest_completion(inst)))
    if not np.isfinite(least):
        raise CoflowoptError(
            f"{what} cannot evaluate this instance: the weighted completion times overflow "
            f"float64 (largest weight {float(inst.weight.max()):.3g}); rescale the weights")


def isolation_bound(inst: Instance, *, time_limit: float | None = None) -> Result:
    """``sum_k w_k (r_k + Gamma_k)``: each coflow alone on the fabric (dissertation Eq. 4.1)."""
    start = now()
    e = earliest_completion(inst)
    val = float(np.dot(inst.weight, e))
    return Result(Status.BOUND, math.nan, rounded_down(val, val, _operations(inst)), now() - start,
                  "isolation", info={"earliest": e})


def _operations(inst: Instance) -> int:
    """Roundings in a closed-form bound's value (for :func:`._round.rounded_down`): a load sums
    a coflow's flows, a time takes a division and a release, the total one product and one
    sum per coflow, and a single-machine schedule two steps per coflow."""
    width = int(np.diff(inst.ptr).max(initial=0))
    return width + 3 * inst.num_coflows + 8


def _magnitude(inst: Instance, earliest: FloatArray) -> float:
    """A magnitude no term of a closed-form bound exceeds, twice (for the sums and differences
    taken of them): each coflow's weight times its release plus every coflow's time alone,
    by which a schedule that never idles while the coflow waits has completed it.
    ``earliest``: :func:`earliest_completion`."""
    if inst.num_coflows == 0:
        return 0.0
    work = math.fsum(earliest - inst.release)
    return 2.0 * math.fsum(inst.weight * (inst.release + work))


def single_machine_bound(
    p: FloatArray, r: FloatArray, w: FloatArray, *, unweighted: bool | None = None
) -> float:
    """Lower bound on ``min sum w_j C_j`` of ``1 | r_j, pmtn |`` (jobs with ``p_j > 0``).

    Equal weights: the exact optimum, by shortest remaining processing time
    (SRPT is optimal for ``1 | r_j, pmtn | sum C_j``). Otherwise Goemans'
    bound ``sum w_j (M_j + p_j / 2)`` with ``M_j`` the mean busy time of job
    ``j`` in the preemptive WSPT schedule (largest ``w_j / p_j`` among the
    available jobs first), which minimises ``sum w_j M_j`` over all
    preemptive schedules, while ``C_j >= M_j + p_j / 2`` in every schedule.
    """
    n = p.size
    if n == 0:
        return 0.0
    if unweighted is None:
        unweighted = bool(np.all(w == w[0]))
    order = np.argsort(r, kind="stable")
    # priority: SRPT uses remaining time (changes), WSPT uses the fixed ratio
    rem = p.astype(np.float64).copy()
    busy = np.zeros(n)  # mean busy time: integral of t over the job's processing, over p
    comp = np.zeros(n)
    heap: list[tuple[float, int]] = []
    t = float(r[order[0]])
    i = 0
    while i < n or heap:
        if not heap:
            t = max(t, float(r[order[i]]))
        while i < n and r[order[i]] <= t:
            j = int(order[i])
            key = rem[j] if unweighted else -w[j] / p[j]
            heapq.heappush(heap, (key, j))
            i += 1
        key, j = heapq.heappop(heap)
        nxt = float(r[order[i]]) if i < n else math.inf
        run = min(rem[j], nxt - t)
        busy[j] += (run / p[j]) * (t + run / 2)  # its mean busy time (fraction first: 1e160^2)
        rem[j] -= run
        t += run
        if rem[j] <= 1e-12 * p[j]:
            comp[j] = t
        else:
            heapq.heappush(heap, (rem[j] if unweighted else key, j))
    if unweighted:
        return float(math.fsum(w * comp))
    return float(math.fsum(w * (busy + p / 2)))


def port_bound(inst: Instance, *, time_limit: float | None = None) -> Result:
    """Largest over links of a single-machine bound on that link plus isolation elsewhere.

    On link ``l`` the coflows that use it are jobs with processing time
    ``load / capacity``, release ``r_k`` and weight ``w_k``; the link's
    service is a preemptive single-machine schedule of them (fluid sharing
    only delays completions), so :func:`single_machine_bound` bounds their
    part of the objective. Coflows that do not use ``l`` add
    ``w_k (r_k + Gamma_k)``.
    """
    start = now()
    e = earliest_completion(inst)
    w = inst.weight
    v = inst.load / inst.fabric.capacity
    total_iso = float(np.dot(w, e))
    best, best_link = -math.inf, -1
    unweighted = bool(np.all(w == w[0])) if w.size else True
    for lk in range(v.shape[1]):
        on = np.flatnonzero(v[:, lk] > 0)
        if on.size == 0:
            continue
        sm = single_machine_bound(v[on, lk], inst.release[on], w[on], unweighted=unweighted)
        part = float(np.dot(w[on], e[on]))
        val = max(sm, part) + total_iso - part
        if val > best:
            best, best_link = val, lk
        if time_limit is not None and now() - start > time_limit:
            break
    if best_link < 0:
        best = total_iso
    best = rounded_down(float(best), _magnitude(inst, e), _operations(inst))
    return Result(
        Status.BOUND, math.nan, best, now() - start, "port",
        info={"link": inst.fabric.link_name(best_link) if best_link >= 0 else None,
              "rule": "SRPT (exact, equal weights)" if unweighted else
              "preemptive WSPT mean busy time (Goemans)"},
    )
