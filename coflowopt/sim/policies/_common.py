"""Building blocks shared by the policies: route classes and the allocation calls.

Every rate computation goes through :mod:`coflowopt.alloc` (``max_min``,
``greedy``, ``madd``); the helpers here only shape the inputs. Flows that
cross the same links are interchangeable for max-min fairness, so
:func:`max_min_flows` solves the problem once per *route class* (weighted by
the number of flows in it) and hands every flow its per-unit share: the
result is the same as per-flow max-min, on a much smaller problem. On networks
the classes' rows go to the compiled progressive filling by index, and MADD to
:func:`coflowopt.kernels.rates.madd_csr` on the flows' rows of the route incidence
(the computations of ``alloc.max_min`` and ``alloc.madd``, without building
submatrices).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from ... import alloc
from ...kernels.maxmin import progressive_filling
from ...kernels.rates import madd_csr
from ..engine import SimView

__all__ = [
    "RouteClasses",
    "StrictMemo",
    "coflow_order",
    "greedy_flows",
    "madd_flows",
    "max_min_flows",
    "remaining_gamma",
    "saturated",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

SAT = 1e-9
"""A link whose residual is below ``SAT`` times its capacity counts as saturated."""


@dataclass(slots=True)
class StrictMemo:
    """The last strict-priority filling on a network (:func:`._queues.strict_rates`), from
    which the next resumes at its first changed group: its groups (``flows`` cut at
    ``gptr``), rates ``x``, the residual it left and its undo log (the arguments ``lptr``,
    ``alv``, ``log_k``, ``log_r`` of :func:`coflowopt.sim.kernels.queues.strict_fill`),
    for the capacities ``cap`` and the route incidence ``routes`` it had. ``cap`` None:
    nothing to resume from. The route classes and ``SAT``, which the filling also reads,
    are fixed for a run (the memo lives on the run's :class:`RouteClasses`)."""

    cap: FloatArray | None = None
    routes: IntArray | None = None
    flows: IntArray = field(default_factory=lambda: np.zeros(0, np.int64))
    gptr: IntArray = field(default_factory=lambda: np.zeros(1, np.int64))
    x: FloatArray = field(default_factory=lambda: np.zeros(0))
    residual: FloatArray = field(default_factory=lambda: np.zeros(0))
    lptr: IntArray = field(default_factory=lambda: np.zeros(1, np.int64))
    alv: IntArray = field(default_factory=lambda: np.zeros(1, np.int64))
    log_k: IntArray = field(default_factory=lambda: np.zeros(0, np.int64))
    log_r: FloatArray = field(default_factory=lambda: np.zeros(0))


@dataclass(frozen=True, slots=True)
class RouteClasses:
    """Flows grouped by route: ``of[f]`` is the class of flow ``f``."""

    of: IntArray
    usage: sp.csr_array
    """Classes x links incidence (one representative route per class)."""
    split: int | None = None
    """Two-link fabrics where every first link lies below ``split`` and every
    second link at or above it (the big switch): max-min then goes straight to
    :func:`coflowopt.alloc.max_min_bipartite_levels`."""
    slot: IntArray = field(default_factory=lambda: np.zeros(0, np.int64))
    """Scratch of the progressive filling: one ``-1`` per link."""
    count_scratch: FloatArray = field(default_factory=lambda: np.zeros(0))
    """Scratch of the strict-priority kernel: one ``0.0`` per class."""
    link_scratch: FloatArray = field(default_factory=lambda: np.zeros(0))
    """Scratch of the strict-priority kernel: one ``0.0`` per link."""
    strict: StrictMemo = field(default_factory=StrictMemo)
    """The strict-priority kernel's last filling, to resume from."""

    @classmethod
    def build(cls, view: SimView) -> RouteClasses:
        A = view.routes
        F = view.num_flows
        slot = np.full(view.num_links, -1, np.int64)
        if F == 0:
            return cls(np.zeros(0, np.int64), sp.csr_array((0, view.num_links)), slot=slot,
                       link_scratch=np.zeros(view.num_links))
        split = None
        if view.two_link:
            key = view.link_a * view.num_links + view.link_b
            _, first, of = np.unique(key, return_index=True, return_inverse=True)
            s = int(view.link_a.max()) + 1
            if int(view.link_b.min()) >= s:
                split = s
        else:
            _, first, of = np.unique(view.route_keys(), return_index=True, return_inverse=True)
        u = A[np.asarray(first)]
        u = sp.csr_array((np.ascontiguousarray(u.data, dtype=np.float64),
                          u.indices.astype(np.int64), u.indptr.astype(np.int64)), shape=u.shape)
        return cls(np.asarray(of, np.int64).reshape(-1), u, split, slot, np.zeros(u.shape[0]),
                   np.zeros(view.num_links))

    @property
    def count(self) -> int:
        return int(self.usage.shape[0])


def saturated(residual: FloatArray, capacity: FloatArray) -> npt.NDArray[np.bool_]:
    return residual <= SAT * capacity


def max_min_flows(
    view: SimView,
    classes: RouteClasses,
    flows: IntArray,
    capacity: FloatArray,
    weights: FloatArray | None = None,
) -> FloatArray:
    """Per-flow (weighted) max-min fair rates of ``flows`` within ``capacity``."""
    if flows.size == 0:
        return np.zeros(0)
    if classes.split is not None:
        # the big switch: per-pair weights and the water levels of alloc.max_min's
        # bipartite method, without building a usage matrix
        s = classes.split
        R = view.num_links - s
        a = view.link_a[flows]
        b = view.link_b[flows] - s
        W = np.bincount(a * R + b, weights, minlength=s * R).reshape(s, R)
        lam_l, lam_r = alloc.max_min_bipartite_levels(W, capacity[:s], capacity[s:])
        level = np.minimum(lam_l[a], lam_r[b])
        level = np.where(np.isfinite(level), np.maximum(level, 0.0), 0.0)
        return level if weights is None else level * weights
    c = classes.of[flows]
    wsum = np.bincount(c, weights, minlength=classes.count).astype(np.float64)  # (counts: int)
    act = np.flatnonzero(wsum)
    # progressive filling (alloc.max_min's general method) on the classes' rows by index
    u = classes.usage
    x = progressive_filling(u.indptr, u.indices, u.data, act, np.ascontiguousarray(capacity, float),
                            wsum[act], np.full(act.size, np.inf), classes.slot)
    unit = np.zeros(classes.count)
    unit[act] = x / wsum[act]
    r = unit[c]
    if weights is not None:
        r = r * weights
    return r


def greedy_flows(view: SimView, flows: IntArray, capacity: FloatArray) -> FloatArray:
    """Strict-priority greedy rates for ``flows`` listed first to last."""
    if flows.size == 0:
        return np.zeros(0)
    return alloc.greedy(view.usage(flows), capacity, np.arange(flows.size))


def madd_flows(
    view: SimView, flows: IntArray, remaining: FloatArray, capacity: FloatArray
) -> tuple[FloatArray, float]:
    """MADD rates of one coflow's flows on the residual ``capacity``.

    Links with a residual below :data:`SAT` times their full capacity count as
    full, so a coflow that needs one of them gets nothing (Varys' simulator
    skips such coflows rather than crawl at a vanishing rate).
    """
    cap = np.where(saturated(capacity, view.capacity), 0.0, capacity)
    x = np.empty(flows.size)
    # alloc.madd's computation on the flows' rows of the incidence, without slicing it
    gamma = madd_csr(*view.route_csr, np.ascontiguousarray(flows, dtype=np.int64),
                     np.ascontiguousarray(remaining, dtype=np.float64), cap, x)
    return x, float(gamma)


def remaining_gamma(view: SimView, flows: IntArray, remaining: FloatArray) -> float:
    """Isolation time of the given remaining data on the full fabric (Eq. 4.1)."""
    load = view.link_sum(flows, remaining)
    return float((load / view.capacity).max(initial=0.0))


def coflow_order(keys: list[float], ks: list[int]) -> list[int]:
    """Coflows sorted by key; ties keep the given (admission) order."""
    idx = sorted(range(len(ks)), key=lambda i: keys[i])
    return [ks[i] for i in idx]
