"""Allocations of links to coflows, and the metrics of chapter 7 computed from them.

An allocation ``a^i_k`` is the fraction of link ``i`` a mechanism gives to
coflow ``k``. What the coflow gets out of it depends on its *true*
correlation vector, which may differ from the one it reported:

- progress ``P_k = min_{i: d^i_k > 0} a^i_k / d^i_k`` (capped at its bound);
  ``d_k`` is always scaled to a largest entry of 1, so for a bounded
  demand ``b_k`` (``d_k = b_k / max b_k``, bound ``max b_k``) progress is
  the coflow's dominant share, the quantity multi-round DRF equalises,
  not the satisfaction ratio ``min a/b`` that §7.3.2's formula gives for a
  vector with every entry below 1 (§7.6.3): a satisfied coflow with demand
  ``<1/4, 1/8>`` has progress 1/4 here, 1 by that reading, and it sets the
  isolation guarantee ``min_k P_k`` accordingly;
- consumption ``c^i_k``: an elastic coflow uses its whole allocation on the
  links it sends on (never more than its bound); an inelastic one uses
  exactly ``P_k d^i_k`` (§7.4.4);
- isolation guarantee ``min_k P_k / w_k`` (``min_k P_k`` with unit weights);
- utilization ``sum_i sum_k c^i_k`` (Table 7.1), also as a fraction of the
  total capacity;
- min-cut proportionality (§7.5.3): a coflow's useful bandwidth is its
  progress times the size of its minimum cut, the smaller of the sums of its
  uplink and of its downlink demands, in absolute units; the allocation is min-cut proportional when every
  coflow has the same (weighted) progress.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import InstanceError
from ._arith import as_float
from .problem import FairnessProblem, check_problem

__all__ = [
    "AllocationViolation",
    "FairAllocation",
    "FairnessReport",
    "check_allocation",
    "consumption",
    "evaluate",
    "progress",
]


@dataclass(frozen=True, slots=True, eq=False)
class FairAllocation:
    """What a mechanism allocated, for the vectors it was told (``problem``).

    ``allocation`` is the final allocation (guarantees plus any spare);
    ``guarantee`` the minimum allocation of stage 1 (equal to ``allocation``
    for one-stage mechanisms). ``exact`` is True when the entries are
    ``Fraction`` objects that were computed or certified exactly.
    """

    mechanism: str
    problem: FairnessProblem
    allocation: npt.NDArray[Any]
    guarantee: npt.NDArray[Any]
    exact: bool = False
    info: Mapping[str, Any] = field(default_factory=dict)

    def __repr__(self) -> str:
        """One line (the dataclass's own printed both matrices)."""
        return (f"FairAllocation(mechanism={self.mechanism!r}, problem={self.problem!r}, "
                f"exact={self.exact})")

    def __post_init__(self) -> None:
        shape = (self.problem.num_coflows, self.problem.num_links)
        for name in ("allocation", "guarantee"):
            arr = getattr(self, name)
            if arr.shape != shape:
                raise ValueError(f"{name} has shape {arr.shape}, expected {shape}")
            arr.setflags(write=False)

    def report(self, truth: FairnessProblem | None = None) -> FairnessReport:
        """Metrics of this allocation under the true vectors (default: the reported ones)."""
        return evaluate(self, truth)


def progress(
    allocation: npt.NDArray[Any], truth: FairnessProblem
) -> npt.NDArray[Any]:
    """``P_k = min(bound_k, min_{i: d^i_k > 0} a^i_k / d^i_k)`` under the true vectors."""
    truth = check_problem(truth, "progress")
    d = truth.vectors
    if np.shape(allocation) != d.shape:
        raise InstanceError(f"the allocation must have the problem's shape {d.shape} (coflows x "
                            f"links), got {np.shape(allocation)}")
    used = as_float(d) > 0
    safe = np.where(used, d, 1)
    ratio = np.where(used, allocation / safe, math.inf)
    p = ratio.min(axis=1)
    return np.minimum(p, truth.bounds) if truth.bounded else p


def consumption(
    allocation: npt.NDArray[Any], truth: FairnessProblem, prog: npt.NDArray[Any] | None = None
) -> npt.NDArray[Any]:
    """What each coflow actually uses of each link (see the module docstring)."""
    d = check_problem(truth, "consumption").vectors
    p = progress(allocation, truth) if prog is None else prog
    used = as_float(d) > 0
    elastic_use = np.where(used, allocation, 0 * allocation)
    if truth.bounded:
        elastic_use = np.minimum(elastic_use, truth.bounds[:, None])
    inelastic_use = p[:, None] * d
    return np.where(truth.elastic[:, None], elastic_use, inelastic_use)


@dataclass(frozen=True, slots=True)
class FairnessReport:
    """The chapter-7 metrics of one allocation (arrays indexed by coflow / link)."""

    progress: npt.NDArray[Any]
    guaranteed_progress: npt.NDArray[Any]
    consumption: npt.NDArray[Any]
    isolation_guarantee: Any
    """``min_k P_k / w_k`` (``min_k P_k`` with unit weights)."""
    utilization: Any
    """``sum_i sum_k c^i_k``, in units of links (Table 7.1)."""
    utilization_fraction: float
    """Consumed bandwidth over total capacity, weighted by the link capacities."""
    link_usage: npt.NDArray[Any]
    """``sum_k c^i_k`` per link (fraction of the link)."""
    link_allocated: npt.NDArray[Any]
    """``sum_k a^i_k`` per link."""
    dominant_share: npt.NDArray[Any]
    """``max_i c^i_k``: the largest fraction of any link a coflow uses."""
    min_cut: npt.NDArray[np.float64] | None
    """Size of each coflow's minimum cut per unit progress, absolute units: the smaller of
    its summed uplink demands and its summed downlink demands (each side is a cut)."""
    useful_bandwidth: npt.NDArray[np.float64] | None
    """``P_k`` times the min cut: the rate at which the coflow moves its data."""
    min_cut_proportionality: float
    """``min_k (P_k/w_k) / max_k (P_k/w_k)``; 1 means min-cut proportional (§7.5.3)."""
    exact: bool

    def __repr__(self) -> str:
        """One line (the dataclass's own printed every array: 10.8 KB for 40 coflows)."""
        return (f"FairnessReport(coflows={self.progress.size}, links={self.link_usage.size}, "
                f"isolation_guarantee={float(self.isolation_guarantee):.6g}, "
                f"utilization={float(self.utilization):.6g}, "
                f"utilization_fraction={self.utilization_fraction:.6g}, exact={self.exact})")

    def as_dict(self, ids: tuple[str, ...] | None = None) -> dict[str, Any]:
        """Floats for JSON (exact values are in ``exact_values`` as ``p/q`` strings)."""
        out: dict[str, Any] = {
            "isolation_guarantee": float(self.isolation_guarantee),
            "utilization": float(self.utilization),
            "utilization_fraction": float(self.utilization_fraction),
            "min_cut_proportionality": float(self.min_cut_proportionality),
            "progress": as_float(self.progress).tolist(),
            "guaranteed_progress": as_float(self.guaranteed_progress).tolist(),
            "dominant_share": as_float(self.dominant_share).tolist(),
            "link_usage": as_float(self.link_usage).tolist(),
            "link_allocated": as_float(self.link_allocated).tolist(),
            "consumption": as_float(self.consumption).tolist(),
            "exact": self.exact,
        }
        if self.min_cut is not None and self.useful_bandwidth is not None:
            out["min_cut"] = self.min_cut.tolist()
            out["useful_bandwidth"] = self.useful_bandwidth.tolist()
        if ids is not None:
            out["coflows"] = list(ids)
        return out


def evaluate(alloc: FairAllocation, truth: FairnessProblem | None = None) -> FairnessReport:
    """All metrics of ``alloc`` when the coflows' true vectors are ``truth``."""
    if not isinstance(alloc, FairAllocation):
        raise InstanceError(f"evaluate takes a FairAllocation (what drf, hug, allocate, ... "
                            f"return), got {type(alloc).__name__}")
    t = alloc.problem if truth is None else check_problem(truth, "evaluate's truth")
    if (t.num_coflows, t.num_links) != alloc.allocation.shape:
        raise InstanceError("the true problem has a different shape than the allocation")
    a = alloc.allocation
    p = progress(a, t)
    g = progress(alloc.guarantee, t)
    c = consumption(a, t, p)
    usage = c.sum(axis=0)
    cap = t.capacity
    util = usage.sum()
    # weights relative to the largest capacity: sums of capacities near 1e308 overflowed
    # to inf and the fraction read nan
    rel = as_float(cap) / float(as_float(cap).max())  # a problem has at least one link
    frac = float((as_float(usage) * rel).sum() / rel.sum())
    norm = p / t.weights
    ig = norm.min()
    fnorm = as_float(norm)
    top = float(fnorm.max())
    prop = float(fnorm.min() / top) if top > 0 else 1.0
    min_cut = useful = None
    if t.num_ports is not None:
        P = t.num_ports
        dv = as_float(t.vectors) * as_float(cap)[None, :]
        min_cut = np.minimum(dv[:, :P].sum(axis=1), dv[:, P:].sum(axis=1))
        useful = as_float(p) * min_cut
    return FairnessReport(
        progress=p,
        guaranteed_progress=g,
        consumption=c,
        isolation_guarantee=ig,
        utilization=util,
        utilization_fraction=frac,
        link_usage=usage,
        link_allocated=a.sum(axis=0),
        dominant_share=c.max(axis=1),
        min_cut=min_cut,
        useful_bandwidth=useful,
        min_cut_proportionality=prop,
        exact=bool(alloc.exact and t.exact),
    )


@dataclass(frozen=True, slots=True)
class AllocationViolation:
    """One way an allocation breaks the link capacities."""

    kind: str
    message: str
    link: int | None = None
    coflow: int | None = None
    excess: float = 0.0


def check_allocation(
    alloc: FairAllocation, *, tol: float = 1e-9
) -> list[AllocationViolation]:
    """Violations of ``a >= 0`` and ``sum_k a^i_k <= 1`` (empty when feasible).

    Independent of every mechanism: it only sums the matrix. Exact
    allocations are checked with ``tol = 0``.
    """
    if not isinstance(alloc, FairAllocation):
        raise InstanceError(f"check_allocation takes a FairAllocation (what allocate returns), "
                            f"got {type(alloc).__name__}")
    a = alloc.allocation
    exact = alloc.exact
    eps = 0 if exact else tol
    out: list[AllocationViolation] = []
    names = alloc.problem.link_names
    ids = alloc.problem.ids
    fa = as_float(a)
    neg = np.argwhere(fa < -eps)
    for k, i in neg[:20]:
        out.append(
            AllocationViolation(
                "negative",
                f"coflow '{ids[k]}' has allocation {fa[k, i]:.6g} < 0 on link {names[i]}",
                link=int(i),
                coflow=int(k),
                excess=float(-fa[k, i]),
            )
        )
    total = a.sum(axis=0)
    if exact:
        over = [i for i in range(a.shape[1]) if total[i] > 1]
    else:
        over = [int(i) for i in np.flatnonzero(as_float(total) > 1 + eps)]
    for i in over[:20]:
        t = float(total[i])
        out.append(
            AllocationViolation(
                "capacity",
                f"link {names[i]} is allocated {t:.9g} of its capacity (> 1)",
                link=int(i),
                excess=t - 1.0,
            )
        )
    if not np.all(np.isfinite(fa)):
        k, i = (int(x) for x in np.argwhere(~np.isfinite(fa))[0])
        out.append(
            AllocationViolation(
                "not_finite", f"coflow '{ids[k]}' has a non-finite allocation on link {names[i]}",
                link=i, coflow=k,
            )
        )
    return out
