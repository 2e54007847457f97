"""A lower bound over completion orders, by dynamic programming over sets of coflows.

Whatever the schedule, sort its coflows by completion time, ``pi(1), pi(2), ...``. The
``k``-th to complete is the last of the set ``S_k = {pi(1), ..., pi(k)}`` to complete,
so ``C_pi(k) >= f(S_k)`` for any lower bound ``f(S)`` on the time the last coflow of
``S`` completes. Hence

    sum_k w_k C_k  >=  min over orders pi of  sum_k w_pi(k) f(S_k),

and the minimum over orders is a shortest path over the ``2^K`` sets (add one coflow at
a time): ``O(2^K K)`` steps. With ``f`` the single-link makespan bound with releases,

    f(S) = max( max_{k in S} e_k,
                max over links l and release thresholds rho of
                    rho + (work of S on l available at or after rho) / c_l ),

(``e_k`` the coflow's release plus isolation time, :func:`~coflowopt.bounds.simple.
earliest_completion`; only thresholds with such work count), this is the optimum of
concurrent open shop (each flow needs one port) when every release is 0: a permutation
schedule is optimal there and completes each coflow at ``f`` of its prefix. On any
fabric (a flow crossing several links at once), with releases, per-flow delays and
dependencies (which only constrain the orders and the schedules further), it is a
relaxation. ``coflowopt bound --method subsets`` reports it (:func:`subsets_bound`).

It grows as ``2^K``: :func:`subset_table` refuses more than :data:`MAX_COFLOWS`
coflows. The branch and bound of ``method="exact"`` uses it at every node (the bound of
the orders that start with the node's completions) and takes the order it prefers as a
starting order. It is not in the literature this project follows (the event-order and
interval LPs are); it is the textbook shortest-path view of the permutation problem,
``F(S) = min_j F(S - j) + w_j f(S)``, with ``f`` a lower bound instead of the exact
makespan of ``S``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from .._budget import TimeBudget, now
from ..errors import InstanceError
from ..instance import Instance
from ..result import Result, Status
from ._round import rounded_down
from .simple import earliest_completion

__all__ = ["MAX_COFLOWS", "MAX_ENTRIES", "SubsetTable", "fits", "subset_table", "subsets_bound", "work"]

MAX_COFLOWS = 20
"""Most coflows the table is built for (``2^20`` sets)."""

MAX_ENTRIES = 1 << 25
"""Most (set, link) entries of the work sums held at once (256 MiB; 20 coflows over 32
links): with more the table is not built."""

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True, eq=False)
class SubsetTable:
    """``f`` and the cost-to-go ``q`` over every set of coflows (a set is a bit mask).

    ``f[S]``: a lower bound on the time the last coflow of ``S`` completes; ``q[S]``: the
    least ``sum w_k f(...)`` of the coflows outside ``S`` completing after ``S``, over
    their orders. ``q[0]`` is the bound. Times in the unit the table was built with.
    """

    f: FloatArray
    q: FloatArray
    weight: FloatArray
    operations: int
    """Roundings in a value of the table (for :func:`._round.rounded_down`): a link's work
    sums up to every flow, a threshold adds one, and an order adds a product and a sum per
    coflow."""

    @property
    def bound(self) -> float:
        """The bound: the least ``sum w_k f(S_k)`` over every order, rounded down."""
        return self.rest(0, 0.0)

    def step(self, mask: int, k: int, after: float = 0.0) -> float:
        """``w_k max(f(S + k), after)``: the least cost of coflow ``k`` completing next after
        ``mask``, no earlier than ``after`` (a release known to come before it)."""
        return float(self.weight[k] * max(float(self.f[mask | (1 << k)]), after))

    def rest(self, mask: int, cost: float) -> float:
        """The bound of the orders whose first completions are ``mask``, at ``cost`` so far
        (the sum of :meth:`step` along them)."""
        return self._down(cost + float(self.q[mask]))

    def floor(self, mask: int) -> float:
        """``f`` of the set ``mask``, rounded down: no schedule completes the last coflow of
        that set earlier."""
        return self._down(float(self.f[mask]))

    def _down(self, value: float) -> float:
        """A value of the table (a sum of positive terms) less its rounding."""
        return rounded_down(value, value, self.operations)

    def order(self) -> list[int]:
        """An order that attains the bound (the shortest path)."""
        K = self.weight.size
        mask, out = 0, []
        for _ in range(K):
            k = min((j for j in range(K) if not mask >> j & 1),
                    key=lambda j: self.step(mask, j) + float(self.q[mask | 1 << j]))
            out.append(k)
            mask |= 1 << k
        return out


def subsets_bound(inst: Instance, *, time_limit: float | None = None) -> Result:
    """The least ``sum w_k f(S_k)`` over every completion order (see the module) as a lower
    bound; ``info["order"]``: an order that attains it (coflow ids). Refuses instances
    with more than :data:`MAX_COFLOWS` coflows (or :data:`MAX_ENTRIES` set-link entries);
    at the time limit, status ``TIME_LIMIT`` without a bound."""
    start = now()
    K = inst.num_coflows
    if K == 0:
        return Result(Status.BOUND, math.nan, 0.0, 0.0, "subsets")
    if not fits(inst):
        raise InstanceError(
            f"the bound over sets of coflows builds all 2^K sets: at most {MAX_COFLOWS} "
            f"coflows and 2^K x links <= {MAX_ENTRIES:,} (this instance: {K} coflows, "
            f"{inst.fabric.num_links} links); use another bound")
    table = subset_table(inst, budget=TimeBudget(time_limit))
    if table is None:
        return Result(Status.TIME_LIMIT, math.nan, math.nan, now() - start, "subsets")
    return Result(Status.BOUND, math.nan, table.bound, now() - start, "subsets",
                  info={"order": [inst.ids[k] for k in table.order()]})


def work(inst: Instance) -> int:
    """The (set, link) sums :func:`subset_table` takes: ``2^K`` sets times the links, once
    per distinct flow availability time (its cost grows with this)."""
    thresholds = int(np.unique(inst.flow_release).size) if inst.num_flows else 0
    return (1 << inst.num_coflows) * max(inst.fabric.num_links, 1) * max(thresholds, 1)


def fits(inst: Instance, max_coflows: int = MAX_COFLOWS) -> bool:
    """Whether :func:`subset_table` builds a table for ``inst``."""
    K = inst.num_coflows
    return K <= max_coflows and (1 << K) * max(inst.fabric.num_links, 1) <= MAX_ENTRIES


def subset_table(inst: Instance, time_unit: float = 1.0, *, max_coflows: int = MAX_COFLOWS,
                 budget: TimeBudget | None = None) -> SubsetTable | None:
    """The table of ``inst`` in ``time_unit``, or None when it does not :func:`fits` or the
    ``budget`` runs out first."""
    K = inst.num_coflows
    L = int(inst.fabric.num_links)
    if not fits(inst, max_coflows):
        return None
    N = 1 << K
    f = np.zeros(N)
    # the largest earliest completion of each set, one coflow (bit) at a time
    e = earliest_completion(inst) / time_unit
    for k in range(K):
        f[1 << k: 2 << k] = np.maximum(f[: 1 << k], e[k])
    A = inst.routes.tocoo()
    flow, link = np.asarray(A.row, np.int64), np.asarray(A.col, np.int64)
    rel = inst.flow_release[flow] / time_unit
    time_on = inst.flow_size[flow] * A.data / inst.fabric.capacity[link] / time_unit
    co = inst.flow_coflow[flow]
    sums = np.empty((N, L))  # each set's work on each link available at or after rho
    for rho in np.unique(rel):
        late = rel >= rho
        load = np.zeros((K, L))
        np.add.at(load, (co[late], link[late]), time_on[late])
        sums[0] = 0.0
        for k in range(K):
            np.add(sums[: 1 << k], load[k], out=sums[1 << k: 2 << k])
        most = sums.max(axis=1)
        np.maximum(f, np.where(most > 0.0, rho + most, 0.0), out=f)
        if budget is not None and budget.expired():
            return None
    w = np.asarray(inst.weight, dtype=np.float64)
    q = _cost_to_go(f, w)
    if budget is not None and budget.expired():
        return None
    width = int(np.bincount(link, minlength=L).max(initial=0))
    return SubsetTable(f=f, q=q, weight=w, operations=width + 4 * K + 8)


def _cost_to_go(f: FloatArray, w: FloatArray) -> FloatArray:
    """``q[S] = min over k not in S of w_k f(S + k) + q(S + k)``, ``q[all] = 0``: the sets
    taken by number of members, largest first."""
    K = w.size
    N = 1 << K
    q = np.full(N, np.inf)
    q[N - 1] = 0.0
    sets = np.arange(N, dtype=np.int64)
    members = np.zeros(N, dtype=np.int64)
    for k in range(K):
        members += (sets >> k) & 1
    by_size = np.argsort(members, kind="stable")
    bounds = np.searchsorted(members[by_size], np.arange(K + 2))
    for c in range(K - 1, -1, -1):
        S = by_size[bounds[c]: bounds[c + 1]]
        best = q[S]
        for k in range(K):
            out = S[((S >> k) & 1) == 0]
            T = out | (1 << k)
            pos = np.searchsorted(S, out)
            best[pos] = np.minimum(best[pos], w[k] * f[T] + q[T])
        q[S] = best
    return q
